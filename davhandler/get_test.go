package davhandler

import (
	"cmp"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestFileToEnd: only a limit that reaches the end of its file anyway is
// taken off; anything else is left as it is.
func TestFileToEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		offset   int64
		limit    int64
		wantFile bool
	}{
		{"whole file", 0, 10, true},
		{"limit beyond the end", 0, 11, true},
		{"rest of the file", 4, 6, true},
		{"short of the end", 0, 9, false},
		{"short of the end after an offset", 4, 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Seek(tt.offset, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			src := io.LimitReader(f, tt.limit)
			got := fileToEnd(src)
			if _, isFile := got.(*os.File); isFile != tt.wantFile {
				t.Fatalf("fileToEnd returned %T, want the file: %v", got, tt.wantFile)
			}
		})
	}
	t.Run("not a file", func(t *testing.T) {
		src := io.LimitReader(strings.NewReader("abc"), 3)
		if got := fileToEnd(src); got != src {
			t.Fatalf("fileToEnd returned %T, want the reader unchanged", got)
		}
	})
}

// readerFromRecorder records the reader its ReadFrom was given, as the
// connection's ReadFrom, which only sends a file with sendfile, sees it.
type readerFromRecorder struct {
	*httptest.ResponseRecorder
	got []io.Reader
}

func (r *readerFromRecorder) ReadFrom(src io.Reader) (int64, error) {
	r.got = append(r.got, src)
	return io.Copy(r.ResponseRecorder, src)
}

// TestGetHandsTheFileToReadFrom: a whole file, or its rest from an offset,
// reaches the ResponseWriter's ReadFrom as the file itself, so that a
// writer wrapping it in one more limit still reaches sendfile; a range
// short of the end keeps its limit.
func TestGetHandsTheFileToReadFrom(t *testing.T) {
	e := newEnv(t)
	// Past the store's inline limit: a content file, not bytes in memory.
	body := strings.Repeat("0123456789", 2000)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f", body), http.StatusCreated)
	tests := []struct {
		name     string
		rangeHdr string
		status   int
		want     string
		wantFile bool
	}{
		{"whole", "", http.StatusOK, body, true},
		{"rest from an offset", "bytes=19990-", http.StatusPartialContent, body[19990:], true},
		{"range short of the end", "bytes=10-19", http.StatusPartialContent, body[10:20], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/webdav/f", nil)
			req.SetBasicAuth("einstein", "x")
			if tt.rangeHdr != "" {
				req.Header.Set("Range", tt.rangeHdr)
			}
			w := &readerFromRecorder{ResponseRecorder: httptest.NewRecorder()}
			e.h.ServeHTTP(w, req)
			if w.Code != tt.status || w.Body.String() != tt.want {
				t.Fatalf("status %d, body %q; want %d, %q", w.Code, w.Body.String(), tt.status, tt.want)
			}
			if len(w.got) != 1 {
				t.Fatalf("ReadFrom called %d times, want once", len(w.got))
			}
			if _, isFile := w.got[0].(*os.File); isFile != tt.wantFile {
				t.Fatalf("ReadFrom got %T, want the file: %v", w.got[0], tt.wantFile)
			}
		})
	}
}

// TestGetCopiesContentInMemory: a small file, kept in the database, is
// written through the handler's buffer, not handed to the connection's
// ReadFrom, which would allocate a copy buffer for it.
func TestGetCopiesContentInMemory(t *testing.T) {
	e := newEnv(t)
	const body = "small file kept in the database"
	wantStatus(t, e.do("einstein", "PUT", "/webdav/small", body), http.StatusCreated)
	req := httptest.NewRequest("GET", "/webdav/small", nil)
	req.SetBasicAuth("einstein", "x")
	w := &readerFromRecorder{ResponseRecorder: httptest.NewRecorder()}
	e.h.ServeHTTP(w, req)
	if w.Code != http.StatusOK || w.Body.String() != body {
		t.Fatalf("status %d, body %q", w.Code, w.Body.String())
	}
	if len(w.got) != 0 {
		t.Fatalf("ReadFrom got %T, want the body written", w.got[0])
	}
}

