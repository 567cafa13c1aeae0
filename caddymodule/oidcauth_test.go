package caddymodule

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/caddyauth"
	"github.com/go-jose/go-jose/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/davspaces/davspaces/identity"
	"github.com/davspaces/davspaces/internal/testidp"
	"github.com/davspaces/davspaces/webui"
)

// The token tests run against a real OpenID Connect provider (testidp:
// oidc-provider on Node.js, on 127.0.0.1). Its users are alice (groups
// admins and developers), bob (developers) and carol (no email, no groups).

// closedIssuer returns an issuer URL on a loopback port nothing listens on:
// every request to it is refused at once.
func closedIssuer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/realms/test"
}

// provisionCleaner is a module with a Provision and a Cleanup.
type provisionCleaner interface {
	caddy.Provisioner
	caddy.CleanerUpper
}

// provisionModule provisions m within provisionTimeout and cleans it up at
// the end of the test, also after a failed Provision (as Caddy does).
func provisionModule(t *testing.T, m provisionCleaner) error {
	t.Helper()
	ctx := newContext(t)
	done := make(chan error, 1)
	go func() { done <- m.Provision(ctx) }()
	select {
	case err := <-done:
		// Registered after newContext's cancel, so it runs before it.
		t.Cleanup(func() {
			if err := m.Cleanup(); err != nil {
				t.Errorf("Cleanup: %v", err)
			}
		})
		return err
	case <-time.After(provisionTimeout):
		t.Fatalf("Provision did not return within %v", provisionTimeout)
		return nil
	}
}

func mustProvisionModule(t *testing.T, m provisionCleaner) {
	t.Helper()
	if err := provisionModule(t, m); err != nil {
		t.Fatalf("Provision: %v", err)
	}
}

// mwCall is one request through a middleware handler.
type mwCall struct {
	method, target, body string
	// authorization is the Authorization header, when not empty.
	authorization string
	// accept is the Accept header, when not empty.
	accept string
	// ifNoneMatch is the If-None-Match header, when not empty.
	ifNoneMatch string
	// remoteAddr is the client's address; empty means httptest's.
	remoteAddr string
	// setup, when not nil, sets placeholders before the handler runs.
	setup func(*caddy.Replacer)
	// next is the next handler; nil means one that only records that it
	// ran.
	next caddyhttp.Handler
}

// exchange is what came of an mwCall.
type exchange struct {
	rec  *httptest.ResponseRecorder
	repl *caddy.Replacer
	next bool  // the default next handler ran
	err  error // what ServeHTTP returned
}

// runMiddleware sends c through h the way a Caddy server would: with a
// replacer, the vars map and a ResponseWriter.
func runMiddleware(h caddyhttp.MiddlewareHandler, c mwCall) *exchange {
	if c.method == "" {
		c.method = http.MethodGet
	}
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	r := httptest.NewRequest(c.method, c.target, body)
	if c.authorization != "" {
		r.Header.Set("Authorization", c.authorization)
	}
	if c.accept != "" {
		r.Header.Set("Accept", c.accept)
	}
	if c.ifNoneMatch != "" {
		r.Header.Set("If-None-Match", c.ifNoneMatch)
	}
	if c.remoteAddr != "" {
		r.RemoteAddr = c.remoteAddr
	}
	x := &exchange{rec: httptest.NewRecorder(), repl: caddy.NewReplacer()}
	r = caddyhttp.PrepareRequest(r, x.repl, x.rec, &caddyhttp.Server{})
	if c.setup != nil {
		c.setup(x.repl)
	}
	next := c.next
	if next == nil {
		next = caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
			x.next = true
			return nil
		})
	}
	x.err = h.ServeHTTP(x.rec, r, next)
	return x
}

func bearer(token string) string { return "Bearer " + token }

func basic(user, password string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
}

// wantPassed fails the test unless x went to the next handler.
func wantPassed(t *testing.T, x *exchange) {
	t.Helper()
	if x.err != nil || !x.next {
		t.Fatalf("ServeHTTP = %v, next handler ran: %v; want it to pass the request on (WWW-Authenticate %q)",
			x.err, x.next, x.rec.Header().Values("WWW-Authenticate"))
	}
}

// wantHandlerError fails the test unless ServeHTTP returned a HandlerError
// with status and did not call the next handler.
func wantHandlerError(t *testing.T, x *exchange, status int) {
	t.Helper()
	if x.next {
		t.Errorf("the next handler ran")
	}
	var he caddyhttp.HandlerError
	if !errors.As(x.err, &he) {
		t.Fatalf("ServeHTTP = %v, want a HandlerError %d", x.err, status)
	}
	if he.StatusCode != status {
		t.Fatalf("status %d (%v), want %d", he.StatusCode, he.Err, status)
	}
	if id, ok := x.repl.GetString("http.auth.user.id"); ok {
		t.Errorf("a refused request has user %q", id)
	}
}

