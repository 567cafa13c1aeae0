package webui

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestSignInMetaTagsAndCSP(t *testing.T) {
	h, err := New(Options{SignIn: SignIn{ClientID: `web"<client>`, Issuer: "https://id.example.test:8443/realms/x/"}})
	if err != nil {
		t.Fatal(err)
	}
	if !h.SignsIn() {
		t.Error("SignsIn = false with a client id")
	}
	for _, target := range []string{"/", "/webdav/any/path/", "/dav/spaces/nobody/"} {
		rec := httptest.NewRecorder()
		h.ServeSignIn(rec, httptest.NewRequest(http.MethodGet, target, nil))
		body := rec.Body.String()
		for _, want := range []string{
			`<meta name="davspaces-oidc-issuer" content="https://id.example.test:8443/realms/x">`,
			`<meta name="davspaces-oidc-client-id" content="web&#34;&lt;client&gt;">`,
			`<meta name="davspaces-oidc-scopes" content="openid profile email">`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the shell lacks %s", target, want)
			}
		}
		wantView := `data-view="folder"`
		if target == "/" {
			wantView = `data-view="overview"`
		}
		if rec.Code != http.StatusOK || !strings.Contains(body, wantView) {
			t.Errorf("%s: %d, want 200 with %s", target, rec.Code, wantView)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "connect-src 'self' https://id.example.test:8443;") || !strings.Contains(csp, "form-action 'none'") {
			t.Errorf("%s: Content-Security-Policy %q, want the issuer's origin in connect-src", target, csp)
		}
	}
	rec := httptest.NewRecorder()
	if handler, ok := h.Route(httptest.NewRequest(http.MethodGet, AssetPrefix+"app.js", nil)); ok {
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, AssetPrefix+"app.js", nil))
	}
	if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "https://id.example.test:8443") {
		t.Errorf("app.js: %d, CSP %q", rec.Code, rec.Header().Get("Content-Security-Policy"))
	}
}

func TestNoSignInNoMetaTags(t *testing.T) {
	h := newHandler(t)
	if h.SignsIn() {
		t.Error("SignsIn = true without a client id")
	}
	rec := httptest.NewRecorder()
	h.ServeOverview(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if body := rec.Body.String(); strings.Contains(body, "davspaces-oidc") || strings.Contains(body, "{{signin}}") {
		t.Errorf("the shell without sign-in has sign-in tags:\n%s", body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); csp != ContentSecurityPolicy {
		t.Errorf("Content-Security-Policy %q", csp)
	}
}

func TestSignInIssuerChecked(t *testing.T) {
	for _, issuer := range []string{"", "id.example.test", "ftp://id.example.test", "https://"} {
		if _, err := New(Options{SignIn: SignIn{ClientID: "web", Issuer: issuer}}); err == nil {
			t.Errorf("issuer %q accepted", issuer)
		}
	}
}
