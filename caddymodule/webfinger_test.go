package caddymodule

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/davspaces/davspaces/internal/testidp"
	"github.com/davspaces/davspaces/webfinger"
)

// lookupTarget is the lookup of acct:alice@example.org, with extra query
// parameters appended.
const lookupTarget = webfinger.Path + "?resource=acct:alice@example.org"

// wfLink is a link of a lookup answer.
type wfLink struct {
	Rel    string            `json:"rel"`
	Href   string            `json:"href"`
	Titles map[string]string `json:"titles,omitempty"`
}

func issuerLink(href string) wfLink { return wfLink{Rel: webfinger.RelIssuer, Href: href} }

func instanceLink(href string, titles map[string]string) wfLink {
	return wfLink{Rel: webfinger.RelServerInstance, Href: href, Titles: titles}
}

// defaultTitles are the titles of the default instance rule.
var defaultTitles = map[string]string{"en": "davspaces Instance"}

// lookup sends a GET lookup through wf, with authorization as the
// Authorization header when not empty.
func lookup(wf *WebFinger, target, authorization string) *exchange {
	return runMiddleware(wf, mwCall{target: target, authorization: authorization})
}

// wantLinks fails the test unless x is a 200 lookup answer with the
// subject acct:alice@example.org and exactly links.
func wantLinks(t *testing.T, x *exchange, links ...wfLink) {
	t.Helper()
	if x.err != nil || x.next {
		t.Fatalf("ServeHTTP = %v, next ran: %v; want the lookup answered", x.err, x.next)
	}
	if x.rec.Code != http.StatusOK {
		t.Fatalf("lookup: %d %s", x.rec.Code, x.rec.Body)
	}
	if ct := x.rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var doc struct {
		Subject string   `json:"subject"`
		Links   []wfLink `json:"links"`
	}
	if err := json.Unmarshal(x.rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("answer %s: %v", x.rec.Body, err)
	}
	if doc.Subject != "acct:alice@example.org" {
		t.Errorf("subject %q", doc.Subject)
	}
	if links == nil {
		links = []wfLink{}
	}
	if doc.Links == nil {
		doc.Links = []wfLink{}
	}
	if !reflect.DeepEqual(doc.Links, links) {
		t.Errorf("links\n got  %+v\n want %+v", doc.Links, links)
	}
}

// wantAnswered fails the test unless the handler answered x itself, with
// status.
func wantAnswered(t *testing.T, x *exchange, status int) {
	t.Helper()
	if x.err != nil || x.next {
		t.Fatalf("ServeHTTP = %v, next ran: %v; want the lookup answered", x.err, x.next)
	}
	if x.rec.Code != status {
		t.Fatalf("lookup: %d %s, want %d", x.rec.Code, x.rec.Body, status)
	}
}

func TestWebFingerCaddyModule(t *testing.T) {
	info := WebFinger{}.CaddyModule()
	if info.ID != "http.handlers.webfinger" {
		t.Errorf("module id %s", info.ID)
	}
	if _, ok := info.New().(*WebFinger); !ok {
		t.Errorf("New returned %T", info.New())
	}
	if _, err := caddy.GetModule("http.handlers.webfinger"); err != nil {
		t.Errorf("module not registered: %v", err)
	}
}

