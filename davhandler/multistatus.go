package davhandler

import (
	"bufio"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
)

// multistatus streams a 207 response: each d:response is written as soon as
// it is ready, so memory does not grow with the number of resources.
type multistatus struct {
	w *bufio.Writer
	// missing collects the 404 property names of the current response.
	missing []xml.Name
}

const multistatusOpen = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
	`<d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns">`

// The buffer of a multistatus sizes the writes it makes: a listing's is
// larger, so that a big folder costs fewer writes through the server's
// layers, without a one-resource answer holding as much.
const (
	multistatusBuffer = 32 << 10
	listingBuffer     = 64 << 10
)

// startMultistatus sends the 207 status line and the document head.
func startMultistatus(w http.ResponseWriter) *multistatus {
	return startMultistatusSize(w, multistatusBuffer)
}

// startMultistatusSize is startMultistatus with a buffer of size bytes.
func startMultistatusSize(w http.ResponseWriter, size int) *multistatus {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	ms := &multistatus{w: bufio.NewWriterSize(w, size)}
	ms.w.WriteString(multistatusOpen)
	return ms
}

// close ends the document and flushes it.
func (ms *multistatus) close() error {
	ms.w.WriteString("</d:multistatus>\n")
	return ms.w.Flush()
}

// beginResponse opens a d:response with its href and the 200 propstat.
func (ms *multistatus) beginResponse(href string) {
	ms.beginResponseAt(responseHref{base: href})
}

// beginResponseAt is beginResponse for an href in parts.
func (ms *multistatus) beginResponseAt(href responseHref) {
	ms.w.WriteString("<d:response><d:href>")
	ms.text(href.base)
	if href.segment != "" {
		ms.w.WriteByte('/')
		ms.text(href.segment)
	}
	if href.slash {
		ms.w.WriteByte('/')
	}
	ms.w.WriteString("</d:href>")
	ms.missing = ms.missing[:0]
}

// endResponse closes the d:response, adding the 404 propstat for the names
// collected with notFound.
func (ms *multistatus) endResponse() {
	if len(ms.missing) > 0 {
		ms.w.WriteString("<d:propstat><d:prop>")
		for _, n := range ms.missing {
			ms.emptyElement(n)
		}
		ms.w.WriteString("</d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>")
	}
	ms.w.WriteString("</d:response>")
}

// notFound records a property the resource does not have.
func (ms *multistatus) notFound(n xml.Name) { ms.missing = append(ms.missing, n) }

const propstatOpen = "<d:propstat><d:prop>"

// beginPropstat / endPropstat wrap properties with a status.
func (ms *multistatus) beginPropstat() { ms.w.WriteString(propstatOpen) }

// minAvailable is the room a property is appended into without growing a
// slice of its own: more than most properties take.
const minAvailable = 4 << 10

// available is the empty tail of the buffer, for appending a property
// to and writing it without a copy (see bufio.Writer.AvailableBuffer). The
// buffer is flushed first when little room is left; an error in flushing
// stays in the writer and comes out of close.
func (ms *multistatus) available() []byte {
	if ms.w.Available() < minAvailable {
		ms.w.Flush()
	}
	return ms.w.AvailableBuffer()
}

func (ms *multistatus) endPropstat(status int) {
	ms.w.WriteString("</d:prop><d:status>HTTP/1.1 ")
	ms.w.WriteString(statusLine(status))
	ms.w.WriteString("</d:status></d:propstat>")
}

func statusLine(status int) string {
	switch status {
	case http.StatusOK:
		return "200 OK"
	case http.StatusNotFound:
		return "404 Not Found"
	}
	return itoa(int64(status)) + " " + http.StatusText(status)
}

// xmlWriter is where tags are written: the response, or a builder.
type xmlWriter interface {
	io.StringWriter
	io.ByteWriter
}

// openTag writes <name> with the shortest prefix the namespaces allow.
func (ms *multistatus) openTag(n xml.Name) { writeOpenTag(ms.w, n) }

func (ms *multistatus) closeTag(n xml.Name) { writeCloseTag(ms.w, n) }

func (ms *multistatus) emptyElement(n xml.Name) {
	ms.w.WriteByte('<')
	writeQName(ms.w, n, true)
	ms.w.WriteString("/>")
}

// elementBytes writes the element n with content, which is XML already,
// with tags when they are given.
func (ms *multistatus) elementBytes(n xml.Name, tags elementTags, content []byte) {
	if tags.open == "" {
		ms.openTag(n)
		ms.w.Write(content)
		ms.closeTag(n)
		return
	}
	ms.w.WriteString(tags.open)
	ms.w.Write(content)
	ms.w.WriteString(tags.close)
}

// elementTags are the opening and closing tags of an element, built once
// for a property every response of a listing writes.
type elementTags struct{ open, close string }

func tagsOf(n xml.Name) elementTags {
	var open, close strings.Builder
	writeOpenTag(&open, n)
	writeCloseTag(&close, n)
	return elementTags{open: open.String(), close: close.String()}
}

func writeOpenTag(w xmlWriter, n xml.Name) {
	w.WriteByte('<')
	writeQName(w, n, true)
	w.WriteByte('>')
}

func writeCloseTag(w xmlWriter, n xml.Name) {
	w.WriteString("</")
	writeQName(w, n, false)
	w.WriteByte('>')
}

// writeQName writes a prefixed element name. Foreign namespaces get the
// prefix "x", declared on the element itself.
func writeQName(w xmlWriter, n xml.Name, declare bool) {
	switch n.Space {
	case nsDAV:
		w.WriteString("d:")
	case nsOC:
		w.WriteString("oc:")
	case "":
	default:
		w.WriteString("x:")
		w.WriteString(n.Local)
		if declare {
			w.WriteString(` xmlns:x="`)
			writeXMLAttr(w, n.Space)
			w.WriteByte('"')
		}
		return
	}
	w.WriteString(n.Local)
}

// rawElement writes a property whose value is already XML.
func (ms *multistatus) rawElement(n xml.Name, xmlValue string) {
	ms.openTag(n)
	writeXMLMarkup(ms.w, xmlValue)
	ms.closeTag(n)
}

// text writes s as XML character data.
func (ms *multistatus) text(s string) { writeXMLText(ms.w, s) }

// endPropstatWithError closes a propstat that carries a DAV: precondition
// code (RFC 4918 §16).
func (ms *multistatus) endPropstatWithError(status int, condition string) {
	ms.w.WriteString("</d:prop><d:status>HTTP/1.1 ")
	ms.w.WriteString(statusLine(status))
	ms.w.WriteString("</d:status><d:error><d:")
	ms.w.WriteString(condition)
	ms.w.WriteString("/></d:error></d:propstat>")
}
