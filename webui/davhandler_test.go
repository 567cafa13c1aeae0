package webui_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/davhandler"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
	"github.com/davspaces/davspaces/webui"
)

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// davEnv is the WebDAV handler over a real embedded store, with the page
// hooked in (or not), and a project space "Physics" of which einstein alone
// is a member.
type davEnv struct {
	t *testing.T
	h *davhandler.Handler
}

func newDAVEnv(t *testing.T, withPage bool) *davEnv {
	t.Helper()
	store, err := boltstore.Open(t.TempDir(), boltstore.Options{StorageID: "storage-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	_, err = store.PutSpace(context.Background(), storage.Space{
		ID: "physics", Type: storage.SpaceProject, Name: "Physics", Quota: storage.NoQuota,
		Members: map[string]storage.Role{"einstein": storage.RoleManager},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := davhandler.Config{Store: store, User: basicUser, Spaces: storage.NewSpacePolicy([]string{"physics"})}
	if withPage {
		page, err := webui.New(webui.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Page = page
	}
	h, err := davhandler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := &davEnv{t: t, h: h}
	e.wantStatus(e.do("einstein", "MKCOL", "/dav/spaces/storage-1$physics/papers", ""), http.StatusCreated)
	e.wantStatus(e.do("einstein", http.MethodPut, "/dav/spaces/storage-1$physics/papers/relativity.txt", "", "Body", "E=mc²"), http.StatusCreated)
	e.wantStatus(e.do("einstein", "MKCOL", "/webdav/notes", ""), http.StatusCreated)
	return e
}

// basicUser trusts the Basic user name: authentication is Caddy's job.
func basicUser(r *http.Request) (storage.User, bool) {
	u, _, ok := r.BasicAuth()
	return storage.User{ID: u}, ok
}

// do sends a request; hdr holds header name/value pairs, "Body" the body.
func (e *davEnv) do(user, method, target, accept string, hdr ...string) *httptest.ResponseRecorder {
	e.t.Helper()
	var body io.Reader
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Body" {
			body = strings.NewReader(hdr[i+1])
		}
	}
	r := httptest.NewRequest(method, target, body)
	r.SetBasicAuth(user, "x")
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] != "Body" {
			r.Header.Set(hdr[i], hdr[i+1])
		}
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, r)
	return rec
}

func (e *davEnv) wantStatus(rec *httptest.ResponseRecorder, status int) {
	e.t.Helper()
	if rec.Code != status {
		e.t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
}

// wantPage fails the test unless rec is the page of view with status.
func wantPage(t *testing.T, rec *httptest.ResponseRecorder, status int, view string) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d: %s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q, want the page", ct)
	}
	if !strings.Contains(rec.Body.String(), `data-view="`+view+`"`) {
		t.Errorf("not the %s page: %s", view, rec.Body)
	}
	if rec.Header().Get("Content-Security-Policy") != webui.ContentSecurityPolicy {
		t.Errorf("Content-Security-Policy %q", rec.Header().Get("Content-Security-Policy"))
	}
	if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("X-Content-Type-Options %q", rec.Header().Get("X-Content-Type-Options"))
	}
}

func TestBrowserGetsFolderPage(t *testing.T) {
	e := newDAVEnv(t, true)
	for _, target := range []string{
		"/webdav/",
		"/webdav",
		"/webdav/notes/",
		"/remote.php/webdav/notes",
		"/dav/files/einstein/notes/",
		"/remote.php/dav/files/einstein/",
		"/dav/spaces/storage-1$physics/",
		"/dav/spaces/storage-1$physics/papers/",
	} {
		t.Run(target, func(t *testing.T) {
			wantPage(t, e.do("einstein", http.MethodGet, target, browserAccept), http.StatusOK, "folder")
		})
	}
}

// TestWebDAVClientsKeepTheirAnswers: what does not ask for HTML, or asks
// with Depth, gets the empty folder body as before; a file is its content
// even for a browser.
func TestWebDAVClientsKeepTheirAnswers(t *testing.T) {
	e := newDAVEnv(t, true)
	for _, tc := range []struct{ name, accept, depth string }{
		{"no Accept", "", ""},
		{"wildcard", "*/*", ""},
		{"html with Depth", browserAccept, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.depth != "" {
				hdr = []string{"Depth", tc.depth}
			}
			rec := e.do("einstein", http.MethodGet, "/webdav/notes/", tc.accept, hdr...)
			if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "httpd/unix-directory" {
				t.Errorf("status %d, Content-Type %q, body %q: want the empty folder answer", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			}
		})
	}
	rec := e.do("einstein", http.MethodGet, "/dav/spaces/storage-1$physics/papers/relativity.txt", browserAccept)
	if rec.Code != http.StatusOK || rec.Body.String() != "E=mc²" {
		t.Errorf("a browser's GET of a file: %d %q, want its content", rec.Code, rec.Body)
	}
	// Plain text is shown in the browser, in a sandbox.
	if cd, csp := rec.Header().Get("Content-Disposition"), rec.Header().Get("Content-Security-Policy"); !strings.HasPrefix(cd, "inline") || !strings.HasPrefix(csp, "sandbox") {
		t.Errorf("a text file opened by a browser: Content-Disposition %q, Content-Security-Policy %q, want inline in a sandbox", cd, csp)
	}
	rec = e.do("einstein", http.MethodHead, "/webdav/notes/", browserAccept)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "httpd/unix-directory" {
		t.Errorf("HEAD from a browser: %d %q, want the WebDAV answer", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// TestNotFoundPageGivesNoHint: a space the user is no member of, another
// user's files and a path that does not exist all get the same page.
func TestNotFoundPageGivesNoHint(t *testing.T) {
	e := newDAVEnv(t, true)
	missing := e.do("marie", http.MethodGet, "/dav/spaces/storage-1$nonexistent/", browserAccept)
	wantPage(t, missing, http.StatusNotFound, "notfound")
	for _, target := range []string{
		"/dav/spaces/storage-1$physics/",
		"/dav/spaces/storage-1$physics/papers/",
		"/dav/spaces/storage-1$physics/papers/relativity.txt",
		"/dav/files/einstein/notes/",
		"/webdav/no-such-folder/",
	} {
		t.Run(target, func(t *testing.T) {
			rec := e.do("marie", http.MethodGet, target, browserAccept)
			wantPage(t, rec, http.StatusNotFound, "notfound")
			if rec.Body.String() != missing.Body.String() {
				t.Errorf("the page differs from a missing space's:\n%s\n%s", rec.Body, missing.Body)
			}
			for _, hint := range []string{"Physics", "physics", "einstein", "papers", "relativity"} {
				if strings.Contains(rec.Body.String(), hint) {
					t.Errorf("the page names %q", hint)
				}
			}
		})
	}
}

// TestWithoutPage: a handler without a page (web off) answers browsers as
// it answers every client.
func TestWithoutPage(t *testing.T) {
	e := newDAVEnv(t, false)
	rec := e.do("einstein", http.MethodGet, "/webdav/notes/", browserAccept)
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "httpd/unix-directory" {
		t.Errorf("status %d, Content-Type %q: want the empty folder answer", rec.Code, rec.Header().Get("Content-Type"))
	}
	rec = e.do("marie", http.MethodGet, "/dav/spaces/storage-1$physics/", browserAccept)
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Header().Get("Content-Type"), "xml") {
		t.Errorf("a non-member: %d %q, want the WebDAV 404", rec.Code, rec.Header().Get("Content-Type"))
	}
}