// TestGetRanges: a suffix range of length 0 (bytes=-0) is unsatisfiable
// (RFC 9110 §14.1.2): alone it is a 416 with Content-Range: bytes */size,
// beside a satisfiable range it is left out.
func TestGetRanges(t *testing.T) {
	e := newEnv(t)
	const body = "0123456789"
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f", body), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/empty", ""), http.StatusCreated)
	etag := e.do("einstein", "HEAD", "/webdav/f", "").Header().Get("ETag")
	tests := []struct {
		name, path, rangeHdr, ifRange string
		status                        int
		contentRange                  string
		want                          string   // the body of a 200 or a single range
		parts                         []string // the bodies of a multipart answer
	}{
		{name: "empty suffix", rangeHdr: "bytes=-0", status: http.StatusRequestedRangeNotSatisfiable, contentRange: "bytes */10"},
		{name: "empty suffix with leading zeros and spaces", rangeHdr: "bytes= -00 ", status: http.StatusRequestedRangeNotSatisfiable, contentRange: "bytes */10"},
		{name: "two empty suffixes", rangeHdr: "bytes=-0,-0", status: http.StatusRequestedRangeNotSatisfiable, contentRange: "bytes */10"},
		{name: "empty suffix and an empty spec", rangeHdr: "bytes=-0,", status: http.StatusRequestedRangeNotSatisfiable, contentRange: "bytes */10"},
		{name: "empty suffix and a range past the end", rangeHdr: "bytes=-0,10-", status: http.StatusRequestedRangeNotSatisfiable, contentRange: "bytes */10"},
		{name: "first byte", rangeHdr: "bytes=0-0", status: http.StatusPartialContent, contentRange: "bytes 0-0/10", want: "0"},
		{name: "last byte", rangeHdr: "bytes=-1", status: http.StatusPartialContent, contentRange: "bytes 9-9/10", want: "9"},
		{name: "empty suffix before a range", rangeHdr: "bytes=-0,0-1", status: http.StatusPartialContent, contentRange: "bytes 0-1/10", want: "01"},
		{name: "empty suffix after a range", rangeHdr: "bytes=0-1, -0", status: http.StatusPartialContent, contentRange: "bytes 0-1/10", want: "01"},
		{name: "empty suffix among ranges", rangeHdr: "bytes=0-1,-0,5-6", status: http.StatusPartialContent, parts: []string{"01", "56"}},
		{name: "negative suffix stays invalid", rangeHdr: "bytes=--0,0-1", status: http.StatusRequestedRangeNotSatisfiable},
		{name: "range past the end", rangeHdr: "bytes=10-", status: http.StatusRequestedRangeNotSatisfiable, contentRange: "bytes */10"},
		{name: "empty suffix of another version", rangeHdr: "bytes=-0", ifRange: `"other"`, status: http.StatusOK, want: body},
		{name: "empty suffix of this version", rangeHdr: "bytes=-0", ifRange: etag, status: http.StatusRequestedRangeNotSatisfiable, contentRange: "bytes */10"},
		// ServeContent ignores a range of an empty file.
		{name: "empty suffix of an empty file", path: "/webdav/empty", rangeHdr: "bytes=-0", status: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := cmp.Or(tt.path, "/webdav/f")
			rec := e.do("einstein", "GET", path, "", "Range", tt.rangeHdr, "If-Range", tt.ifRange)
			if rec.Code == http.StatusRequestedRangeNotSatisfiable {
				wantError(t, rec, tt.status, "RequestedRangeNotSatisfiable", "")
			}
			wantStatus(t, rec, tt.status)
			wantHeader(t, rec, "Content-Range", tt.contentRange)
			if tt.parts != nil {
				if got := multipartBodies(t, rec); !slices.Equal(got, tt.parts) {
					t.Fatalf("parts %q, want %q", got, tt.parts)
				}
				return
			}
			if rec.Code != http.StatusRequestedRangeNotSatisfiable && rec.Body.String() != tt.want {
				t.Fatalf("body %q, want %q", rec.Body.String(), tt.want)
			}
		})
	}
}

// multipartBodies reads the parts of a multipart/byteranges answer.
func multipartBodies(t *testing.T, rec *httptest.ResponseRecorder) []string {
	t.Helper()
	_, params, err := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(rec.Body, params["boundary"])
	var out []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
}
