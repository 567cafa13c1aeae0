package caddymodule

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/davspaces/davspaces/webui"
)

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

func TestUnmarshalCaddyfileWeb(t *testing.T) {
	for input, want := range map[string]*WebSettings{
		"davspaces {\n web off\n}": {Disabled: true},
		"davspaces {\n web on\n}":  {},
		"davspaces":                nil,
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
		"davspaces {\n web\n}":         "wrong argument count",
		"davspaces {\n web maybe\n}":   `want on or off, got "maybe"`,
		"davspaces {\n web off on\n}":  "wrong argument count",
		"davspaces {\n web {\n}\n}":    "wrong argument count",
		"davspaces {\n web offline\n}": `got "offline"`,
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