// wantUnauthorized fails the test unless x was refused with 401 and exactly
// the challenges given, in order.
func wantUnauthorized(t *testing.T, x *exchange, challenges ...string) {
	t.Helper()
	wantHandlerError(t, x, http.StatusUnauthorized)
	if got := x.rec.Header().Values("WWW-Authenticate"); !slices.Equal(got, challenges) {
		t.Errorf("WWW-Authenticate %q, want %q", got, challenges)
	}
}

// wantUser fails the test unless the placeholders name the user; an empty
// name, email or groups must be absent.
func wantUser(t *testing.T, repl *caddy.Replacer, id, name, email, groups string) {
	t.Helper()
	for placeholder, want := range map[string]string{
		"http.auth.user.id":    id,
		"http.auth.user.name":  name,
		"http.auth.user.email": email,
	} {
		got, ok := repl.GetString(placeholder)
		if want == "" && ok {
			t.Errorf("{%s} = %q, want it unset", placeholder, got)
		} else if got != want {
			t.Errorf("{%s} = %q, want %q", placeholder, got, want)
		}
	}
	v, ok := repl.Get("http.auth.user.groups")
	switch {
	case groups == "" && ok:
		t.Errorf("{http.auth.user.groups} = %#v, want it unset", v)
	case groups == "":
	case !ok:
		t.Errorf("{http.auth.user.groups} unset, want %q", groups)
	default:
		g, isList := v.(userGroups)
		if !isList {
			t.Errorf("{http.auth.user.groups} is a %T, want userGroups", v)
		} else if g.String() != groups {
			t.Errorf("{http.auth.user.groups} = %q, want %q", g, groups)
		}
		if s, _ := repl.GetString("http.auth.user.groups"); s != groups {
			t.Errorf("{http.auth.user.groups} prints %q, want %q", s, groups)
		}
	}
}

// selfSignedJWT returns a well-formed access token of issuer signed by a
// key no provider knows.
func selfSignedJWT(t *testing.T, issuer string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	return testidp.Sign(t, jose.ES256, key, "unknown-key", map[string]any{
		"iss": issuer, "sub": "someone", "iat": now, "exp": now + 3600, "preferred_username": "someone",
	})
}

// poolKey is the providers pool key of o's configuration.
func poolKey(t *testing.T, o OIDC) string {
	t.Helper()
	b, err := json.Marshal(verifierConfig{Identity: o.identityConfig(), TokenRate: o.TokenRate, TokenBurst: o.TokenBurst})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pooledProviders counts the providers in the pool.
func pooledProviders() int {
	n := 0
	providers.Range(func(any, any) bool { n++; return true })
	return n
}

// basicFallback is the providers map of an http_basic fallback with the
// account einstein, password "relativity".
func basicFallback(t *testing.T) caddy.ModuleMap {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("relativity"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return caddy.ModuleMap{"http_basic": caddyconfig.JSON(caddyauth.HTTPBasicAuth{
		HashRaw:     caddyconfig.JSONModuleObject(caddyauth.BcryptHash{}, "algorithm", "bcrypt", nil),
		AccountList: []caddyauth.Account{{Username: "einstein", Password: string(hash)}},
	}, nil)}
}

func TestOIDCAuthCaddyModule(t *testing.T) {
	info := OIDCAuth{}.CaddyModule()
	if info.ID != "http.handlers.oidc_auth" {
		t.Errorf("module id %s", info.ID)
	}
	if _, ok := info.New().(*OIDCAuth); !ok {
		t.Errorf("New returned %T", info.New())
	}
	if _, err := caddy.GetModule("http.handlers.oidc_auth"); err != nil {
		t.Errorf("module not registered: %v", err)
	}
}

func TestOIDCAuthProvisionDefaults(t *testing.T) {
	issuer := closedIssuer(t)
	tests := []struct {
		name                      string
		a                         OIDCAuth
		wantUser, wantName, wantG string
	}{
		{"defaults", OIDCAuth{}, "preferred_username", "name", "groups"},
		{"configured", OIDCAuth{UserClaim: "sub", NameClaim: "given_name", GroupsClaim: "roles"}, "sub", "given_name", "roles"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.a
			a.Issuer = issuer
			start := time.Now()
			mustProvisionModule(t, &a)
			// Nothing listens on the issuer's port: a Provision that asked
			// the provider would fail or take its timeout.
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Provision took %v", d)
			}
			if a.UserClaim != tt.wantUser || a.NameClaim != tt.wantName || a.GroupsClaim != tt.wantG {
				t.Errorf("claims %q, %q, %q; want %q, %q, %q",
					a.UserClaim, a.NameClaim, a.GroupsClaim, tt.wantUser, tt.wantName, tt.wantG)
			}
			if a.provider == nil || a.providerKey == "" {
				t.Fatal("no provider acquired")
			}
			if a.provider.Issuer() != issuer {
				t.Errorf("provider issuer %q, want %q", a.provider.Issuer(), issuer)
			}
			if s := a.provider.Stats(); s != (identity.Stats{}) {
				t.Errorf("Provision contacted the provider: %+v", s)
			}
		})
	}
}

