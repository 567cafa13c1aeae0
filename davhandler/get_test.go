package davhandler

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
