package davhandler

import (
	"bufio"
	"encoding/xml"
	"net/http"
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

// startMultistatus sends the 207 status line and the document head.
func startMultistatus(w http.ResponseWriter) *multistatus {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	ms := &multistatus{w: bufio.NewWriterSize(w, 32<<10)}
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
	ms.w.WriteString("<d:response><d:href>")
	ms.text(href)
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

// beginPropstat / endPropstat wrap properties with a status.
func (ms *multistatus) beginPropstat() { ms.w.WriteString("<d:propstat><d:prop>") }

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

// openTag writes <name> with the shortest prefix the namespaces allow.
func (ms *multistatus) openTag(n xml.Name) {
	ms.w.WriteByte('<')
	ms.qname(n, true)
	ms.w.WriteByte('>')
}

func (ms *multistatus) closeTag(n xml.Name) {
	ms.w.WriteString("</")
	ms.qname(n, false)
	ms.w.WriteByte('>')
}

func (ms *multistatus) emptyElement(n xml.Name) {
	ms.w.WriteByte('<')
	ms.qname(n, true)
	ms.w.WriteString("/>")
}

// qname writes a prefixed element name. Foreign namespaces get the prefix
// "x", declared on the element itself.
func (ms *multistatus) qname(n xml.Name, declare bool) {
	switch n.Space {
	case nsDAV:
		ms.w.WriteString("d:")
	case nsOC:
		ms.w.WriteString("oc:")
	case "":
	default:
		ms.w.WriteString("x:")
		ms.w.WriteString(n.Local)
		if declare {
			ms.w.WriteString(` xmlns:x="`)
			writeXMLAttr(ms.w, n.Space)
			ms.w.WriteByte('"')
		}
		return
	}
	ms.w.WriteString(n.Local)
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
