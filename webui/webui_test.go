package webui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// browserAccept is what Chromium sends when it navigates to a URL.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"

func newHandler(t *testing.T) *Handler {
	t.Helper()
	h, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestWantsPage(t *testing.T) {
	tests := []struct {
		name   string
		method string
		accept []string
		depth  string
		want   bool
	}{
		{"browser navigation", http.MethodGet, []string{browserAccept}, "", true},
		{"text/html alone", http.MethodGet, []string{"text/html"}, "", true},
		{"upper case, spaces", http.MethodGet, []string{" TEXT/HTML ; q=0.5"}, "", true},
		{"second Accept line", http.MethodGet, []string{"application/json", "text/html"}, "", true},
		{"with Depth", http.MethodGet, []string{browserAccept}, "1", false},
		{"with Depth 0", http.MethodGet, []string{browserAccept}, "0", false},
		{"wildcard only (curl)", http.MethodGet, []string{"*/*"}, "", false},
		{"no Accept (WebDAV clients)", http.MethodGet, nil, "", false},
		{"html refused with q=0", http.MethodGet, []string{"text/html;q=0, */*"}, "", false},
		{"html refused with q=0.000", http.MethodGet, []string{"text/html;q=0.000"}, "", false},
		{"html with q=0.01", http.MethodGet, []string{"text/html;q=0.01"}, "", true},
		{"xhtml only", http.MethodGet, []string{"application/xhtml+xml"}, "", false},
		{"HEAD", http.MethodHead, []string{browserAccept}, "", false},
		{"PROPFIND", "PROPFIND", []string{browserAccept}, "", false},
		{"POST", http.MethodPost, []string{browserAccept}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/webdav/", nil)
			for _, a := range tt.accept {
				r.Header.Add("Accept", a)
			}
			if tt.depth != "" {
				r.Header.Set("Depth", tt.depth)
			}
			if got := WantsPage(r); got != tt.want {
				t.Errorf("WantsPage = %v, want %v", got, tt.want)
			}
		})
	}
}

// wantSecurityHeaders fails the test unless an answer carries the page's
// security headers.
func wantSecurityHeaders(t *testing.T, hdr http.Header) {
	t.Helper()
	csp := hdr.Get("Content-Security-Policy")
	for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(csp, directive) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, directive)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("Content-Security-Policy %q allows inline or eval", csp)
	}
	if got := hdr.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options %q, want nosniff", got)
	}
	if got := hdr.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("X-Frame-Options %q, want DENY", got)
	}
}

func TestRouteOverview(t *testing.T) {
	h := newHandler(t)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Accept", browserAccept)
	route, ok := h.Route(r)
	if !ok {
		t.Fatal("GET / from a browser is not routed")
	}
	rec := httptest.NewRecorder()
	route.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	wantSecurityHeaders(t, rec.Header())
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	body := rec.Body.String()
	if !strings.Contains(body, `data-view="overview"`) {
		t.Errorf("the overview's body lacks its view:\n%s", body)
	}
	if !strings.Contains(body, `<script type="module" src="/webui/app.js"></script>`) {
		t.Errorf("the page does not load its script from the server:\n%s", body)
	}
}

// TestShellHasNothingInline keeps the shell working under its own CSP: no
// inline script, no style attribute or element, nothing from elsewhere.
func TestShellHasNothingInline(t *testing.T) {
	h := newHandler(t)
	for view, page := range h.pages {
		body := string(page)
		for _, banned := range []string{"<style", "style=", "<script>", "javascript:", "http://", "https://", " on"} {
			if strings.Contains(body, banned) {
				t.Errorf("the %s page holds %q", view, banned)
			}
		}
		if strings.Contains(body, "{{") {
			t.Errorf("the %s page holds an unreplaced placeholder", view)
		}
	}
}

func TestRoutePassesOtherRequests(t *testing.T) {
	h := newHandler(t)
	for _, tc := range []struct{ method, target, accept string }{
		{http.MethodGet, "/", "*/*"},
		{http.MethodGet, "/", ""},
		{"PROPFIND", "/", browserAccept},
		{http.MethodGet, "/index.html", browserAccept},
		{http.MethodGet, "/webdav/", browserAccept}, // the WebDAV handler's to decide
		{http.MethodGet, "/webuix/app.js", ""},
	} {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		if _, ok := h.Route(r); ok {
			t.Errorf("%s %s (Accept %q) is routed to the page", tc.method, tc.target, tc.accept)
		}
	}
}

