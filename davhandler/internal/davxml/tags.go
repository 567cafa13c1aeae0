package davxml

import (
	"encoding/xml"
	"io"
	"strings"
)

// The namespaces a WebDAV answer declares once on its root element, with
// the prefixes d: and oc:.
const (
	NSDAV = "DAV:"
	NSOC  = "http://owncloud.org/ns"
)

// Writer is where tags are written: a response, or a builder.
type Writer interface {
	io.StringWriter
	io.ByteWriter
}

// Tags are the opening and closing tags of an element, and the element
// empty, built once for a property every response of a listing writes.
type Tags struct{ Open, Close, Empty string }

// TagsOf builds the tags of the element n.
func TagsOf(n xml.Name) Tags {
	var open, close, empty strings.Builder
	WriteOpenTag(&open, n)
	WriteCloseTag(&close, n)
	WriteEmptyElement(&empty, n)
	return Tags{Open: open.String(), Close: close.String(), Empty: empty.String()}
}

// WriteOpenTag writes <n> with the shortest prefix the namespaces allow.
func WriteOpenTag(w Writer, n xml.Name) {
	w.WriteByte('<')
	WriteQName(w, n, true)
	w.WriteByte('>')
}

// WriteCloseTag writes </n>.
func WriteCloseTag(w Writer, n xml.Name) {
	w.WriteString("</")
	WriteQName(w, n, false)
	w.WriteByte('>')
}

// WriteEmptyElement writes <n/>.
func WriteEmptyElement(w Writer, n xml.Name) {
	w.WriteByte('<')
	WriteQName(w, n, true)
	w.WriteString("/>")
}

// WriteQName writes a prefixed element name. Foreign namespaces get the
// prefix "x", declared on the element itself when declare is set (an
// opening tag).
func WriteQName(w Writer, n xml.Name, declare bool) {
	switch n.Space {
	case NSDAV:
		w.WriteString("d:")
	case NSOC:
		w.WriteString("oc:")
	case "":
	default:
		w.WriteString("x:")
		w.WriteString(n.Local)
		if declare {
			w.WriteString(` xmlns:x="`)
			WriteAttr(w, n.Space)
			w.WriteByte('"')
		}
		return
	}
	w.WriteString(n.Local)
}

// appender is a Writer (and an io.Writer) appending to a byte slice.
type appender struct{ b []byte }

// WriteString, WriteByte and Write append to the slice.
func (a *appender) WriteString(s string) (int, error) {
	a.b = append(a.b, s...)
	return len(s), nil
}

func (a *appender) WriteByte(c byte) error {
	a.b = append(a.b, c)
	return nil
}

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}