func TestOIDCAuthProvisionErrors(t *testing.T) {
	issuer := closedIssuer(t)
	tests := []struct {
		name string
		a    OIDCAuth
		want string
	}{
		{"no issuer", OIDCAuth{}, "issuer URL is required"},
		{"issuer not http", OIDCAuth{OIDC: OIDC{Issuer: "ftp://idp.example.org"}}, "must be an http(s) URL"},
		{"issuer placeholder unset", OIDCAuth{OIDC: OIDC{Issuer: "{env.DAVSPACES_TEST_UNSET_ISSUER}"}}, "issuer URL is required"},
		{"symmetric algorithm", OIDCAuth{OIDC: OIDC{Issuer: issuer, Algorithms: []string{"HS256"}}}, `"HS256" is not supported`},
		{"unknown fallback", OIDCAuth{OIDC: OIDC{Issuer: issuer}, ProvidersRaw: caddy.ModuleMap{"nope": json.RawMessage(`{}`)}}, "loading authentication providers"},
		{"negative token rate", OIDCAuth{OIDC: OIDC{Issuer: issuer, TokenRate: -1}}, "must not be negative"},
		{"negative token burst", OIDCAuth{OIDC: OIDC{Issuer: issuer, TokenBurst: -1}}, "must not be negative"},
		{"introspection endpoint not a URL", OIDCAuth{OIDC: OIDC{Issuer: issuer, Introspection: &Introspection{ClientID: "davspaces", ClientSecret: "s", Endpoint: "ftp://idp/introspect"}}}, "introspection endpoint"},
		{"introspection client id placeholder unset", OIDCAuth{OIDC: OIDC{Issuer: issuer, Introspection: &Introspection{ClientID: "{env.DAVSPACES_TEST_UNSET_CLIENT}", ClientSecret: "s"}}}, "introspection needs a client id"},
		{"negative userinfo concurrency", OIDCAuth{OIDC: OIDC{Issuer: issuer, UserinfoConcurrency: -1}}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := pooledProviders()
			a := tt.a
			err := provisionModule(t, &a)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Provision = %v, want an error containing %q", err, tt.want)
			}
			if _, ok := providers.References(poolKey(t, a.OIDC)); ok || pooledProviders() != before {
				t.Error("a failed Provision left a provider in the pool")
			}
			if a.providerKey != "" {
				t.Errorf("providerKey %q after a failed Provision", a.providerKey)
			}
		})
	}
}

func TestOIDCAuthCleanupWithoutProvision(t *testing.T) {
	if err := new(OIDCAuth).Cleanup(); err != nil {
		t.Errorf("Cleanup: %v", err)
	}
}

