package davhandler

import (
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"go.uber.org/zap"
)

// multistatus streams a 207 response: each d:response is written as soon as
// it is ready, so memory does not grow with the number of resources.
//
// It keeps its own buffer rather than a bufio.Writer: a property is appended
// to the buffer in place, where a bufio.Writer would have it written into
// its free tail and then copied onto itself, and a response is checked for
// a flush once rather than once per property.
type multistatus struct {
	out io.Writer
	// buf holds what is not sent yet; it is sent once it reaches flushAt.
	buf     []byte
	flushAt int
	// err is the first failure to send; what follows it is dropped, and
	// close reports it.
	err error
	// pool takes buf back at close; nil when buf is the multistatus' own.
	pool *bufferPool
	// missing collects the 404 property names of the current response.
	missing []xml.Name
	// bodyAt is where the current response's body starts, after its href:
	// nothing written there means no propstat yet.
	bodyAt int
}

const multistatusOpen = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
	`<d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns">`

// The flush size of a multistatus sizes the writes it makes: a listing's is
// larger, so that a big folder costs fewer writes through the server's
// layers, without a one-resource answer holding as much.
const (
	multistatusBuffer = 32 << 10
	listingBuffer     = 64 << 10
	// bufferSlack is room beyond the flush size, so that the response
	// that crosses it does not grow the buffer.
	bufferSlack = 8 << 10
)

// bufferPool keeps the buffers of finished multistatus answers, and of
// bodies copied to the client, for the next ones: a listing's buffer is
// large, and each request otherwise allocated and cleared it anew. A nil
// pool allocates each buffer.
type bufferPool struct{ pool sync.Pool }