func TestAssets(t *testing.T) {
	h := newHandler(t)
	get := func(method, target string, hdr ...string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(method, target, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		route, ok := h.Route(r)
		if !ok {
			t.Fatalf("%s %s is not routed", method, target)
		}
		rec := httptest.NewRecorder()
		route.ServeHTTP(rec, r)
		return rec
	}
	for name, wantType := range map[string]string{
		"app.js":      "text/javascript; charset=utf-8",
		"dav.js":      "text/javascript; charset=utf-8",
		"ui.js":       "text/javascript; charset=utf-8",
		"style.css":   "text/css; charset=utf-8",
		"favicon.svg": "image/svg+xml",
	} {
		rec := get(http.MethodGet, AssetPrefix+name)
		if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
			t.Errorf("%s: status %d, %d bytes", name, rec.Code, rec.Body.Len())
			continue
		}
		wantSecurityHeaders(t, rec.Header())
		if ct := rec.Header().Get("Content-Type"); ct != wantType {
			t.Errorf("%s: Content-Type %q, want %q", name, ct, wantType)
		}
		etag := rec.Header().Get("ETag")
		if etag == "" {
			t.Errorf("%s: no ETag", name)
			continue
		}
		if again := get(http.MethodGet, AssetPrefix+name, "If-None-Match", etag); again.Code != http.StatusNotModified {
			t.Errorf("%s with its ETag: status %d, want 304", name, again.Code)
		}
	}
	if rec := get(http.MethodGet, AssetPrefix+"index.html"); rec.Code != http.StatusNotFound {
		t.Errorf("the shell under the assets: status %d, want 404", rec.Code)
	}
	if rec := get(http.MethodGet, AssetPrefix+"missing.js"); rec.Code != http.StatusNotFound {
		t.Errorf("a missing asset: status %d, want 404", rec.Code)
	}
	if rec := get(http.MethodPut, AssetPrefix+"app.js"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("PUT of an asset: status %d, want 405", rec.Code)
	}
}

// TestScriptsBuildNoMarkup keeps names from the server out of the markup:
// the scripts build the page with elements and text nodes only, so a file
// named like HTML stays text, and nothing is evaluated.
func TestScriptsBuildNoMarkup(t *testing.T) {
	h := newHandler(t)
	for name, a := range h.assets {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		for _, banned := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute(\"style\""} {
			if strings.Contains(string(a.body), banned) {
				t.Errorf("%s uses %s", name, banned)
			}
		}
	}
}

// TestRoutePublicPage serves the same shell, view "public", for every
// token's page, without a user and without looking the token up.
func TestRoutePublicPage(t *testing.T) {
	h := newHandler(t)
	var first string
	for _, target := range []string{"/s/AbC-123_x", "/s/AbC-123_x/", "/s/other/Folder%20a/b", "/s/never-existed"} {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		r.Header.Set("Accept", browserAccept)
		route, ok := h.Route(r)
		if !ok {
			t.Errorf("GET %s from a browser is not routed", target)
			continue
		}
		rec := httptest.NewRecorder()
		route.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			t.Errorf("GET %s: status %d", target, rec.Code)
		}
		wantSecurityHeaders(t, rec.Header())
		if got := rec.Header().Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("GET %s: Referrer-Policy %q: the token would leak to other sites", target, got)
		}
		body := rec.Body.String()
		if !strings.Contains(body, `data-view="public"`) {
			t.Errorf("GET %s: the shell lacks the public view", target)
		}
		if first == "" {
			first = body
		} else if body != first {
			t.Errorf("GET %s: the shell differs from another token's", target)
		}
	}
	for _, tc := range []struct{ method, target, accept string }{
		{http.MethodGet, "/s/", browserAccept},
		{http.MethodGet, "/s", browserAccept},
		{http.MethodGet, "/s//x", browserAccept},
		{http.MethodGet, "/s/token", "*/*"},
		{"PROPFIND", "/s/token", browserAccept},
		{http.MethodGet, "/sx/token", browserAccept},
	} {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		r.Header.Set("Accept", tc.accept)
		if _, ok := h.Route(r); ok {
			t.Errorf("%s %s (Accept %q) is routed to the page", tc.method, tc.target, tc.accept)
		}
	}
}