// TestOIDCAuthSharesProvider: handlers with the same provider settings (as
// after a reload) share one provider, and with it its keys and token cache;
// the last Cleanup removes it from the pool.
func TestOIDCAuthSharesProvider(t *testing.T) {
	issuer := closedIssuer(t)
	t.Setenv("DAVSPACES_TEST_OIDC_ISSUER", issuer)
	settings := OIDC{Issuer: issuer, Audiences: []string{"api"}, Timeout: caddy.Duration(2 * time.Second)}

	first := &OIDCAuth{OIDC: settings}
	// Claims and realm are the handler's business, not the provider's.
	second := &OIDCAuth{OIDC: settings, UserClaim: "sub", NameClaim: "nickname", Realm: "files"}
	// The key is made of the expanded issuer.
	third := &OIDCAuth{OIDC: settings}
	third.Issuer = "{env.DAVSPACES_TEST_OIDC_ISSUER}"
	same := []*OIDCAuth{first, second, third}
	for _, a := range same {
		mustProvisionModule(t, a)
	}
	for i, a := range same[1:] {
		if a.provider != first.provider || a.providerKey != first.providerKey {
			t.Errorf("handler %d has another provider than the first", i+1)
		}
	}
	key, shared := first.providerKey, first.provider
	if n, _ := providers.References(key); n != len(same) {
		t.Errorf("pool references %d, want %d", n, len(same))
	}

	// Any provider setting makes another provider.
	variants := map[string]func(*OIDC){
		"issuer":     func(o *OIDC) { o.Issuer += "/other" },
		"audiences":  func(o *OIDC) { o.Audiences = []string{"other"} },
		"algorithms": func(o *OIDC) { o.Algorithms = []string{"ES256"} },
		"insecure":   func(o *OIDC) { o.Insecure = true },
		"timeout":    func(o *OIDC) { o.Timeout = caddy.Duration(3 * time.Second) },
		"leeway":     func(o *OIDC) { o.Leeway = caddy.Duration(time.Minute) },
		"cache size": func(o *OIDC) { o.CacheSize = 5 },
		"opaque ttl": func(o *OIDC) { o.OpaqueTTL = caddy.Duration(time.Second) },
	}
	for name, change := range variants {
		t.Run(name, func(t *testing.T) {
			o := settings
			o.Audiences = slices.Clone(settings.Audiences)
			change(&o)
			a := &OIDCAuth{OIDC: o}
			mustProvisionModule(t, a)
			if a.provider == shared || a.providerKey == key {
				t.Errorf("another %s shares the provider", name)
			}
			if err := a.Cleanup(); err != nil {
				t.Fatal(err)
			}
			if _, ok := providers.References(poolKey(t, o)); ok {
				t.Error("still pooled after Cleanup")
			}
		})
	}

	for i, a := range same {
		if err := a.Cleanup(); err != nil {
			t.Fatalf("Cleanup %d: %v", i, err)
		}
		n, ok := providers.References(key)
		if left := len(same) - 1 - i; (left == 0 && ok) || (left > 0 && n != left) {
			t.Errorf("after %d Cleanups: references %d, %v; want %d", i+1, n, ok, left)
		}
	}
	if err := first.Cleanup(); err != nil {
		t.Errorf("a second Cleanup: %v", err)
	}

	// The pool entry is gone: acquiring again makes a new provider.
	p, k, err := acquireProvider(newContext(t), verifierConfig{Identity: settings.identityConfig()})
	if err != nil {
		t.Fatal(err)
	}
	if k != key {
		t.Errorf("key %q, want %q", k, key)
	}
	if p == shared {
		t.Error("acquireProvider returned the released provider")
	}
	if err := releaseProvider(k); err != nil {
		t.Fatal(err)
	}
	if _, ok := providers.References(k); ok {
		t.Error("still pooled after releaseProvider")
	}
	if err := releaseProvider(""); err != nil {
		t.Errorf("releaseProvider(\"\"): %v", err)
	}
}

func TestOIDCAuthBearer(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	// The opaque tokens are introspected; the provider names the client
	// they were issued to as their client_id.
	a := &OIDCAuth{OIDC: OIDC{Issuer: idp.Issuer, Audiences: []string{idp.Resource, idp.ClientID},
		Introspection: &Introspection{ClientID: idp.ClientID, ClientSecret: idp.ClientSecret}}}
	mustProvisionModule(t, a)

	tests := []struct {
		name, authorization        string
		id, userName, email, group string
	}{
		{"jwt", bearer(idp.Token(t, "alice")), "alice", "Alice Archer", "alice@example.test", "admins,developers"},
		{"jwt, one group", bearer(idp.Token(t, "bob")), "bob", "Bob Baker", "bob@example.test", "developers"},
		{"jwt without email and groups", bearer(idp.Token(t, "carol")), "carol", "Carol Carter", "", ""},
		{"opaque token", bearer(idp.OpaqueToken(t, "alice")), "alice", "Alice Archer", "alice@example.test", "admins,developers"},
		{"lower-case scheme", "bearer " + idp.Token(t, "bob"), "bob", "Bob Baker", "bob@example.test", "developers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := runMiddleware(a, mwCall{target: "/webdav/", authorization: tt.authorization})
			wantPassed(t, x)
			wantUser(t, x.repl, tt.id, tt.userName, tt.email, tt.group)
			if h := x.rec.Header().Values("WWW-Authenticate"); len(h) != 0 {
				t.Errorf("WWW-Authenticate %q on success", h)
			}
		})
	}

	// The mass-delete brake tells one client of a user from another by
	// the client its token was issued to.
	t.Run("the token's client", func(t *testing.T) {
		for name, token := range map[string]string{"jwt": idp.Token(t, "alice"), "opaque": idp.OpaqueToken(t, "alice")} {
			x := runMiddleware(a, mwCall{target: "/webdav/", authorization: bearer(token)})
			wantPassed(t, x)
			if got, _ := x.repl.GetString(userClientPlaceholder); got != idp.ClientID {
				t.Errorf("%s: {%s} = %q, want %q", name, userClientPlaceholder, got, idp.ClientID)
			}
		}
	})

	t.Run("user claim sub", func(t *testing.T) {
		bySub := &OIDCAuth{OIDC: a.OIDC, UserClaim: "sub"}
		mustProvisionModule(t, bySub)
		x := runMiddleware(bySub, mwCall{target: "/", authorization: bearer(idp.Token(t, "alice"))})
		wantPassed(t, x)
		sub := idp.Claims("alice")["sub"].(string)
		wantUser(t, x.repl, sub, "Alice Archer", "alice@example.test", "admins,developers")
	})

	t.Run("other claims", func(t *testing.T) {
		other := &OIDCAuth{OIDC: a.OIDC, NameClaim: "email", GroupsClaim: "preferred_username"}
		mustProvisionModule(t, other)
		x := runMiddleware(other, mwCall{target: "/", authorization: bearer(idp.Token(t, "bob"))})
		wantPassed(t, x)
		// A string claim is a one-element group list.
		wantUser(t, x.repl, "bob", "bob@example.test", "bob@example.test", "bob")
	})
}

