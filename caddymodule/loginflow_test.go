package caddymodule

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

const nextcloudcmdAgent = "Mozilla/5.0 (Linux) mirall/3.7.3git (Nextcloud, debian-6.1.0 ClientArchitecture: x86_64 OsArchitecture: x86_64)"

// TestServeHTTPLoginFlow: davspaces serves Login Flow v2 beside the rest,
// a browser's login URL without a user gets the Basic prompt where the
// page does not sign in itself, and Nextcloud's clients see the version
// that makes them use it.
func TestServeHTTPLoginFlow(t *testing.T) {
	d := &DAVSpaces{Root: t.TempDir()}
	mustProvision(t, d)
	rec := serve(t, d, request{method: http.MethodPost, target: "/index.php/login/v2", header: map[string]string{"User-Agent": "laptop (Desktop Client - Linux)"}})
	var start struct {
		Poll  struct{ Token, Endpoint string }
		Login string
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &start) != nil || start.Poll.Token == "" {
		t.Fatalf("start: %d %s", rec.Code, rec.Body)
	}
	login, _ := url.Parse(start.Login)
	page, err := serveNext(d, request{method: http.MethodGet, target: login.Path, header: map[string]string{"Accept": "text/html"}})
	if err == nil || !strings.HasPrefix(page.Header().Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("the login URL without a user: %v %q", err, page.Header().Get("WWW-Authenticate"))
	}
	page = serve(t, d, request{method: http.MethodGet, target: login.Path, user: "einstein", header: map[string]string{"Accept": "text/html"}})
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), `content="laptop (Desktop Client - Linux)"`) {
		t.Errorf("the login URL signed in: %d %.300s", page.Code, page.Body)
	}
	grant := serve(t, d, request{method: http.MethodPost, target: "/index.php/login/v2/grant", user: "einstein",
		body:   url.Values{"token": {strings.TrimPrefix(login.Path, "/index.php/login/v2/flow/")}}.Encode(),
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "cross-site"}})
	if grant.Code != http.StatusForbidden {
		t.Errorf("a grant from another site: %d %s", grant.Code, grant.Body)
	}
	for agent, want := range map[string]string{nextcloudcmdAgent: "20.0.0.0", "Mozilla/5.0 (Linux) mirall/5.3.2 (ownCloud, ubuntu)": "10.11.0.0"} {
		rec := serve(t, d, request{method: http.MethodGet, target: "/status.php", header: map[string]string{"User-Agent": agent}})
		if !strings.Contains(rec.Body.String(), `"version":"`+want+`"`) {
			t.Errorf("status.php for %q: %s, want version %s", agent, rec.Body, want)
		}
	}
	// A Nextcloud client's GET of / is no page: it is passed on (404).
	if _, err := serveNext(d, request{method: http.MethodGet, target: "/", header: map[string]string{"User-Agent": nextcloudcmdAgent}}); !errors.Is(err, errNext) {
		t.Errorf("a Nextcloud client's GET of /: %v, want it passed on", err)
	}
}

// TestNextcloudProbe: oidc_auth's browser_pages let a Nextcloud client's
// GET of / through without credentials, and nothing else of the kind.
func TestNextcloudProbe(t *testing.T) {
	for _, tc := range []struct {
		method, path, agent, authorization string
		want                               bool
	}{
		{http.MethodGet, "/", nextcloudcmdAgent, "", true},
		{http.MethodGet, "/", "Mozilla/5.0 (Android) Nextcloud-android/3.30.1", "", true},
		{http.MethodGet, "/", "Mozilla/5.0 (Linux) mirall/5.3.2 (ownCloud, ubuntu)", "", false},
		{http.MethodGet, "/webdav/", nextcloudcmdAgent, "", false},
		{"PROPFIND", "/", nextcloudcmdAgent, "", false},
		{http.MethodGet, "/", nextcloudcmdAgent, "Basic eDp5", false},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		r.Header.Set("User-Agent", tc.agent)
		if tc.authorization != "" {
			r.Header.Set("Authorization", tc.authorization)
		}
		if got := isNextcloudProbe(r); got != tc.want {
			t.Errorf("%s %s by %q (%q): %v, want %v", tc.method, tc.path, tc.agent, tc.authorization, got, tc.want)
		}
	}
}
