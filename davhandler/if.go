package davhandler

import (
	"errors"
	"net/http"
	"strings"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
)

// ifHeaderOf parses the If header of r (davxml.ParseIf); present=false
// when there is none. Several If lines form one header, as for any
// list-valued field.
func ifHeaderOf(r *http.Request) (ih davxml.IfHeader, present bool, err error) {
	lines := r.Header.Values("If")
	if len(lines) == 0 {
		return davxml.IfHeader{}, false, nil
	}
	ih, err = parseIfHeader(strings.Join(lines, " "))
	return ih, true, err
}

// parseIfHeader parses an If header value: one the grammar refuses is a
// 400.
func parseIfHeader(v string) (davxml.IfHeader, error) {
	ih, err := davxml.ParseIf(v)
	if errors.Is(err, davxml.ErrMalformedIf) {
		return ih, errorf(http.StatusBadRequest, "%s", err.Error())
	}
	return ih, err
}
