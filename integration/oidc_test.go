package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testidp"
	"github.com/davspaces/davspaces/internal/testpeer"
)

const (
	relIssuer   = "http://openid.net/specs/connect/1.0/issuer"
	relInstance = "http://webfinger.owncloud/rel/server-instance"
)

// A project space whose members come from the provider's groups.
var labSpace = []string{
	"space Lab {",
	"	id lab",
	"	manager group:admins",
	"	viewer group:developers",
	"}",
}

// Instance rules exercising match, miss, break, templates, titles and a
// template that needs a claim nobody has.
var instanceRules = []string{
	"instance {",
	"	claim groups",
	`	regex ^admins$`,
	`	href "https://admin.example.test/{{.preferred_username}}"`,
	`	title en "Administration"`,
	"	break",
	"}",
	"instance {",
	"	claim email",
	`	regex "@example\.test$"`,
	`	href "{{.PLATFORM_URL}}/u/{{.preferred_username}}"`,
	`	title en "Mail users"`,
	`	title de "Mail-Benutzer"`,
	"}",
	"instance {",
	"	claim sub",
	"	regex .+",
	`	href "https://{{.department}}.example.test"`,
	"}",
	"instance {",
	"	claim sub",
	"	regex .+",
	"	href {{.OCIS_URL}}",
	`	title en "Everyone"`,
	"}",
}

type jrd struct {
	Subject string `json:"subject"`
	Links   []struct {
		Rel    string            `json:"rel"`
		Href   string            `json:"href"`
		Titles map[string]string `json:"titles"`
	} `json:"links"`
}

// lookup sends a WebFinger request with an optional Authorization header.
func lookup(t *testing.T, s *server, query, authorization string) (*http.Response, jrd) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/.well-known/webfinger?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	req.Header.Set("Origin", "https://localhost:9200")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc jrd
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
			t.Fatalf("decoding JRD: %v", err)
		}
	}
	return resp, doc
}

// hrefs lists "rel href" of the links.
func (d jrd) hrefs() []string {
	var out []string
	for _, l := range d.Links {
		out = append(out, l.Rel+" "+l.Href)
	}
	return out
}

func TestWebFingerLookups(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer, webfinger: instanceRules})
	resource := "resource=" + url.QueryEscape("acct:someone@localhost")

	resp, doc := lookup(t, s, resource, "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("anonymous lookup: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://localhost:9200" {
		t.Errorf("no CORS header for an allowed origin: %v", resp.Header)
	}
	if doc.Subject != "acct:someone@localhost" || !slices.Equal(doc.hrefs(), []string{relIssuer + " " + idp.Issuer}) {
		t.Fatalf("anonymous lookup: %+v", doc)
	}
	if _, basic := lookup(t, s, resource, "Basic ZWluc3RlaW46cmVsYXRpdml0eQ=="); !slices.Equal(basic.hrefs(), doc.hrefs()) {
		t.Fatalf("Basic credentials must be ignored: %+v", basic)
	}

	platform := "https://localhost:9200"
	tests := []struct {
		user string
		want []string
	}{
		{"alice", []string{relIssuer + " " + idp.Issuer, relInstance + " https://admin.example.test/alice"}},
		{"bob", []string{relIssuer + " " + idp.Issuer, relInstance + " " + platform + "/u/bob", relInstance + " " + platform}},
		{"carol", []string{relIssuer + " " + idp.Issuer, relInstance + " " + platform}},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			resp, doc := lookup(t, s, resource, "Bearer "+idp.Token(t, tt.user))
			if resp.StatusCode != http.StatusOK || !slices.Equal(doc.hrefs(), tt.want) {
				t.Fatalf("%d %v, want %v", resp.StatusCode, doc.hrefs(), tt.want)
			}
			if strings.Contains(strings.Join(doc.hrefs(), " "), "no value") {
				t.Fatalf("a template rendered a missing claim: %v", doc.hrefs())
			}
		})
	}
	_, doc = lookup(t, s, resource, "Bearer "+idp.Token(t, "bob"))
	if got := doc.Links[1].Titles; got["en"] != "Mail users" || got["de"] != "Mail-Benutzer" || doc.Links[0].Titles != nil {
		t.Fatalf("titles: %+v", doc.Links)
	}

	bob := "Bearer " + idp.Token(t, "bob")
	for query, want := range map[string][]string{
		"&rel=" + url.QueryEscape(relInstance):                                        {relInstance + " " + platform + "/u/bob", relInstance + " " + platform},
		"&rel=" + url.QueryEscape(relIssuer):                                          {relIssuer + " " + idp.Issuer},
		"&rel=" + url.QueryEscape(relIssuer) + "&rel=" + url.QueryEscape(relInstance): {relIssuer + " " + idp.Issuer, relInstance + " " + platform + "/u/bob", relInstance + " " + platform},
		"&rel=http%3A%2F%2Fexample.org%2Fother":                                       nil,
	} {
		if _, doc := lookup(t, s, resource+query, bob); !slices.Equal(doc.hrefs(), want) {
			t.Errorf("rel filter %s: %v, want %v", query, doc.hrefs(), want)
		}
	}

	for _, query := range []string{"", "resource=", "resource=no-scheme", "resource=acct:a&resource=acct:b"} {
		if resp, _ := lookup(t, s, query, ""); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("lookup ?%s: %d, want 400", query, resp.StatusCode)
		}
	}
}