func TestOIDCAuthRefusesTokens(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	a := &OIDCAuth{OIDC: OIDC{Issuer: idp.Issuer, Audiences: []string{idp.Resource}}}
	mustProvisionModule(t, a)
	realm := &OIDCAuth{OIDC: a.OIDC, Realm: "davspaces"}
	mustProvisionModule(t, realm)

	mint := func(change func(map[string]any)) string {
		c := idp.Claims("alice")
		change(c)
		return idp.Mint(t, c)
	}
	tampered := func() string {
		parts := strings.Split(idp.Token(t, "bob"), ".")
		claims := idp.Claims("alice")
		payload, _ := json.Marshal(claims)
		return parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
	}

	tests := []struct{ name, token string }{
		{"garbage", "garbage"},
		{"empty", ""},
		{"expired", mint(func(c map[string]any) {
			c["iat"] = time.Now().Add(-2 * time.Hour).Unix()
			c["exp"] = time.Now().Add(-time.Hour).Unix()
		})},
		{"other issuer", mint(func(c map[string]any) { c["iss"] = "http://127.0.0.1:1/other" })},
		{"other audience", mint(func(c map[string]any) { c["aud"] = "urn:someone:else" })},
		{"without the user claim", mint(func(c map[string]any) { delete(c, "preferred_username") })},
		{"empty user claim", mint(func(c map[string]any) { c["preferred_username"] = "" })},
		{"forged", idp.Forge(t, idp.Claims("alice"))},
		{"unsigned", testidp.Unsigned(idp.Claims("alice"))},
		{"tampered", tampered()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := runMiddleware(a, mwCall{target: "/webdav/", authorization: bearer(tt.token)})
			wantUnauthorized(t, x, `Bearer realm="example.com", error="invalid_token"`)

			x = runMiddleware(realm, mwCall{target: "/webdav/", authorization: bearer(tt.token)})
			wantUnauthorized(t, x, `Bearer realm="davspaces", error="invalid_token"`)
		})
	}
}

