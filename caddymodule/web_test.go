package caddymodule

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/davspaces/davspaces/webui"
)

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

func TestUnmarshalCaddyfileWeb(t *testing.T) {
	for input, want := range map[string]*WebSettings{
		"davspaces {\n web off\n}": {Disabled: true},
		"davspaces {\n web on\n}":  {},
		"davspaces":                nil,
		"davspaces {\n web {\n client_id {env.OIDC_WEB_CLIENT_ID}\n issuer https://id.example.test\n scopes openid profile\n scopes offline_access\n }\n personal_quota 1GB\n}": {
			ClientID: "{env.OIDC_WEB_CLIENT_ID}", Issuer: "https://id.example.test", Scopes: []string{"openid", "profile", "offline_access"},
		},
	} {
		var got DAVSpaces
		if err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(input)); err != nil {
			t.Errorf("%q: %v", input, err)
			continue
		}
		if !reflect.DeepEqual(got.Web, want) {
			t.Errorf("%q: Web %+v, want %+v", input, got.Web, want)
		}
	}
	for input, wantErr := range map[string]string{
		"davspaces {\n web\n}":                        "wrong argument count",
		"davspaces {\n web maybe\n}":                  `want on or off, got "maybe"`,
		"davspaces {\n web off on\n}":                 "wrong argument count",
		"davspaces {\n web {\n}\n}":                   "wrong argument count",
		"davspaces {\n web offline\n}":                `got "offline"`,
		"davspaces {\n web {\n client_id\n }\n}":      "wrong argument count",
		"davspaces {\n web {\n client_id a b\n }\n}":  "wrong argument count",
		"davspaces {\n web {\n secret s\n }\n}":       "unrecognized web subdirective: secret",
		"davspaces {\n web on {\n client_id a\n }\n}": "unrecognized subdirective",
	} {
		var got DAVSpaces
		err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(input))
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: error %v, want %q", input, err, wantErr)
		}
	}
}

func browserGet(target, user string) request {
	return request{method: http.MethodGet, target: target, user: user, header: map[string]string{"Accept": browserAccept}}
}

func TestServeHTTPWebPage(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	for _, target := range []string{"/", "/webdav/", "/dav/files/einstein/"} {
		rec := serve(t, d, browserGet(target, "einstein"))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "<!doctype html>") {
			t.Errorf("GET %s from a browser: %d %q, want the page", target, rec.Code, rec.Header().Get("Content-Type"))
		}
		if csp := rec.Header().Get("Content-Security-Policy"); csp != webui.ContentSecurityPolicy {
			t.Errorf("GET %s: Content-Security-Policy %q", target, csp)
		}
	}
	rec := serve(t, d, request{method: http.MethodGet, target: webui.AssetPrefix + "app.js"})
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("GET app.js: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	rec = serve(t, d, browserGet("/dav/files/marie/", "einstein"))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `data-view="notfound"`) {
		t.Errorf("another user's files from a browser: %d %s, want the not found page", rec.Code, rec.Body)
	}
	// Not asking for HTML: / is still the next handler's.
	if _, err := serveNext(d, request{method: http.MethodGet, target: "/", user: "einstein"}); !errors.Is(err, errNext) {
		t.Errorf("GET / without Accept: %v, want the next handler", err)
	}
}

func TestServeHTTPWebOff(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir(), Web: &WebSettings{Disabled: true}}
	mustProvision(t, d)
	for _, target := range []string{"/", webui.AssetPrefix + "app.js"} {
		if _, err := serveNext(d, browserGet(target, "einstein")); !errors.Is(err, errNext) {
			t.Errorf("GET %s with web off: %v, want the next handler", target, err)
		}
	}
	rec := serve(t, d, browserGet("/webdav/", "einstein"))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Type") != "httpd/unix-directory" {
		t.Errorf("a folder from a browser with web off: %d %q %q, want the WebDAV answer", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}

// TestServeHTTPWebSignedOut: a browser's page request without a user
// (oidc_auth's browser_pages let it through) gets the page when it signs
// in with OpenID Connect, the same for every path, and a Basic challenge
// otherwise; WebDAV requests without a user are refused as always.
func TestServeHTTPWebSignedOut(t *testing.T) {
	t.Setenv("DAVSPACES_TEST_WEB_CLIENT", "web-client")
	oidc := &DAVSpaces{Root: t.TempDir(), Web: &WebSettings{ClientID: "{env.DAVSPACES_TEST_WEB_CLIENT}", Issuer: "https://id.example.test/realms/x"}}
	mustProvision(t, oidc)
	var folderPage string
	for _, target := range []string{"/webdav/", "/dav/files/einstein/notes/", "/dav/spaces/no-such-space/secret/"} {
		rec := serve(t, oidc, browserGet(target, ""))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `content="web-client"`) {
			t.Errorf("GET %s signed out: %d, want the page with the client id:\n%s", target, rec.Code, rec.Body)
		}
		if folderPage == "" {
			folderPage = rec.Body.String()
		} else if rec.Body.String() != folderPage {
			t.Errorf("GET %s signed out: the page differs from another path's", target)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' https://id.example.test;") {
			t.Errorf("GET %s: Content-Security-Policy %q", target, csp)
		}
	}
	if rec := serve(t, oidc, browserGet("/", "")); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-view="overview"`) {
		t.Errorf("GET / signed out: %d, want the overview", rec.Code)
	}
	if _, err := serveNext(oidc, browserGet("/elsewhere", "")); !errors.Is(err, errNext) {
		t.Errorf("GET /elsewhere signed out: %v, want the next handler", err)
	}
	if rec, _ := serveNext(oidc, request{method: "PROPFIND", target: "/webdav/", header: map[string]string{"Depth": "0"}}); rec.Code != http.StatusUnauthorized {
		t.Errorf("PROPFIND signed out: %d, want 401", rec.Code)
	}

	basic := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, basic)
	for _, target := range []string{"/", "/webdav/", "/dav/spaces/no-such-space/"} {
		rec, err := serveNext(basic, browserGet(target, ""))
		var he caddyhttp.HandlerError
		if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Basic realm=") {
			t.Errorf("GET %s signed out without OIDC: %v, WWW-Authenticate %q; want 401 with a Basic challenge", target, err, rec.Header().Get("WWW-Authenticate"))
		}
	}
	// Unset, the environment variable means no sign-in in the page.
	unset := &DAVSpaces{Root: t.TempDir(), Web: &WebSettings{ClientID: "{env.DAVSPACES_TEST_UNSET_CLIENT}"}}
	mustProvision(t, unset)
	if unset.web.SignsIn() {
		t.Error("an empty client id signs in")
	}
}

func TestProvisionWebSignInNeedsIssuer(t *testing.T) {
	for ws, wantErr := range map[*WebSettings]string{
		{ClientID: "web"}:                          "client_id needs an issuer",
		{ClientID: "web", Issuer: "id.example"}:    "not an http(s) URL",
		{ClientID: "", Issuer: "not checked, off"}: "",
	} {
		d := &DAVSpaces{Root: t.TempDir(), Web: ws}
		err := provision(t, d)
		cleanup(t, d)
		if (wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), wantErr)) {
			t.Errorf("web %+v: provisioning error %v, want %q", *ws, err, wantErr)
		}
	}
}