// TestWebFingerProvisionErrors: a configuration given as JSON (not through
// the Caddyfile, which checks rules as it reads them) is checked by
// Provision, and a refused one holds no provider.
func TestWebFingerProvisionErrors(t *testing.T) {
	issuer := closedIssuer(t)
	rule := func(claim, regex, href string) []InstanceRule {
		return []InstanceRule{
			{Claim: "sub", Regex: ".+", Href: "{{.PLATFORM_URL}}"},
			{Claim: claim, Regex: regex, Href: href},
		}
	}
	tests := []struct {
		name string
		wf   WebFinger
		want string
	}{
		{"bad regex", WebFinger{Instances: rule("email", "(", "https://x.example.org")}, `webfinger: instance rule 1: regex "("`},
		{"bad template", WebFinger{Instances: rule("sub", ".+", "{{invalid}}")}, `webfinger: instance rule 1: href "{{invalid}}"`},
		{"unclosed template", WebFinger{Instances: rule("sub", ".+", "https://{{.sub")}, "webfinger: instance rule 1: href"},
		{"no claim", WebFinger{Instances: rule("", ".+", "https://x.example.org")}, "webfinger: instance rule 1: claim is empty"},
		{"no href", WebFinger{Instances: rule("sub", ".+", " ")}, "webfinger: instance rule 1: href is empty"},
		{"unknown relation", WebFinger{Relations: []string{webfinger.RelIssuer, "http://example.org/rel/other"}}, `webfinger: unknown relation "http://example.org/rel/other"`},
		{"bad platform url", WebFinger{PlatformURL: "cloud.example.org"}, `webfinger: platform URL "cloud.example.org"`},
		{"no issuer", WebFinger{OIDC: OIDC{Issuer: "-"}}, `webfinger: issuer ""`},
		{"symmetric algorithm", WebFinger{OIDC: OIDC{Algorithms: []string{"HS256"}}}, `"HS256" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wf := tt.wf
			switch wf.Issuer {
			case "":
				wf.Issuer = issuer
			case "-":
				wf.Issuer = ""
			}
			before := pooledProviders()
			err := provisionModule(t, &wf)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Provision = %v, want an error containing %q", err, tt.want)
			}
			if _, ok := providers.References(poolKey(t, wf.OIDC)); ok || pooledProviders() != before {
				t.Error("a refused configuration left a provider in the pool")
			}
			if wf.providerKey != "" {
				t.Errorf("providerKey %q after a failed Provision", wf.providerKey)
			}
		})
	}
}

func TestWebFingerCleanupWithoutProvision(t *testing.T) {
	if err := new(WebFinger).Cleanup(); err != nil {
		t.Errorf("Cleanup: %v", err)
	}
}

// TestWebFingerIssuer: the issuer defaults to the platform URL, and both
// expand placeholders. The anonymous lookup shows the issuer, without
// asking the provider.
func TestWebFingerIssuer(t *testing.T) {
	t.Setenv("DAVSPACES_TEST_WF_ISSUER", "https://idp.example.org/realms/main")
	t.Setenv("DAVSPACES_TEST_WF_PLATFORM", "https://cloud.example.org")
	tests := []struct {
		name                string
		issuer, platformURL string
		want                string
	}{
		{"issuer", "https://idp.example.org", "https://cloud.example.org", "https://idp.example.org"},
		{"platform url only", "", "https://cloud.example.org", "https://cloud.example.org"},
		{"issuer placeholder", "{env.DAVSPACES_TEST_WF_ISSUER}", "", "https://idp.example.org/realms/main"},
		{"platform url placeholder", "", "{env.DAVSPACES_TEST_WF_PLATFORM}", "https://cloud.example.org"},
		{"both placeholders", "{env.DAVSPACES_TEST_WF_ISSUER}", "{env.DAVSPACES_TEST_WF_PLATFORM}", "https://idp.example.org/realms/main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wf := &WebFinger{OIDC: OIDC{Issuer: tt.issuer}, PlatformURL: tt.platformURL}
			mustProvisionModule(t, wf)
			if wf.Issuer == "" {
				t.Error("Issuer is still empty after Provision")
			}
			if got := wf.identityConfig().Issuer; got != tt.want {
				t.Errorf("provider issuer %q, want %q", got, tt.want)
			}
			wantLinks(t, lookup(wf, lookupTarget, ""), issuerLink(tt.want))
		})
	}
}

func TestWebFingerPassesOn(t *testing.T) {
	wf := &WebFinger{OIDC: OIDC{Issuer: closedIssuer(t)}}
	mustProvisionModule(t, wf)
	tests := []struct{ method, target string }{
		{http.MethodGet, "/"},
		{http.MethodGet, "/webdav/"},
		{"PROPFIND", "/dav/spaces/"},
		{http.MethodGet, "/.well-known/openid-configurationx"},
		{http.MethodGet, "/.well-known/oauth-authorization-server"},
		{http.MethodOptions, webfinger.DiscoveryPath},
		{http.MethodGet, "/.well-known/webfingerx?resource=acct:alice@example.org"},
		{http.MethodGet, "/.well-known/webfinger/?resource=acct:alice@example.org"},
		{http.MethodGet, "/static/.well-known/webfinger?resource=acct:alice@example.org"},
		// CORS preflights go to the site's CORS route.
		{http.MethodOptions, lookupTarget},
		{http.MethodOptions, webfinger.Path},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			x := runMiddleware(wf, mwCall{method: tt.method, target: tt.target, authorization: bearer("some-token")})
			if x.err != nil || !x.next {
				t.Fatalf("ServeHTTP = %v, next ran: %v; want the request passed on", x.err, x.next)
			}
			if x.rec.Body.Len() != 0 || len(x.rec.Header()) != 0 {
				t.Errorf("the handler wrote %v %q before passing the request on", x.rec.Header(), x.rec.Body)
			}
		})
	}
}

func TestWebFingerAnswersLookupPath(t *testing.T) {
	wf := &WebFinger{OIDC: OIDC{Issuer: closedIssuer(t)}}
	mustProvisionModule(t, wf)
	tests := []struct {
		method, target string
		want           int
	}{
		{http.MethodGet, lookupTarget, http.StatusOK},
		{http.MethodHead, lookupTarget, http.StatusOK},
		{http.MethodGet, webfinger.Path, http.StatusBadRequest},
		{http.MethodGet, webfinger.Path + "?resource=", http.StatusBadRequest},
		{http.MethodPost, lookupTarget, http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			wantAnswered(t, runMiddleware(wf, mwCall{method: tt.method, target: tt.target}), tt.want)
		})
	}
}

// TestWebFingerServesDiscovery: the issuer's discovery document at the
// server root, byte for byte, fetched once with the verifier of the
// oidc_auth handler it shares, revalidated by ETag.
func TestWebFingerServesDiscovery(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{IssuerPath: "/realms/test"})
	settings := OIDC{Issuer: idp.Issuer}
	a := &OIDCAuth{OIDC: settings}
	mustProvisionModule(t, a)
	wf := &WebFinger{OIDC: settings}
	mustProvisionModule(t, wf)

	x := runMiddleware(wf, mwCall{target: webfinger.DiscoveryPath + "?issuer=http://169.254.169.254/"})
	wantAnswered(t, x, http.StatusOK)
	if want := getBody(t, idp.Issuer+webfinger.DiscoveryPath); x.rec.Body.String() != want {
		t.Fatalf("document\n%s\nwant the provider's\n%s", x.rec.Body, want)
	}
	etag := x.rec.Header().Get("ETag")
	if ct := x.rec.Header().Get("Content-Type"); etag == "" || ct != "application/json" {
		t.Fatalf("ETag %q, Content-Type %q", etag, ct)
	}
	if _, err := a.provider.Verify(t.Context(), idp.Token(t, "alice")); err != nil {
		t.Fatal(err)
	}
	x = runMiddleware(wf, mwCall{target: webfinger.DiscoveryPath, ifNoneMatch: etag})
	wantAnswered(t, x, http.StatusNotModified)
	if n := a.provider.Stats().Discoveries; n != 1 {
		t.Errorf("%d discoveries, want 1 shared by both handlers", n)
	}
}

func TestWebFingerDiscoveryErrors(t *testing.T) {
	down := &WebFinger{OIDC: OIDC{Issuer: closedIssuer(t)}}
	mustProvisionModule(t, down)
	x := runMiddleware(down, mwCall{target: webfinger.DiscoveryPath})
	wantAnswered(t, x, http.StatusServiceUnavailable)
	if ra := x.rec.Header().Get("Retry-After"); ra != "5" {
		t.Errorf("Retry-After %q, want 5", ra)
	}

	// httptest's requests come to http://example.com.
	self := &WebFinger{OIDC: OIDC{Issuer: "http://example.com/"}}
	mustProvisionModule(t, self)
	wantAnswered(t, runMiddleware(self, mwCall{target: webfinger.DiscoveryPath}), http.StatusNotFound)
}

func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWebFingerSharesProvider: a webfinger and an oidc_auth handler of one
// provider share it.
func TestWebFingerSharesProvider(t *testing.T) {
	settings := OIDC{Issuer: closedIssuer(t)}
	a := &OIDCAuth{OIDC: settings}
	mustProvisionModule(t, a)
	wf := &WebFinger{OIDC: settings, PlatformURL: "https://cloud.example.org"}
	mustProvisionModule(t, wf)
	if wf.providerKey != a.providerKey {
		t.Fatalf("webfinger key %q, oidc_auth key %q", wf.providerKey, a.providerKey)
	}
	if n, _ := providers.References(a.providerKey); n != 2 {
		t.Errorf("pool references %d, want 2", n)
	}
	if err := wf.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if n, _ := providers.References(a.providerKey); n != 1 {
		t.Errorf("pool references after the webfinger Cleanup %d, want 1", n)
	}
	if err := a.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if _, ok := providers.References(poolKey(t, settings)); ok {
		t.Error("still pooled after both Cleanups")
	}
}

func TestWebFingerLookup(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	t.Setenv("DAVSPACES_TEST_WF_PLATFORM", "https://cloud.example.org/")
	configured := &WebFinger{OIDC: OIDC{Issuer: idp.Issuer}, PlatformURL: "{env.DAVSPACES_TEST_WF_PLATFORM}"}
	mustProvisionModule(t, configured)
	origin := &WebFinger{OIDC: OIDC{Issuer: idp.Issuer}}
	mustProvisionModule(t, origin)
	issuer := issuerLink(idp.Issuer)
	aliceJWT, aliceOpaque := idp.Token(t, "alice"), idp.OpaqueToken(t, "alice")

	tests := []struct {
		name          string
		wf            *WebFinger
		target        string
		authorization string
		want          []wfLink
	}{
		{"anonymous", configured, lookupTarget, "", []wfLink{issuer}},
		{"basic is anonymous", configured, lookupTarget, basic("alice", "alice-password"), []wfLink{issuer}},
		{"alice", configured, lookupTarget, bearer(aliceJWT), []wfLink{issuer, instanceLink("https://cloud.example.org", defaultTitles)}},
		{"alice, opaque token", configured, lookupTarget, bearer(aliceOpaque), []wfLink{issuer, instanceLink("https://cloud.example.org", defaultTitles)}},
		{"carol", configured, lookupTarget, bearer(idp.Token(t, "carol")), []wfLink{issuer, instanceLink("https://cloud.example.org", defaultTitles)}},
		{"alice, request origin", origin, lookupTarget, bearer(aliceJWT), []wfLink{issuer, instanceLink("http://example.com", defaultTitles)}},
		{"alice, issuer only", configured, lookupTarget + "&rel=" + url.QueryEscape(webfinger.RelIssuer), bearer(aliceJWT), []wfLink{issuer}},
		{"alice, instance only", configured, lookupTarget + "&rel=" + url.QueryEscape(webfinger.RelServerInstance), bearer(aliceJWT), []wfLink{instanceLink("https://cloud.example.org", defaultTitles)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := lookup(tt.wf, tt.target, tt.authorization)
			wantLinks(t, x, tt.want...)
			cache := "no-cache"
			if strings.HasPrefix(tt.authorization, "Bearer ") {
				cache = "no-store" // the answer is the user's
			}
			if cc := x.rec.Header().Get("Cache-Control"); cc != cache {
				t.Errorf("Cache-Control %q, want %q", cc, cache)
			}
		})
	}

	for name, token := range map[string]string{
		"garbage": "garbage",
		"expired": idp.Mint(t, func() map[string]any {
			c := idp.Claims("alice")
			c["iat"] = time.Now().Add(-2 * time.Hour).Unix()
			c["exp"] = time.Now().Add(-time.Hour).Unix()
			return c
		}()),
		"forged": idp.Forge(t, idp.Claims("alice")),
	} {
		t.Run("refused "+name, func(t *testing.T) {
			x := lookup(configured, lookupTarget, bearer(token))
			wantAnswered(t, x, http.StatusUnauthorized)
			if c := x.rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(c, `Bearer error="invalid_token"`) {
				t.Errorf("WWW-Authenticate %q", c)
			}
		})
	}
}

// TestWebFingerInstanceRules: rules configured as JSON reach the handler
// in order, with their titles and break.
func TestWebFingerInstanceRules(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	wf := &WebFinger{
		OIDC:        OIDC{Issuer: idp.Issuer},
		PlatformURL: "https://cloud.example.org",
		Instances: []InstanceRule{
			{Claim: "groups", Regex: "^admins$", Href: "https://admin.example.org/{{.preferred_username}}", Titles: map[string]string{"en": "Administration", "de": "Verwaltung"}, Break: true},
			{Claim: "email", Regex: `@example\.test$`, Href: "{{.OCIS_URL}}/u/{{.preferred_username}}"},
			{Claim: "groups", Regex: "developers", Href: "https://dev.example.org"},
		},
	}
	mustProvisionModule(t, wf)
	issuer := issuerLink(idp.Issuer)
	tests := []struct {
		user  string
		token string
		want  []wfLink
	}{
		// alice is in admins: the first rule breaks.
		{"alice", idp.Token(t, "alice"), []wfLink{issuer, instanceLink("https://admin.example.org/alice", map[string]string{"en": "Administration", "de": "Verwaltung"})}},
		{"bob", idp.Token(t, "bob"), []wfLink{issuer, instanceLink("https://cloud.example.org/u/bob", nil), instanceLink("https://dev.example.org", nil)}},
		{"bob, opaque token", idp.OpaqueToken(t, "bob"), []wfLink{issuer, instanceLink("https://cloud.example.org/u/bob", nil), instanceLink("https://dev.example.org", nil)}},
		// carol has neither groups nor email: signed in, but no instance.
		{"carol", idp.Token(t, "carol"), []wfLink{issuer}},
	}
	for _, tt := range tests {
		t.Run(tt.user, func(t *testing.T) {
			wantLinks(t, lookup(wf, lookupTarget, bearer(tt.token)), tt.want...)
		})
	}

	// No instance relation: only the issuer, for everybody.
	issuerOnly := &WebFinger{OIDC: OIDC{Issuer: idp.Issuer}, Relations: []string{webfinger.RelIssuer}, Instances: wf.Instances}
	mustProvisionModule(t, issuerOnly)
	wantLinks(t, lookup(issuerOnly, lookupTarget, bearer(idp.Token(t, "alice"))), issuer)
}

// TestWebFingerProviderUnavailable: the issuer lookup works while the
// provider is down, which clients need to sign in; a signed-in lookup
// answers 503 and never 401, so clients keep their tokens.
func TestWebFingerProviderUnavailable(t *testing.T) {
	issuer := closedIssuer(t)
	wf := &WebFinger{OIDC: OIDC{Issuer: issuer, Timeout: caddy.Duration(2 * time.Second)}, PlatformURL: "https://cloud.example.org"}
	mustProvisionModule(t, wf)

	wantLinks(t, lookup(wf, lookupTarget, ""), issuerLink(issuer))
	for name, token := range map[string]string{
		"opaque": "an-opaque-token",
		"jwt":    selfSignedJWT(t, issuer),
	} {
		t.Run(name, func(t *testing.T) {
			x := lookup(wf, lookupTarget, bearer(token))
			wantAnswered(t, x, http.StatusServiceUnavailable)
			if ra := x.rec.Header().Get("Retry-After"); ra != "5" {
				t.Errorf("Retry-After %q, want 5", ra)
			}
			if c := x.rec.Header().Get("WWW-Authenticate"); c != "" {
				t.Errorf("WWW-Authenticate %q on a 503", c)
			}
		})
	}
	// Still there after the failures.
	wantLinks(t, lookup(wf, lookupTarget, ""), issuerLink(issuer))
}