func TestWebFingerRefusesBadTokens(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	resource := "resource=" + url.QueryEscape("https://localhost:9200")
	claims := func(change func(map[string]any)) map[string]any {
		c := idp.Claims("alice")
		change(c)
		return c
	}
	tokens := map[string]string{
		"expired":      idp.Mint(t, claims(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() })),
		"wrong issuer": idp.Mint(t, claims(func(c map[string]any) { c["iss"] = "https://issuer.invalid" })),
		"wrong key":    idp.Forge(t, idp.Claims("alice")),
		"alg none":     testidp.Unsigned(idp.Claims("alice")),
		"garbage":      "not-a-token",
	}
	for name, tok := range tokens {
		t.Run(name, func(t *testing.T) {
			resp, _ := lookup(t, s, resource, "Bearer "+tok)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", resp.StatusCode)
			}
			if h := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") || !strings.Contains(h, `error="invalid_token"`) {
				t.Fatalf("WWW-Authenticate %q", h)
			}
		})
	}
}

func TestUserinfoCachedAcrossLookups(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	opaque := "Bearer " + idp.OpaqueToken(t, "bob")
	for range 10 {
		resp, doc := lookup(t, s, "resource=acct:bob@localhost", opaque)
		if resp.StatusCode != http.StatusOK || len(doc.Links) != 2 {
			t.Fatalf("%d %+v", resp.StatusCode, doc)
		}
	}
	dav := &client{t: t, base: s.URL, token: idp.OpaqueToken(t, "bob"), http: http.DefaultClient}
	for range 10 {
		dav.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "0")
	}
	if n := idp.UserinfoCalls(t); n != 2 {
		t.Fatalf("20 requests with two opaque tokens made %d userinfo calls, want 2", n)
	}
}