func TestOIDCAuthNoCredentials(t *testing.T) {
	issuer := closedIssuer(t)
	a := &OIDCAuth{OIDC: OIDC{Issuer: issuer}}
	mustProvisionModule(t, a)
	realm := &OIDCAuth{OIDC: OIDC{Issuer: issuer}, Realm: "davspaces"}
	mustProvisionModule(t, realm)
	tests := []struct {
		name          string
		a             *OIDCAuth
		authorization string
		want          string
	}{
		{"nothing", a, "", `Bearer realm="example.com"`},
		{"basic without fallback", a, basic("einstein", "relativity"), `Bearer realm="example.com"`},
		{"other scheme", a, "Negotiate abc", `Bearer realm="example.com"`},
		{"configured realm", realm, "", `Bearer realm="davspaces"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := runMiddleware(tt.a, mwCall{target: "/webdav/", authorization: tt.authorization})
			wantUnauthorized(t, x, tt.want)
		})
	}
	if s := a.provider.Stats(); s != (identity.Stats{}) {
		t.Errorf("requests without a Bearer token contacted the provider: %+v", s)
	}
}

// TestOIDCAuthBrowserPages: with browser_pages, a page load and an asset
// without credentials pass on without a user; WebDAV requests, a GET that
// does not ask for HTML, and requests with credentials are checked as
// always.
func TestOIDCAuthBrowserPages(t *testing.T) {
	a := &OIDCAuth{OIDC: OIDC{Issuer: closedIssuer(t)}, BrowserPages: true}
	mustProvisionModule(t, a)
	for _, c := range []mwCall{
		{target: "/dav/spaces/x/folder/", accept: browserAccept},
		{target: "/", accept: browserAccept},
		{target: webui.AssetPrefix + "app.js"},
		{method: http.MethodHead, target: webui.AssetPrefix + "style.css"},
	} {
		x := runMiddleware(a, c)
		wantPassed(t, x)
		if id, ok := x.repl.GetString(userIDPlaceholder); ok || id != "" {
			t.Errorf("%s %s passed with user %q", c.method, c.target, id)
		}
	}
	for name, c := range map[string]mwCall{
		"PROPFIND":             {method: "PROPFIND", target: "/webdav/", accept: browserAccept},
		"GET without html":     {target: "/webdav/notes.txt", accept: "*/*"},
		"POST to an asset":     {method: http.MethodPost, target: webui.AssetPrefix + "app.js"},
		"page with basic":      {target: "/webdav/", accept: browserAccept, authorization: basic("einstein", "relativity")},
		"page with bad bearer": {target: "/webdav/", accept: browserAccept, authorization: bearer("garbage")},
	} {
		t.Run(name, func(t *testing.T) {
			x := runMiddleware(a, c)
			if x.next || x.err == nil {
				t.Errorf("passed on without being checked")
			}
		})
	}
	off := &OIDCAuth{OIDC: OIDC{Issuer: closedIssuer(t)}}
	mustProvisionModule(t, off)
	wantUnauthorized(t, runMiddleware(off, mwCall{target: "/webdav/", accept: browserAccept}), `Bearer realm="example.com"`)
}

func TestOIDCAuthBasicFallback(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	a := &OIDCAuth{OIDC: OIDC{Issuer: idp.Issuer}, ProvidersRaw: basicFallback(t)}
	mustProvisionModule(t, a)
	if len(a.fallbacks) != 1 {
		t.Fatalf("%d fallbacks, want 1", len(a.fallbacks))
	}
	const (
		bearerChallenge = `Bearer realm="example.com"`
		basicChallenge  = `Basic realm="restricted"`
		invalidToken    = `Bearer realm="example.com", error="invalid_token"`
	)

	t.Run("basic", func(t *testing.T) {
		x := runMiddleware(a, mwCall{target: "/webdav/", authorization: basic("einstein", "relativity")})
		wantPassed(t, x)
		wantUser(t, x.repl, "einstein", "", "", "")
	})
	t.Run("bearer", func(t *testing.T) {
		x := runMiddleware(a, mwCall{target: "/webdav/", authorization: bearer(idp.Token(t, "alice"))})
		wantPassed(t, x)
		wantUser(t, x.repl, "alice", "Alice Archer", "alice@example.test", "admins,developers")
	})

	tests := []struct {
		name, authorization string
		want                []string
	}{
		{"wrong password", basic("einstein", "gravity"), []string{bearerChallenge, basicChallenge}},
		{"unknown user", basic("newton", "relativity"), []string{bearerChallenge, basicChallenge}},
		{"nothing", "", []string{bearerChallenge, basicChallenge}},
		{"invalid bearer", bearer("garbage"), []string{invalidToken, basicChallenge}},
		// The Basic credentials as a Bearer token are still a token, and
		// no Basic authentication.
		{"bearer never falls back", "Bearer " + strings.TrimPrefix(basic("einstein", "relativity"), "Basic "), []string{invalidToken, basicChallenge}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := runMiddleware(a, mwCall{target: "/webdav/", authorization: tt.authorization})
			wantUnauthorized(t, x, tt.want...)
		})
	}
}

// TestOIDCAuthBrokenFallback: a fallback provider that fails (here on a
// malformed password hash) is skipped: the request is refused with the
// challenges, not answered 500.
func TestOIDCAuthBrokenFallback(t *testing.T) {
	a := &OIDCAuth{OIDC: OIDC{Issuer: closedIssuer(t)}, ProvidersRaw: caddy.ModuleMap{"http_basic": caddyconfig.JSON(caddyauth.HTTPBasicAuth{
		HashRaw:     caddyconfig.JSONModuleObject(caddyauth.BcryptHash{}, "algorithm", "bcrypt", nil),
		AccountList: []caddyauth.Account{{Username: "einstein", Password: "$2a$10$not-a-hash"}},
		Realm:       "dev",
	}, nil)}}
	mustProvisionModule(t, a)
	x := runMiddleware(a, mwCall{target: "/webdav/", authorization: basic("einstein", "relativity")})
	wantUnauthorized(t, x, `Bearer realm="example.com"`, `Basic realm="dev"`)
}

// TestOIDCAuthProviderUnavailable: a provider that cannot be asked is no
// reason to refuse a token; clients get 503 and keep it.
func TestOIDCAuthProviderUnavailable(t *testing.T) {
	issuer := closedIssuer(t)
	settings := OIDC{Issuer: issuer, Timeout: caddy.Duration(2 * time.Second)}
	plain := &OIDCAuth{OIDC: settings}
	mustProvisionModule(t, plain)
	withBasic := &OIDCAuth{OIDC: settings, ProvidersRaw: basicFallback(t)}
	mustProvisionModule(t, withBasic)

	tokens := map[string]string{
		"opaque": "an-opaque-token",
		"jwt":    selfSignedJWT(t, issuer),
	}
	for handler, a := range map[string]*OIDCAuth{"without fallback": plain, "with basic fallback": withBasic} {
		for name, token := range tokens {
			t.Run(name+" "+handler, func(t *testing.T) {
				// Twice: unavailability is not cached as a refusal.
				for range 2 {
					x := runMiddleware(a, mwCall{target: "/webdav/", authorization: bearer(token)})
					wantHandlerError(t, x, http.StatusServiceUnavailable)
					if ra := x.rec.Header().Get("Retry-After"); ra != "5" {
						t.Errorf("Retry-After %q, want 5", ra)
					}
					if c := x.rec.Header().Values("WWW-Authenticate"); len(c) != 0 {
						t.Errorf("WWW-Authenticate %q on a 503", c)
					}
				}
			})
		}
	}

	// Basic does not need the provider.
	x := runMiddleware(withBasic, mwCall{target: "/webdav/", authorization: basic("einstein", "relativity")})
	wantPassed(t, x)
	wantUser(t, x.repl, "einstein", "", "", "")
}

// groupSpace provisions a davspaces handler with the project space "lab"
// managed by the group admins, and returns it with the URL of a file in
// the space.
func groupSpace(t *testing.T) (*DAVSpaces, string) {
	t.Helper()
	d := &DAVSpaces{Root: t.TempDir(), StorageID: "test-storage", Spaces: []ProjectSpace{
		{ID: "lab", Name: "Lab", Managers: []string{"group:admins"}},
	}}
	mustProvision(t, d)
	return d, "/dav/spaces/test-storage$lab/"
}

// TestGroupMemberPuts: a space role given to "group:admins" reaches users
// whose {http.auth.user.groups} names admins, however the authentication
// module set it.
func TestGroupMemberPuts(t *testing.T) {
	d, space := groupSpace(t)
	tests := []struct {
		name   string
		groups any // nil: not set
		want   int
	}{
		{"oidc_auth list", userGroups{"developers", "admins"}, http.StatusCreated},
		{"comma-separated string", "developers,admins", http.StatusCreated},
		{"other group", userGroups{"developers"}, http.StatusNotFound},
		{"no groups", nil, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := runMiddleware(d, mwCall{
				method: http.MethodPut,
				target: space + strings.ReplaceAll(tt.name, " ", "-") + ".txt",
				body:   "content",
				setup: func(repl *caddy.Replacer) {
					repl.Set("http.auth.user.id", "dora")
					if tt.groups != nil {
						repl.Set("http.auth.user.groups", tt.groups)
					}
				},
			})
			if x.err != nil || x.next {
				t.Fatalf("ServeHTTP = %v, next ran: %v", x.err, x.next)
			}
			if x.rec.Code != tt.want {
				t.Errorf("PUT: %d %s, want %d", x.rec.Code, x.rec.Body, tt.want)
			}
		})
	}
}

// TestOIDCAuthGroupsReachDAVSpaces chains oidc_auth and davspaces: alice's
// token says she is in admins, which manages the space.
func TestOIDCAuthGroupsReachDAVSpaces(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	a := &OIDCAuth{OIDC: OIDC{Issuer: idp.Issuer}}
	mustProvisionModule(t, a)
	d, space := groupSpace(t)
	dav := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return d.ServeHTTP(w, r, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return errNext }))
	})
	for _, tt := range []struct {
		user, token string
		want        int
	}{
		{"alice", idp.Token(t, "alice"), http.StatusCreated},
		{"alice (opaque)", idp.OpaqueToken(t, "alice"), http.StatusNoContent}, // the file exists now
		{"bob", idp.Token(t, "bob"), http.StatusNotFound},
	} {
		x := runMiddleware(a, mwCall{method: http.MethodPut, target: space + "notes.txt", body: "x", authorization: bearer(tt.token), next: dav})
		if x.err != nil {
			t.Fatalf("PUT as %s: %v", tt.user, x.err)
		}
		if x.rec.Code != tt.want {
			t.Errorf("PUT as %s: %d %s, want %d", tt.user, x.rec.Code, x.rec.Body, tt.want)
		}
	}
}

// A token the provider issued to another client, or for another resource,
// must not sign a user in once the operator listed this server's audiences
// or client ids; without a list it does (and Provision warned).
func TestOIDCAuthAudiences(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	mint := func(change func(map[string]any)) string {
		c := idp.Claims("alice")
		change(c)
		return idp.Mint(t, c)
	}
	ours := idp.Token(t, "alice")
	otherResource := mint(func(c map[string]any) { c["aud"] = "urn:other:api"; c["client_id"] = "other-app" })
	otherClient := mint(func(c map[string]any) { c["aud"] = "account"; delete(c, "client_id"); c["azp"] = "other-app" })
	ourClient := mint(func(c map[string]any) { c["aud"] = "account"; delete(c, "client_id"); c["azp"] = "davspaces-app" })

	tests := []struct {
		name      string
		audiences []string
		token     string
		pass      bool
	}{
		{"our resource", []string{idp.Resource}, ours, true},
		{"our resource from a list in one variable", []string{"{env.TEST_OIDC_AUDIENCE}"}, ours, true},
		// RFC 9068 §4: the client a token was issued to is not its audience.
		{"our client id as authorized party only", []string{idp.Resource, "davspaces-app"}, ourClient, false},
		{"our client id as RFC 9068 client_id only", []string{idp.ClientID}, ours, false},
		{"another resource", []string{idp.Resource, "davspaces-app"}, otherResource, false},
		{"another client", []string{idp.Resource, "davspaces-app"}, otherClient, false},
		{"another client, no list", nil, otherClient, true},
		{"another resource, no list", nil, otherResource, true},
		{"an unset variable is no list", []string{"{env.TEST_OIDC_AUDIENCE_UNSET}"}, otherResource, true},
	}
	t.Setenv("TEST_OIDC_AUDIENCE", "urn:x, "+idp.Resource)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &OIDCAuth{OIDC: OIDC{Issuer: idp.Issuer, Audiences: tt.audiences}}
			mustProvisionModule(t, a)
			x := runMiddleware(a, mwCall{target: "/webdav/", authorization: bearer(tt.token)})
			if tt.pass {
				wantPassed(t, x)
				return
			}
			wantUnauthorized(t, x, `Bearer realm="example.com", error="invalid_token"`)
		})
	}
}

// A client presenting tokens the cache does not know faster than its budget
// gets 429 (its token may be fine; 401 would make it drop it) with
// Retry-After; tokens already checked, and other clients, are not held up.
func TestOIDCAuthRateLimitsNewTokens(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	a := &OIDCAuth{OIDC: OIDC{Issuer: idp.Issuer, TokenRate: 0.01, TokenBurst: 3}}
	mustProvisionModule(t, a)
	good := bearer(idp.Token(t, "alice"))
	const mallory, other = "192.0.2.66:4000", "198.51.100.7:4000"

	steps := []struct {
		name, authorization, remoteAddr string
		status                          int // 0: passed on
	}{
		{"a good token", good, mallory, 0},
		{"a random token", bearer("random-1"), mallory, http.StatusUnauthorized},
		{"another random token", bearer("random-2"), mallory, http.StatusUnauthorized},
		{"over the budget", bearer("random-3"), mallory, http.StatusTooManyRequests},
		{"a checked good token", good, mallory, 0},
		{"a checked random token", bearer("random-1"), mallory, http.StatusUnauthorized},
		{"another client", bearer("random-3"), other, http.StatusUnauthorized},
		{"basic credentials are not bearer tokens", basic("einstein", "wrong"), mallory, http.StatusUnauthorized},
	}
	for _, s := range steps {
		x := runMiddleware(a, mwCall{target: "/webdav/", authorization: s.authorization, remoteAddr: s.remoteAddr})
		switch s.status {
		case 0:
			if !x.next || x.err != nil {
				t.Fatalf("%s: not passed on: %v", s.name, x.err)
			}
		case http.StatusTooManyRequests:
			wantHandlerError(t, x, s.status)
			if ra, err := strconv.Atoi(x.rec.Header().Get("Retry-After")); err != nil || ra < 1 {
				t.Fatalf("%s: Retry-After %q", s.name, x.rec.Header().Get("Retry-After"))
			}
		default:
			wantHandlerError(t, x, s.status)
		}
	}
}
