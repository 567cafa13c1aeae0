package davhandler

import (
	"net/http"
	"strings"
	"testing"
)

func TestViewableInline(t *testing.T) {
	tests := []struct {
		contentType string
		want        bool
	}{
		{"text/plain; charset=utf-8", true},
		{"TEXT/PLAIN", true},
		{"image/png", true},
		{"image/jpeg", true},
		{"application/pdf", true},
		{"audio/mpeg", true},
		{"video/mp4", true},
		{"image/svg+xml", false},
		{"text/html; charset=utf-8", false},
		{"application/xhtml+xml", false},
		{"text/xml", false},
		{"application/xml", false},
		{"text/javascript", false},
		{"text/css", false},
		{"application/octet-stream", false},
		{"application/zip", false},
		{"", false},
		{"not a type", false},
	}
	for _, tt := range tests {
		if got := viewableInline(tt.contentType); got != tt.want {
			t.Errorf("viewableInline(%q) = %v, want %v", tt.contentType, got, tt.want)
		}
	}
}

// TestContentHeaders: every file's content, a version's too, carries the
// sandbox and nosniff; safe types are shown inline, the rest (HTML, SVG,
// an upload that calls itself text/html) downloads.
func TestContentHeaders(t *testing.T) {
	e := newEnv(t)
	files := []struct {
		name, contentType, disposition string
	}{
		{"notes.txt", "", "inline"},
		{"photo.png", "", "inline"},
		{"page.html", "", "attachment"},
		{"logo.svg", "", "attachment"},
		{"tool.js", "", "attachment"},
		{"blob", "", "attachment"},
		{"disguised.txt", "text/html", "attachment"},
	}
	for _, f := range files {
		hdr := []string{}
		if f.contentType != "" {
			hdr = append(hdr, "Content-Type", f.contentType)
		}
		wantStatus(t, e.do("einstein", "PUT", "/webdav/"+f.name, "<script>alert(1)</script>", hdr...), http.StatusCreated)
		for _, method := range []string{"GET", "HEAD"} {
			got := e.do("einstein", method, "/webdav/"+f.name, "").Header()
			if got.Get("Content-Security-Policy") != contentSandbox || got.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s %s: CSP %q, X-Content-Type-Options %q", method, f.name, got.Get("Content-Security-Policy"), got.Get("X-Content-Type-Options"))
			}
			if d := got.Get("Content-Disposition"); !strings.HasPrefix(d, f.disposition+"; filename*=UTF-8''") {
				t.Errorf("%s %s: Content-Disposition %q, want %s", method, f.name, d, f.disposition)
			}
		}
	}
	// A version is sent as its file is.
	wantStatus(t, e.do("einstein", "PUT", "/webdav/page.html", "two"), http.StatusNoContent)
	id := e.do("einstein", "GET", "/webdav/page.html", "").Header().Get("OC-FileId")
	rs := e.listVersions("einstein", id)
	if len(rs) != 2 {
		t.Fatalf("%d responses, want the collection and a version", len(rs))
	}
	got := e.do("einstein", "GET", rs[1].Href, "").Header()
	if got.Get("Content-Security-Policy") != contentSandbox || !strings.HasPrefix(got.Get("Content-Disposition"), "attachment;") {
		t.Errorf("a version of page.html: %v", got)
	}
}
