package davhandler

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/net/http2"
)

// abandonedBody is the body of a request whose client gives up after
// sending sent: it ends with the error the server reports then (over
// HTTP/2 the stream's reset, over HTTP/1.1 a body shorter than announced),
// and with cancel, when set, the request's context ends with it, as the
// HTTP/2 server ends it when the stream is reset.
type abandonedBody struct {
	sent   io.Reader
	err    error
	cancel context.CancelFunc
}

func (b *abandonedBody) Read(p []byte) (int, error) {
	n, err := b.sent.Read(p)
	if err != io.EOF {
		return n, err
	}
	if b.cancel != nil {
		b.cancel()
	}
	return n, b.err
}

var errStreamCancelled = http2.StreamError{StreamID: 1, Code: http2.ErrCodeCancel}

// TestAbandonedUploads: a client that gives up on an upload's body is
// answered with a 4xx whatever the handler was doing at that moment (an
// HTTP/2 reset ends the request's context too, so store calls before the
// body is read fail), never a 5xx that would page an operator for a
// client's cancel, and the upload leaves no file and no part behind.
func TestAbandonedUploads(t *testing.T) {
	moments := []struct {
		name string
		// early cancels the context before the handler runs.
		early  bool
		err    error
		h2     bool
		status int
	}{
		{name: "HTTP/2 reset before the handler runs", early: true, err: errStreamCancelled, h2: true, status: statusClientClosedRequest},
		{name: "HTTP/2 reset while the body arrives", err: errStreamCancelled, h2: true, status: statusClientClosedRequest},
		{name: "HTTP/1.1 connection closed while the body arrives", err: io.ErrUnexpectedEOF, status: http.StatusBadRequest},
	}
	uploads := []struct {
		name string
		// start prepares the upload and returns the abandoned request's
		// method, path and headers.
		start func(e *env) (method, path string, hdr []string)
		// check asserts that nothing was kept.
		check func(t *testing.T, e *env)
	}{
		{
			name: "PUT",
			start: func(e *env) (string, string, []string) {
				return http.MethodPut, "/webdav/f.txt", nil
			},
			check: func(t *testing.T, e *env) { wantNoFile(t, e, "/webdav/f.txt") },
		},
		{
			name: "TUS PATCH",
			start: func(e *env) (string, string, []string) {
				loc := e.tusStart("einstein", "/webdav/", "f.txt", 1000)
				return "PATCH", loc, []string{"Tus-Resumable", "1.0.0", "Content-Type", tusContentType, "Upload-Offset", "0"}
			},
			check: func(t *testing.T, e *env) { wantNoFile(t, e, "/webdav/f.txt") },
		},
		{
			name: "chunking NG part",
			start: func(e *env) (string, string, []string) {
				wantStatus(e.t, e.do("einstein", "MKCOL", ngPath("einstein", "abandoned"), ""), http.StatusCreated)
				return http.MethodPut, ngPath("einstein", "abandoned", "00001"), nil
			},
			check: func(t *testing.T, e *env) {
				if parts := partSizes(t, e, "einstein", "abandoned"); len(parts) != 0 {
					t.Fatalf("the upload holds parts %v", parts)
				}
			},
		},
		{
			name: "chunking v1 chunk",
			start: func(e *env) (string, string, []string) {
				return http.MethodPut, "/webdav/f.txt-chunking-4711-2-0", []string{"OC-Chunked", "1"}
			},
			check: func(t *testing.T, e *env) {
				// Had the abandoned chunk been kept, this one would
				// complete the file.
				rec := e.v1Put("einstein", "/webdav", "f.txt", 2, 1, "second")
				wantStatus(t, rec, http.StatusCreated)
				if etag := rec.Header().Get("ETag"); etag != "" {
					t.Fatalf("the second chunk completed the file (ETag %s)", etag)
				}
				wantNoFile(t, e, "/webdav/f.txt")
			},
		},
	}
	for _, m := range moments {
		for _, u := range uploads {
			t.Run(m.name+"/"+u.name, func(t *testing.T) {
				e := newEnv(t, withUploads, withChunks)
				method, path, hdr := u.start(e)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				body := &abandonedBody{sent: strings.NewReader("the start of it"), err: m.err}
				if m.h2 {
					body.cancel = cancel
				}
				if m.early {
					cancel()
				}
				req := httptest.NewRequestWithContext(ctx, method, path, body)
				req.ContentLength = 1000
				req.SetBasicAuth("einstein", "x")
				for i := 0; i+1 < len(hdr); i += 2 {
					req.Header.Set(hdr[i], hdr[i+1])
				}
				rec := httptest.NewRecorder()
				e.h.ServeHTTP(rec, req)
				wantStatus(t, rec, m.status)
				u.check(t, e)
			})
		}
	}
}
