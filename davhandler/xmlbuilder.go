package davhandler

import (
	"encoding/xml"
	"strings"
)

// xmlBuilder is a strings.Builder with XML text escaping.
type xmlBuilder struct{ strings.Builder }

// text writes s escaped as XML character data.
func (b *xmlBuilder) text(s string) {
	xml.EscapeText(&b.Builder, []byte(s))
}