func (p *bufferPool) get() []byte {
	if p != nil {
		if b, ok := p.pool.Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return make([]byte, 0, listingBuffer+bufferSlack)
}

// put keeps b, unless it grew for a huge property: the pool holds only
// buffers of the usual size.
func (p *bufferPool) put(b []byte) {
	if p == nil || cap(b) != listingBuffer+bufferSlack {
		return
	}
	p.pool.Put(&b)
}

// startMultistatus sends the 207 status line and the document head. The
// document is sent in writes of about size bytes, from a buffer taken from
// pool, which takes it back at close; a nil pool allocates one.
func startMultistatus(w http.ResponseWriter, size int, pool *bufferPool) *multistatus {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	ms := &multistatus{out: w, flushAt: size, pool: pool, buf: pool.get()}
	ms.WriteString(multistatusOpen)
	return ms
}

// WriteString, WriteByte and Write append to the document.
func (ms *multistatus) WriteString(s string) (int, error) {
	ms.buf = append(ms.buf, s...)
	return len(s), nil
}

func (ms *multistatus) WriteByte(c byte) error {
	ms.buf = append(ms.buf, c)
	return nil
}

func (ms *multistatus) Write(p []byte) (int, error) {
	ms.buf = append(ms.buf, p...)
	return len(p), nil
}

// flushIfFull sends the buffer once it holds flushAt bytes: called between
// responses, so a response is not split for nothing.
func (ms *multistatus) flushIfFull() {
	if len(ms.buf) >= ms.flushAt {
		ms.flush()
	}
}

// flush sends what is buffered. After a failure nothing more is sent:
// the document is cut short, which clients detect as malformed.
func (ms *multistatus) flush() {
	if ms.err == nil && len(ms.buf) > 0 {
		_, ms.err = ms.out.Write(ms.buf)
	}
	ms.buf = ms.buf[:0]
}

// close ends the document, sends it and gives the buffer back. It returns
// the first failure to send.
func (ms *multistatus) close() error {
	ms.WriteString("</d:multistatus>\n")
	ms.flush()
	if ms.pool != nil {
		ms.pool.put(ms.buf)
		ms.pool = nil
	}
	ms.buf = nil
	return ms.err
}

// beginResponse opens a d:response with its href and the 200 propstat.
func (ms *multistatus) beginResponse(href string) {
	ms.beginResponseAt(responseHref{base: href})
}

// beginResponseAt is beginResponse for an href in parts.
func (ms *multistatus) beginResponseAt(href responseHref) {
	ms.buf = appendResponseStart(ms.buf, href)
	ms.bodyAt = len(ms.buf)
	ms.missing = ms.missing[:0]
}

// appendResponseStart appends the opening of a d:response with its href.
func appendResponseStart(dst []byte, href responseHref) []byte {
	dst = append(dst, "<d:response><d:href>"...)
	dst = davxml.AppendText(dst, href.base)
	if href.segment != "" {
		dst = append(dst, '/')
		dst = davxml.AppendText(dst, href.segment)
	}
	if href.slash {
		dst = append(dst, '/')
	}
	return append(dst, "</d:href>"...)
}

// endResponse closes the d:response, adding the 404 propstat for the names
// collected with notFound, and sends the buffer when it is full.
func (ms *multistatus) endResponse() {
	if len(ms.missing) > 0 {
		ms.WriteString("<d:propstat><d:prop>")
		for _, n := range ms.missing {
			ms.emptyElement(n)
		}
		ms.WriteString("</d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>")
	}
	if len(ms.buf) == ms.bodyAt {
		ms.WriteString(emptyPropstat)
	}
	ms.WriteString("</d:response>")
	ms.flushIfFull()
}

// notFound records a property the resource does not have.
func (ms *multistatus) notFound(n xml.Name) { ms.missing = append(ms.missing, n) }

const propstatOpen = "<d:propstat><d:prop>"

// emptyPropstat ends a response that has no property to give: RFC 4918
// §14.24 wants a propstat or a status in every d:response, and clients
// such as ownCloud Web fail to parse one without.
const emptyPropstat = "<d:propstat><d:prop></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>"

// beginPropstat / endPropstat wrap properties with a status.
func (ms *multistatus) beginPropstat() { ms.WriteString(propstatOpen) }

func (ms *multistatus) endPropstat(status int) {
	ms.WriteString("</d:prop><d:status>HTTP/1.1 ")
	ms.WriteString(statusLine(status))
	ms.WriteString("</d:status></d:propstat>")
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
func (ms *multistatus) openTag(n xml.Name) { writeOpenTag(ms, n) }

func (ms *multistatus) closeTag(n xml.Name) { writeCloseTag(ms, n) }

func (ms *multistatus) emptyElement(n xml.Name) {
	ms.WriteByte('<')
	writeQName(ms, n, true)
	ms.WriteString("/>")
}

// elementBytes writes the element n with content, which is XML already,
// with tags when they are given.
func (ms *multistatus) elementBytes(n xml.Name, tags elementTags, content []byte) {
	if tags.open == "" {
		ms.openTag(n)
		ms.Write(content)
		ms.closeTag(n)
		return
	}
	ms.WriteString(tags.open)
	ms.Write(content)
	ms.WriteString(tags.close)
}

// elementTags are the opening and closing tags of an element, and the
// element empty, built once for a property every response of a listing
// writes.
type elementTags struct{ open, close, empty string }

func tagsOf(n xml.Name) elementTags {
	var open, close, empty strings.Builder
	writeOpenTag(&open, n)
	writeCloseTag(&close, n)
	empty.WriteByte('<')
	writeQName(&empty, n, true)
	empty.WriteString("/>")
	return elementTags{open: open.String(), close: close.String(), empty: empty.String()}
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
			davxml.WriteAttr(w, n.Space)
			w.WriteByte('"')
		}
		return
	}
	w.WriteString(n.Local)
}

// rawElement writes a property whose value is already XML.
func (ms *multistatus) rawElement(n xml.Name, xmlValue string) {
	ms.openTag(n)
	davxml.WriteMarkup(ms, xmlValue)
	ms.closeTag(n)
}

// text writes s as XML character data.
func (ms *multistatus) text(s string) { ms.buf = davxml.AppendText(ms.buf, s) }

// endPropstatWithError closes a propstat that carries a DAV: precondition
// code (RFC 4918 §16).
func (ms *multistatus) endPropstatWithError(status int, condition string) {
	ms.WriteString("</d:prop><d:status>HTTP/1.1 ")
	ms.WriteString(statusLine(status))
	ms.WriteString("</d:status><d:error><d:")
	ms.WriteString(condition)
	ms.WriteString("/></d:error></d:propstat>")
}

// endMultistatus logs the failure of a multistatus whose 207 has gone
// out: all that is left is to cut the document short, which clients
// detect as malformed.
func (h *Handler) endMultistatus(r *http.Request, err error) error {
	switch {
	case err == nil:
	case r.Context().Err() != nil:
		h.logger.Debug("multistatus abandoned by the client", zap.String("uri", r.RequestURI), zap.Error(err))
	default:
		h.logger.Error("streaming multistatus", zap.String("uri", r.RequestURI), zap.Error(err))
	}
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
