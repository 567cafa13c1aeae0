package graph

import (
	"strings"
	"unicode"
)

// slug turns a space name into the last part of a drive alias: lower case,
// runs of anything but letters and digits as one "-", none at either end,
// the way oCIS derives "project/<name>" aliases.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}
