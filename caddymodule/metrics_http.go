package caddymodule

import (
	"io"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// serveCounted serves r with h, counting the bytes of its body and of the
// response, and the upload while its body is being received.
func (m *storeMetrics) serveCounted(h http.Handler, w http.ResponseWriter, r *http.Request) {
	method := methodLabel(r.Method)
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &countingBody{ReadCloser: r.Body, m: m, method: method}
	}
	if kind, ok := uploadKind(r); ok {
		inFlight := m.inFlight.WithLabelValues(kind)
		inFlight.Inc()
		defer inFlight.Dec()
	}
	h.ServeHTTP(&countingWriter{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, m: m, method: method}, r)
}

// uploadKind tells which kind of upload a request with a body is: a TUS
// PATCH (or a creation with its first bytes), a part of a chunked upload
// (NG under /dav/uploads, v1 with OC-Chunked), or a whole file.
func uploadKind(r *http.Request) (string, bool) {
	if r.ContentLength == 0 {
		return "", false
	}
	switch r.Method {
	case http.MethodPatch:
		return uploadTUS, true
	case http.MethodPost:
		return uploadTUS, r.Header.Get("Tus-Resumable") != ""
	case http.MethodPut:
		switch {
		case strings.Contains(r.URL.Path, "/dav/uploads/"):
			return uploadNG, true
		case r.Header.Get("OC-Chunked") != "":
			return uploadV1, true
		}
		return uploadPlain, true
	}
	return "", false
}

// countingBody counts the bytes read from a request body.
type countingBody struct {
	io.ReadCloser
	m      *storeMetrics
	method string
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.m.countBytes("in", b.method, n)
	return n, err
}

// countingWriter counts the bytes of a response body. It keeps what
// Caddy's wrapper offers (Flush, Unwrap for http.ResponseController,
// ReadFrom for sendfile).
type countingWriter struct {
	*caddyhttp.ResponseWriterWrapper
	m      *storeMetrics
	method string
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriterWrapper.Write(p)
	w.m.countBytes("out", w.method, n)
	return n, err
}

func (w *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := w.ResponseWriterWrapper.ReadFrom(r)
	w.m.countBytes("out", w.method, int(n))
	return n, err
}