func TestBearerWebDAV(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer, davspaces: labSpace})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	alice.expect(http.StatusCreated, "PUT", "/webdav/notes.txt", "by alice")
	_, body := alice.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "1")
	if !strings.Contains(body, "notes.txt") {
		t.Fatalf("PROPFIND does not list the new file:\n%s", body)
	}
	if got := alice.prop("/webdav/", ocNS, "owner-id"); got != "alice" {
		t.Fatalf("owner-id %q, want alice (preferred_username)", got)
	}
	if got := alice.prop("/webdav/", ocNS, "owner-display-name"); got != "Alice Archer" {
		t.Fatalf("owner-display-name %q", got)
	}
	alice.expect(http.StatusOK, "GET", "/dav/files/alice/notes.txt", "")

	// Roles from groups: admins manage the lab, developers view it, others
	// do not see it.
	alice.expect(http.StatusCreated, "PUT", "/dav/spaces/lab/plan.txt", "plan")
	bob := &client{t: t, base: s.URL, token: idp.Token(t, "bob"), http: http.DefaultClient}
	bob.expect(http.StatusOK, "GET", "/dav/spaces/lab/plan.txt", "")
	bob.expect(http.StatusForbidden, "PUT", "/dav/spaces/lab/plan.txt", "bob was here")
	carol := &client{t: t, base: s.URL, token: idp.Token(t, "carol"), http: http.DefaultClient}
	carol.expect(http.StatusNotFound, "PROPFIND", "/dav/spaces/lab/", "", "Depth", "0")
	carol.expect(http.StatusNotFound, "GET", "/dav/files/alice/notes.txt", "")

	// Basic stays possible for development.
	newClient(t, s.URL, "einstein").expect(http.StatusCreated, "PUT", "/webdav/basic.txt", "basic")

	anon := newClient(t, s.URL, "")
	resp, b := anon.expect(http.StatusUnauthorized, "PROPFIND", "/webdav/", "", "Depth", "0")
	wantDAVError(t, b, "NotAuthenticated")
	challenges := resp.Header.Values("WWW-Authenticate")
	if len(challenges) != 2 || !strings.HasPrefix(challenges[0], "Bearer realm=") || !strings.HasPrefix(challenges[1], "Basic realm=") {
		t.Fatalf("challenges %q, want Bearer and Basic", challenges)
	}
	expired := idp.Claims("alice")
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	stale := &client{t: t, base: s.URL, token: idp.Mint(t, expired), http: http.DefaultClient}
	resp, b = stale.expect(http.StatusUnauthorized, "PUT", "/webdav/notes.txt", "stale")
	wantDAVError(t, b, "NotAuthenticated")
	if h := resp.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="invalid_token"`) {
		t.Fatalf("WWW-Authenticate %q", h)
	}
	if _, got := alice.expect(http.StatusOK, "GET", "/webdav/notes.txt", ""); got != "by alice" {
		t.Fatalf("a refused request changed the file: %q", got)
	}
}

func TestProviderDown(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	known := idp.Token(t, "alice")
	dav := &client{t: t, base: s.URL, token: known, http: http.DefaultClient}
	dav.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "0")
	opaque := idp.OpaqueToken(t, "bob")
	idp.Stop()

	// A token verified before keeps working: its key is known.
	dav.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "0")
	// One that needs the provider is answered 503, never 401.
	dav.token = opaque
	resp, b := dav.expect(http.StatusServiceUnavailable, "PROPFIND", "/webdav/", "", "Depth", "0")
	wantDAVError(t, b, "ServiceUnavailable")
	if resp.Header.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	resource := "resource=acct:bob@localhost"
	if resp, _ := lookup(t, s, resource, "Bearer "+opaque); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("signed-in lookup with the provider down: %d, want 503", resp.StatusCode)
	}
	resp, doc := lookup(t, s, resource, "")
	if resp.StatusCode != http.StatusOK || !slices.Equal(doc.hrefs(), []string{relIssuer + " " + idp.Issuer}) {
		t.Fatalf("anonymous lookup with the provider down: %d %+v", resp.StatusCode, doc)
	}
}

func TestProviderNeverReachable(t *testing.T) {
	t.Parallel()
	dead := "http://127.0.0.1:" + itoa(freePort(t))
	s := startServer(t, serverOptions{issuer: dead})
	dav := &client{t: t, base: s.URL, token: "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln", http: http.DefaultClient}
	dav.expect(http.StatusServiceUnavailable, "PROPFIND", "/webdav/", "", "Depth", "0")
	newClient(t, s.URL, "marie").expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "0")
	resp, doc := lookup(t, s, "resource=acct:x@localhost", "")
	if resp.StatusCode != http.StatusOK || !slices.Equal(doc.hrefs(), []string{relIssuer + " " + dead}) {
		t.Fatalf("anonymous lookup: %d %+v", resp.StatusCode, doc)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// BenchmarkLookupOverHTTP measures WebFinger lookups through the real Caddy
// over loopback HTTP with warm caches (client time included), beside the
// floor of that stack: an OPTIONS request davspaces answers without work.
func BenchmarkLookupOverHTTP(b *testing.B) {
	idp := testidp.Start(b, testidp.Options{})
	s := startServer(b, serverOptions{issuer: idp.Issuer})
	lookupURL := s.URL + "/.well-known/webfinger?resource=acct:alice@localhost"
	token := "Bearer " + idp.Token(b, "alice")
	for _, bm := range []struct {
		name, method, url, auth string
		status                  int
	}{
		{"signed-in", http.MethodGet, lookupURL, token, http.StatusOK},
		{"anonymous", http.MethodGet, lookupURL, "", http.StatusOK},
		{"options-floor", http.MethodOptions, s.URL + "/webdav/", "", http.StatusNoContent},
	} {
		b.Run(bm.name, func(b *testing.B) {
			req, err := http.NewRequest(bm.method, bm.url, nil)
			if err != nil {
				b.Fatal(err)
			}
			if bm.auth != "" {
				req.Header.Set("Authorization", bm.auth)
			}
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			for b.Loop() {
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != bm.status {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}

// TestBadInstanceRuleRefused checks that a bad rule stops `caddy adapt` (the
// Caddyfile) and `caddy validate` (JSON, which provisions) with a message
// naming the problem.
func TestBadInstanceRuleRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	caddyfile := filepath.Join(dir, "Caddyfile")
	writeFile(t, caddyfile, `http://127.0.0.1:1 {
	webfinger {
		issuer https://idp.example.org
		instance {
			claim email
			regex "(unclosed"
			href https://example.org
		}
	}
}
`)
	out, err := testpeer.Command(caddyBinary, "adapt", "--config", caddyfile).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Caddyfile:8") || !strings.Contains(string(out), "regex") {
		t.Fatalf("caddy adapt: err %v\n%s", err, out)
	}

	config := filepath.Join(dir, "caddy.json")
	writeFile(t, config, `{"admin": {"disabled": true}, "apps": {"http": {"servers": {"s": {"listen": ["127.0.0.1:0"],
		"routes": [{"handle": [{"handler": "webfinger", "issuer": "https://idp.example.org",
			"instances": [{"claim": "sub", "regex": ".+", "href": "{{invalid}}ee"}]}]}]}}}}}`)
	cmd := testpeer.Command(caddyBinary, "validate", "--config", config)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "instance rule 0") || !strings.Contains(string(out), "href") {
		t.Fatalf("caddy validate: err %v\n%s", err, out)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// OIDC_AUDIENCE lists the audiences and client ids that Caddyfile.example
// accepts; unset, tokens of every client of the provider are accepted and
// the start-up log says so.
func TestOIDCAudienceFromEnvironment(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	claims := idp.Claims("bob")
	claims["aud"] = "account"
	delete(claims, "client_id")
	claims["azp"] = "another-app"
	otherClient := idp.Mint(t, claims)
	const warning = "access tokens issued to every client of the provider are accepted"

	tests := []struct {
		name        string
		audience    string // "" unsets OIDC_AUDIENCE
		otherStatus int
		warned      bool
	}{
		{"list set", "urn:unused, " + idp.Resource, http.StatusUnauthorized, false},
		{"unset", "", http.StatusMultiStatus, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OIDC_AUDIENCE", tt.audience)
			if tt.audience == "" {
				os.Unsetenv("OIDC_AUDIENCE") // t.Setenv restores it
			}
			s := startServer(t, serverOptions{issuer: idp.Issuer})
			ours := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
			ours.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "0")
			other := &client{t: t, base: s.URL, token: otherClient, http: http.DefaultClient}
			other.expect(tt.otherStatus, "PROPFIND", "/webdav/", "", "Depth", "0")
			log, err := os.ReadFile(s.log.Name())
			if err != nil {
				t.Fatal(err)
			}
			if warned := strings.Contains(string(log), warning); warned != tt.warned {
				t.Fatalf("warning logged = %v, want %v", warned, tt.warned)
			}
		})
	}
}
