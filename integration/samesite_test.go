package integration

import (
	"net/http"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// TestCrossSiteRefused: through the real Caddy, a state change a browser
// sends for another site with its cached Basic credentials (a form post to
// the TUS creation endpoint, a DELETE) is refused with 403 and the WebDAV
// error body and changes nothing; the page's own requests, clients that
// are no browsers, reads, and another origin's requests with a Bearer
// token pass.
func TestCrossSiteRefused(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	einstein := newClient(t, s.URL, "einstein")
	einstein.expect(http.StatusCreated, http.MethodPut, "/webdav/keep.txt", "kept")
	before := einstein.snapshot("/webdav/")

	tusCreation := map[string]string{
		"Tus-Resumable":   tusResumable,
		"Upload-Length":   "5",
		"Upload-Metadata": tusMetadata("filename", "forged.txt"),
	}
	forged := []struct {
		name   string
		method string
		path   string
		header map[string]string
		body   string
	}{
		{name: "cross-site form post", method: http.MethodPost, path: "/webdav/",
			header: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, body: "a=b"},
		{name: "cross-site TUS creation", method: http.MethodPost, path: "/remote.php/dav/files/einstein/",
			header: with(tusCreation, "Sec-Fetch-Site", "cross-site")},
		{name: "sibling site's DELETE", method: http.MethodDelete, path: "/webdav/keep.txt",
			header: map[string]string{"Sec-Fetch-Site": "same-site"}},
		{name: "old browser's MKCOL from another origin", method: "MKCOL", path: "/webdav/forged/",
			header: map[string]string{"Origin": "https://evil.example"}},
		{name: "old browser's PUT from an opaque origin", method: http.MethodPut, path: "/webdav/forged.txt",
			header: map[string]string{"Origin": "null"}, body: "forged"},
	}
	for _, tt := range forged {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := einstein.in(t).send(tt.method, tt.path, tt.header, []byte(tt.body))
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("%d, want 403\n%s", resp.StatusCode, body)
			}
			wantDAVError(t, string(body), "Forbidden")
		})
	}
	if diff := snapshotDiff(before, einstein.snapshot("/webdav/")); diff != "" {
		t.Errorf("refused requests changed the space:\n%s", diff)
	}

	// Reads from anywhere, the page's own changes, other clients' changes.
	einstein.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "1", "Sec-Fetch-Site", "cross-site")
	einstein.expect(http.StatusOK, http.MethodGet, "/webdav/keep.txt", "", "Sec-Fetch-Site", "cross-site")
	resp, body := einstein.send(http.MethodPost, "/webdav/", with(with(tusCreation, "Sec-Fetch-Site", "same-origin"), "Origin", s.URL), nil)
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("the page's own TUS creation: %d\n%s", resp.StatusCode, body)
	}
	einstein.expect(http.StatusCreated, "MKCOL", "/webdav/mine/", "", "Origin", s.URL)
	einstein.expect(http.StatusCreated, "MKCOL", "/webdav/desktop/", "")

	// Another origin's app with a token of its own.
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	alice.expect(http.StatusCreated, http.MethodPut, "/webdav/app.txt", "from the app", "Origin", "https://app.example", "Sec-Fetch-Site", "cross-site")
}

// TestContentHeadersThroughCaddy: through the real Caddy, a file's content
// comes with a sandbox and nosniff; plain text is shown inline, HTML
// downloads.
func TestContentHeadersThroughCaddy(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, http.MethodPut, "/webdav/notes.txt", "notes")
	c.expect(http.StatusCreated, http.MethodPut, "/webdav/page.html", "<script>alert(1)</script>")
	for name, disposition := range map[string]string{"notes.txt": "inline;", "page.html": "attachment;"} {
		resp, _ := c.expect(http.StatusOK, http.MethodGet, "/webdav/"+name, "")
		h := resp.Header
		if !strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox;") || h.Get("X-Content-Type-Options") != "nosniff" ||
			!strings.HasPrefix(h.Get("Content-Disposition"), disposition) {
			t.Errorf("GET %s: CSP %q, X-Content-Type-Options %q, Content-Disposition %q", name,
				h.Get("Content-Security-Policy"), h.Get("X-Content-Type-Options"), h.Get("Content-Disposition"))
		}
	}
}

// with is header with one more field, header itself left alone.
func with(header map[string]string, name, value string) map[string]string {
	out := map[string]string{name: value}
	for k, v := range header {
		out[k] = v
	}
	return out
}
