package davhandler

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func TestParseDAVPath(t *testing.T) {
	tests := []struct {
		path     string
		ok       bool
		status   int // of the error, 0 for none
		kind     baseKind
		base     string
		segments []string
	}{
		{path: "/webdav", ok: true, kind: baseHome, base: "/webdav"},
		{path: "/remote.php/webdav/a/b.txt", ok: true, kind: baseHome, base: "/remote.php/webdav", segments: []string{"a", "b.txt"}},
		{path: "/webdav/a//b/", ok: true, kind: baseHome, base: "/webdav", segments: []string{"a", "b"}},
		{path: "/dav/files/einstein/x", ok: true, kind: baseFiles, base: "/dav/files/einstein", segments: []string{"x"}},
		{path: "/remote.php/dav/spaces/S$P!N/x", ok: true, kind: baseSpaces, base: "/remote.php/dav/spaces/S$P!N", segments: []string{"x"}},
		{path: "/dav/spaces", ok: true, status: http.StatusMethodNotAllowed},
		{path: "/dav/spaces/", ok: true, status: http.StatusMethodNotAllowed},
		{path: "/dav/files", ok: true, status: http.StatusMethodNotAllowed},
		{path: "/dav/unknown", ok: true, status: http.StatusNotFound},
		{path: "/webdav/../etc/passwd", ok: true, status: http.StatusBadRequest},
		{path: "/webdav/a/./b", ok: true, status: http.StatusBadRequest},
		{path: "/dav/spaces/../x", ok: true, status: http.StatusBadRequest},
		{path: "/webdav/a\x00b", ok: true, status: http.StatusBadRequest},
		{path: "/webdav/a\nb", ok: true, status: http.StatusBadRequest},
		{path: "/webdav/" + strings.Repeat("n", 256), ok: true, status: http.StatusBadRequest},
		{path: "/webdav/" + strings.Repeat("n", 255), ok: true, kind: baseHome, base: "/webdav", segments: []string{strings.Repeat("n", 255)}},
		{path: "/dav/spaces/trash-bin/S$P", ok: true, kind: baseTrash, base: "/dav/spaces/trash-bin/S$P"},
		{path: "/remote.php/dav/spaces/trash-bin/S$P/17.N/a/", ok: true, kind: baseTrash, base: "/remote.php/dav/spaces/trash-bin/S$P", segments: []string{"17.N", "a"}},
		{path: "/dav/spaces/trash-bin", ok: true, status: http.StatusMethodNotAllowed},
		{path: "/dav/spaces/trash-bin/", ok: true, status: http.StatusMethodNotAllowed},
		{path: "/dav/spaces/trash-bin/..", ok: true, status: http.StatusBadRequest},
		{path: "/dav/spaces/trash-bin/S$P/17.N/../x", ok: true, status: http.StatusBadRequest},
		{path: "/dav/meta/S$P!N", ok: true, kind: baseMeta, base: "/dav/meta/S$P!N"},
		{path: "/remote.php/dav/meta/S$P!N/v/", ok: true, kind: baseMeta, base: "/remote.php/dav/meta/S$P!N", segments: []string{"v"}},
		{path: "/dav/meta/S$P!N/v/17.0", ok: true, kind: baseMeta, base: "/dav/meta/S$P!N", segments: []string{"v", "17.0"}},
		{path: "/dav/meta/S$P!N/x", ok: true, status: http.StatusNotFound},
		{path: "/dav/meta/S$P!N/v/17.0/x", ok: true, status: http.StatusNotFound},
		{path: "/dav/meta", ok: true, status: http.StatusMethodNotAllowed},
		{path: "/dav/meta/..", ok: true, status: http.StatusBadRequest},
		// The size of the whole path is checked before its names: 414.
		{path: "/webdav" + strings.Repeat("/a", storage.MaxPathSegments-1), ok: true, kind: baseHome, base: "/webdav", segments: slices.Repeat([]string{"a"}, storage.MaxPathSegments-1)},
		{path: "/webdav" + strings.Repeat("/a", storage.MaxPathSegments), ok: true, status: http.StatusRequestURITooLong},
		{path: "/remote.php/dav/files/einstein" + strings.Repeat("//a", storage.MaxPathBytes/3), ok: true, status: http.StatusRequestURITooLong},
		{path: "/dav/spaces/S$P" + strings.Repeat("/..", storage.MaxPathSegments), ok: true, status: http.StatusRequestURITooLong},
		{path: "/dav/public-files/" + strings.Repeat("n", storage.MaxPathBytes), ok: true, status: http.StatusRequestURITooLong},
		{path: "/index.html" + strings.Repeat("/a", storage.MaxPathBytes), ok: false},
		{path: "/", ok: false},
		{path: "/index.html", ok: false},
		{path: "/webdavx", ok: false},
		{path: "/remote.phpx/webdav", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			dp, ok, err := parseDAVPath(tt.path)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if tt.status != 0 {
				if err == nil || err.status != tt.status {
					t.Fatalf("err = %v, want status %d", err, tt.status)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if !ok {
				return
			}
			if dp.kind != tt.kind || dp.base != tt.base || !slices.Equal(dp.segments, tt.segments) {
				t.Fatalf("got kind %d base %q segments %q", dp.kind, dp.base, dp.segments)
			}
		})
	}
}

// TestParseUploadPath: TUS upload URLs have one segment below /dav/uploads,
// chunking NG paths two (user and transfer) and at most a part below.
func TestParseUploadPath(t *testing.T) {
	tests := []struct {
		path     string
		status   int // of the error, 0 for none
		kind     baseKind
		base     string
		user     string
		upload   string
		segments []string
	}{
		{path: "/dav/uploads/abc", kind: baseUploads, base: "/dav/uploads/abc", upload: "abc"},
		{path: "/remote.php/dav/uploads/abc/", kind: baseUploads, base: "/remote.php/dav/uploads/abc", upload: "abc"},
		{path: "/remote.php/dav/uploads/einstein/123", kind: baseChunked, base: "/remote.php/dav/uploads/einstein/123", user: "einstein", upload: "123"},
		{path: "/dav/uploads/einstein/123/", kind: baseChunked, base: "/dav/uploads/einstein/123", user: "einstein", upload: "123"},
		{path: "/dav/uploads/einstein/123/0000000000000042", kind: baseChunked, base: "/dav/uploads/einstein/123", user: "einstein", upload: "123", segments: []string{"0000000000000042"}},
		{path: "/remote.php/dav/uploads/einstein//123//.file", kind: baseChunked, base: "/remote.php/dav/uploads/einstein/123", user: "einstein", upload: "123", segments: []string{".file"}},
		{path: "/dav/uploads/einstein/123/a/b", status: http.StatusNotFound},
		{path: "/dav/uploads/einstein/../x", status: http.StatusBadRequest},
		{path: "/dav/uploads/../123/x", status: http.StatusBadRequest},
		{path: "/dav/uploads/einstein/123/..", status: http.StatusBadRequest},
		{path: "/dav/uploads/einstein/123/a\x00b", status: http.StatusBadRequest},
		{path: "/dav/uploads/", status: http.StatusNotFound},
		{path: "/dav/uploads/..", status: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			dp, ok, err := parseDAVPath(tt.path)
			if !ok {
				t.Fatal("not a DAV path")
			}
			if tt.status != 0 {
				if err == nil || err.status != tt.status {
					t.Fatalf("err = %v, want status %d", err, tt.status)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if dp.kind != tt.kind || dp.base != tt.base || dp.user != tt.user || dp.upload != tt.upload || !slices.Equal(dp.segments, tt.segments) {
				t.Fatalf("got kind %d base %q user %q upload %q segments %q", dp.kind, dp.base, dp.user, dp.upload, dp.segments)
			}
		})
	}
}

func TestEscapePath(t *testing.T) {
	tests := map[string]string{
		"/dav/spaces/S$P!N/a b": "/dav/spaces/S$P%21N/a%20b",
		"/webdav/ü?#%":          "/webdav/%C3%BC%3F%23%25",
	}
	for in, want := range tests {
		if got := escapePath(in); got != want {
			t.Errorf("escapePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestContentDisposition(t *testing.T) {
	got := contentDisposition(`comma,"q".txt`)
	want := `attachment; filename*=UTF-8''comma%2C%22q%22.txt; filename="comma,\"q\".txt"`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if got := quoteFilename(`a\b"c.txt`); got != `a\\b\"c.txt` {
		t.Fatalf("quoted %s", got)
	}
}
