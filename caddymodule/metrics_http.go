package caddymodule

import (
	"io"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
)

// serveCounted serves r with h, counting the bytes of its body and of the
// response, and the upload while its body is being received.
func (m *storeMetrics) serveCounted(h http.Handler, w http.ResponseWriter, r *http.Request) {
	method := methodLabel(r.Method)
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &countingBody{ReadCloser: r.Body, bytes: m.bytes.WithLabelValues("in", method)}
	}
	if kind, ok := uploadKind(r); ok {
		inFlight := m.inFlight.WithLabelValues(kind)
		inFlight.Inc()
		defer inFlight.Dec()
	}
	h.ServeHTTP(&countingWriter{ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, bytes: m.bytes.WithLabelValues("out", method)}, r)
}

// uploadKind tells which kind of upload a request with a body is: a TUS
// PATCH (or a creation with its first bytes), a part of a chunked upload
// (NG under /dav/uploads, v1 with OC-Chunked), a Nextcloud bulk upload of
// many files, or a whole file.
func uploadKind(r *http.Request) (string, bool) {
	if r.ContentLength == 0 {
		return "", false
	}
	switch r.Method {
	case http.MethodPatch:
		return uploadTUS, true
	case http.MethodPost:
		switch {
		case strings.HasSuffix(r.URL.Path, "/dav/bulk"):
			return uploadBulk, true
		case r.Header.Get("Tus-Resumable") != "":
			return uploadTUS, true
		}
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
	bytes prometheus.Counter
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.bytes.Add(float64(n))
	return n, err
}

// countingWriter counts the bytes of a response body. It keeps what
// Caddy's wrapper offers: Unwrap, through which http.ResponseController
// flushes and sets deadlines, and ReadFrom, which keeps sendfile. The
// wrapper is held as a value, so a request costs one allocation, not two.
type countingWriter struct {
	caddyhttp.ResponseWriterWrapper
	bytes prometheus.Counter
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriterWrapper.Write(p)
	w.bytes.Add(float64(n))
	return n, err
}

func (w *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := w.ResponseWriterWrapper.ReadFrom(r)
	w.bytes.Add(float64(n))
	return n, err
}
