package davxml

import (
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// Multistatus streams a 207 response: each d:response is written as soon
// as it is ready, so memory does not grow with the number of resources.
//
// It keeps its own buffer rather than a bufio.Writer: a property is appended
// to the buffer in place, where a bufio.Writer would have it written into
// its free tail and then copied onto itself, and a response is checked for
// a flush once rather than once per property.
type Multistatus struct {
	out io.Writer
	// appender holds what is not sent yet and takes what is written; it
	// is sent once it reaches flushAt.
	appender
	flushAt int
	// err is the first failure to send; what follows it is dropped, and
	// Close reports it.
	err error
	// pool takes the buffer back at Close; nil when the buffer is the Multistatus' own.
	pool *BufferPool
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
	MultistatusBuffer = 32 << 10
	ListingBuffer     = 64 << 10
	// bufferSlack is room beyond the flush size, so that the response
	// that crosses it does not grow the buffer.
	bufferSlack = 8 << 10
)

// BufferPool keeps the buffers of finished multistatus answers, and of
// bodies copied to the client, for the next ones: a listing's buffer is
// large, and each request otherwise allocated and cleared it anew. A nil
// pool allocates each buffer.
type BufferPool struct{ pool sync.Pool }

// Get returns an empty buffer of the pool's size.
func (p *BufferPool) Get() []byte {
	if p != nil {
		if b, ok := p.pool.Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return make([]byte, 0, ListingBuffer+bufferSlack)
}

// Put keeps b, unless it grew for a huge property: the pool holds only
// buffers of the usual size.
func (p *BufferPool) Put(b []byte) {
	if p == nil || cap(b) != ListingBuffer+bufferSlack {
		return
	}
	p.pool.Put(&b)
}

// StartMultistatus sends the 207 status line and the document head. The
// document is sent in writes of about size bytes, from a buffer taken from
// pool, which takes it back at Close; a nil pool allocates one.
func StartMultistatus(w http.ResponseWriter, size int, pool *BufferPool) *Multistatus {
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.WriteHeader(http.StatusMultiStatus)
	ms := &Multistatus{out: w, flushAt: size, pool: pool, appender: appender{b: pool.Get()}}
	ms.WriteString(multistatusOpen)
	return ms
}

// Buf returns what is buffered and not sent yet, for a caller that
// appends a whole response to it in place and gives it back with SetBuf.
func (ms *Multistatus) Buf() []byte { return ms.b }

// SetBuf replaces what is buffered with b, which Buf returned and the
// caller appended to (or cut back).
func (ms *Multistatus) SetBuf(b []byte) { ms.b = b }

// FlushIfFull sends the buffer once it holds the flush size: called between
// responses, so a response is not split for nothing.
func (ms *Multistatus) FlushIfFull() {
	if len(ms.b) >= ms.flushAt {
		ms.flush()
	}
}

// flush sends what is buffered. After a failure nothing more is sent:
// the document is cut short, which clients detect as malformed.
func (ms *Multistatus) flush() {
	if ms.err == nil && len(ms.b) > 0 {
		_, ms.err = ms.out.Write(ms.b)
	}
	ms.b = ms.b[:0]
}

// Close ends the document, sends it and gives the buffer back. It returns
// the first failure to send.
func (ms *Multistatus) Close() error {
	ms.WriteString("</d:multistatus>\n")
	ms.flush()
	if ms.pool != nil {
		ms.pool.Put(ms.b)
		ms.pool = nil
	}
	ms.b = nil
	return ms.err
}

// Href is the href of a response, escaped, in the parts it is written
// from, so that a listing escapes its folder's path once and writes each
// child's href without building it.
type Href struct {
	// Base is the href of the resource, or of a child's folder.
	Base string
	// Segment is a child's escaped name, written after a slash; "" for
	// the resource itself.
	Segment string
	// Slash ends the href of a child folder.
	Slash bool
}

// String is the href as one string.
func (h Href) String() string {
	s := h.Base
	if h.Segment != "" {
		s += "/" + h.Segment
	}
	if h.Slash {
		s += "/"
	}
	return s
}

// BeginResponse opens a d:response with its href.
func (ms *Multistatus) BeginResponse(href string) {
	ms.BeginResponseAt(Href{Base: href})
}

// BeginResponseAt is BeginResponse for an href in parts.
func (ms *Multistatus) BeginResponseAt(href Href) {
	ms.b = AppendResponseStart(ms.b, href)
	ms.bodyAt = len(ms.b)
	ms.missing = ms.missing[:0]
}

// AppendResponseStart appends the opening of a d:response with its href.
func AppendResponseStart(dst []byte, href Href) []byte {
	dst = append(dst, "<d:response><d:href>"...)
	dst = AppendText(dst, href.Base)
	if href.Segment != "" {
		dst = append(dst, '/')
		dst = AppendText(dst, href.Segment)
	}
	if href.Slash {
		dst = append(dst, '/')
	}
	return append(dst, "</d:href>"...)
}

// EndResponse closes the d:response, adding the 404 propstat for the names
// collected with NotFound, and sends the buffer when it is full.
func (ms *Multistatus) EndResponse() {
	if len(ms.missing) > 0 {
		ms.WriteString(PropstatOpen)
		for _, n := range ms.missing {
			ms.EmptyElement(n)
		}
		ms.WriteString(PropstatNotFound)
	}
	if len(ms.b) == ms.bodyAt {
		ms.WriteString(EmptyPropstat)
	}
	ms.WriteString("</d:response>")
	ms.FlushIfFull()
}

// NotFound records a property the resource does not have.
func (ms *Multistatus) NotFound(n xml.Name) { ms.missing = append(ms.missing, n) }

// The pieces of a propstat a response is built from.
const (
	// PropstatOpen opens a propstat and its d:prop.
	PropstatOpen = "<d:propstat><d:prop>"
	// PropstatOK and PropstatNotFound close one with its status.
	PropstatOK       = "</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>"
	PropstatNotFound = "</d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>"
	// EmptyPropstat ends a response that has no property to give: RFC 4918
	// §14.24 wants a propstat or a status in every d:response, and clients
	// such as ownCloud Web fail to parse one without.
	EmptyPropstat = "<d:propstat><d:prop></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>"
)

// BeginPropstat / EndPropstat wrap properties with a status.
func (ms *Multistatus) BeginPropstat() { ms.WriteString(PropstatOpen) }

func (ms *Multistatus) EndPropstat(status int) {
	ms.WriteString("</d:prop><d:status>HTTP/1.1 ")
	ms.WriteString(StatusLine(status))
	ms.WriteString("</d:status></d:propstat>")
}

// EndPropstatWithError closes a propstat that carries a DAV: precondition
// code (RFC 4918 §16).
func (ms *Multistatus) EndPropstatWithError(status int, condition string) {
	ms.WriteString("</d:prop><d:status>HTTP/1.1 ")
	ms.WriteString(StatusLine(status))
	ms.WriteString("</d:status><d:error><d:")
	ms.WriteString(condition)
	ms.WriteString("/></d:error></d:propstat>")
}

// StatusLine is the code and reason of a d:status.
func StatusLine(status int) string {
	switch status {
	case http.StatusOK:
		return "200 OK"
	case http.StatusNotFound:
		return "404 Not Found"
	}
	return strconv.Itoa(status) + " " + http.StatusText(status)
}

// OpenTag writes <n> with the shortest prefix the namespaces allow.
func (ms *Multistatus) OpenTag(n xml.Name) { WriteOpenTag(ms, n) }

// CloseTag writes </n>.
func (ms *Multistatus) CloseTag(n xml.Name) { WriteCloseTag(ms, n) }

// EmptyElement writes <n/>.
func (ms *Multistatus) EmptyElement(n xml.Name) { WriteEmptyElement(ms, n) }

// ElementBytes writes the element n with content, which is XML already,
// with tags when they are given.
func (ms *Multistatus) ElementBytes(n xml.Name, tags Tags, content []byte) {
	if tags.Open == "" {
		ms.OpenTag(n)
		ms.Write(content)
		ms.CloseTag(n)
		return
	}
	ms.WriteString(tags.Open)
	ms.Write(content)
	ms.WriteString(tags.Close)
}

// RawElement writes a property whose value is already XML.
func (ms *Multistatus) RawElement(n xml.Name, xmlValue string) {
	ms.OpenTag(n)
	WriteMarkup(ms, xmlValue)
	ms.CloseTag(n)
}

// Text writes s as XML character data.
func (ms *Multistatus) Text(s string) { ms.b = AppendText(ms.b, s) }
