package identity

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/davspaces/davspaces/internal/testidp"
)

func newProvider(t testing.TB, cfg Config) *Provider {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func TestVerifyJWT(t *testing.T) {
	s := newIssuerServer(t)
	otherKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	with := func(change func(c map[string]any)) string {
		c := s.claims("alice")
		change(c)
		return s.sign(t, c)
	}
	now := time.Now()
	tests := []struct {
		name    string
		cfg     Config
		token   string
		wantErr error
	}{
		{"valid", Config{}, with(func(map[string]any) {}), nil},
		{"expired", Config{}, with(func(c map[string]any) { c["exp"] = now.Add(-time.Hour).Unix() }), ErrInvalidToken},
		{"expired within leeway", Config{}, with(func(c map[string]any) { c["exp"] = now.Add(-10 * time.Second).Unix() }), nil},
		{"not valid yet", Config{}, with(func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() }), ErrInvalidToken},
		{"issued in the future", Config{}, with(func(c map[string]any) { c["iat"] = now.Add(time.Hour).Unix() }), ErrInvalidToken},
		{"no exp", Config{}, with(func(c map[string]any) { delete(c, "exp") }), ErrInvalidToken},
		{"no sub", Config{}, with(func(c map[string]any) { delete(c, "sub") }), ErrInvalidToken},
		{"wrong issuer", Config{}, with(func(c map[string]any) { c["iss"] = "https://evil.example" }), ErrInvalidToken},
		{"audience accepted", Config{Audiences: []string{"other", "urn:test:api"}}, with(func(map[string]any) {}), nil},
		{"audience refused", Config{Audiences: []string{"other"}}, with(func(map[string]any) {}), ErrInvalidToken},
		{"any audience without a list", Config{}, with(func(c map[string]any) { c["aud"] = "urn:someone:else"; c["azp"] = "another-client" }), nil},
		{"one of several audiences accepted", Config{Audiences: []string{"davspaces-app"}}, with(func(c map[string]any) { c["aud"] = []string{"urn:other:api", "davspaces-app"} }), nil},
		// RFC 9068 §4: the client a token was issued to is not its audience.
		{"authorized party alone refused", Config{Audiences: []string{"davspaces-app"}}, with(func(c map[string]any) { c["aud"] = "account"; c["azp"] = "davspaces-app" }), ErrInvalidToken},
		{"RFC 9068 client_id alone refused", Config{Audiences: []string{"davspaces-app"}}, with(func(c map[string]any) { c["client_id"] = "davspaces-app" }), ErrInvalidToken},
		{"another client refused", Config{Audiences: []string{"davspaces-app"}}, with(func(c map[string]any) { c["aud"] = "account"; c["azp"] = "another-client" }), ErrInvalidToken},
		{"another resource refused", Config{Audiences: []string{"davspaces-app"}}, with(func(c map[string]any) { c["aud"] = []string{"urn:other:api"}; c["client_id"] = "another-client" }), ErrInvalidToken},
		{"no aud, no azp refused", Config{Audiences: []string{"davspaces-app"}}, with(func(c map[string]any) { delete(c, "aud") }), ErrInvalidToken},
		{"structured azp refused", Config{Audiences: []string{"davspaces-app"}}, with(func(c map[string]any) { c["aud"] = "account"; c["azp"] = []string{"davspaces-app"} }), ErrInvalidToken},
		{"empty entries ignored", Config{Audiences: []string{""}}, with(func(c map[string]any) { c["aud"] = ""; c["azp"] = "" }), nil},
		{"algorithm not allowed", Config{Algorithms: []string{"ES256"}}, with(func(map[string]any) {}), ErrInvalidToken},
		{"wrong key, known kid", Config{}, signWith(t, jose.RS256, otherKey, "k1", s.claims("alice")), ErrInvalidToken},
		{"wrong key, no kid", Config{}, signWith(t, jose.RS256, otherKey, "", s.claims("alice")), ErrInvalidToken},
		{"unknown kid", Config{}, signWith(t, jose.RS256, otherKey, "k9", s.claims("alice")), ErrInvalidToken},
		{"EC key not published", Config{}, signWith(t, jose.ES256, newECKey(t), "k1", s.claims("alice")), ErrInvalidToken},
		{"alg none", Config{}, testidp.Unsigned(s.claims("alice")), ErrInvalidToken},
		{"HS256 with the public key as secret", Config{}, hmacWithPublicKey(t, s), ErrInvalidToken},
		{"garbage", Config{}, "eyJhbGciOi.not.atoken", ErrInvalidToken},
		{"oversized", Config{}, strings.Repeat("a", maxTokenBytes+1), ErrInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Issuer = s.URL
			p := newProvider(t, tt.cfg)
			id, err := p.Verify(context.Background(), tt.token)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Verify: err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && id.String("preferred_username") != "alice" {
				t.Fatalf("claims = %v", id.Claims)
			}
		})
	}
}

// hmacWithPublicKey is the classic algorithm confusion attack: an HS256
// token keyed with the provider's public key bytes.
func hmacWithPublicKey(t testing.TB, s *issuerServer) string {
	pub := s.publicKeys().Keys[0]
	secret, err := pub.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return signWith(t, jose.HS256, secret, "k1", s.claims("alice"))
}

func TestVerifyCachesAndCountsRoundTrips(t *testing.T) {
	s := newIssuerServer(t)
	p := newProvider(t, Config{Issuer: s.URL})
	tok := s.sign(t, s.claims("alice"))
	for range 5 {
		if _, err := p.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	st := p.Stats()
	if st.Discoveries != 1 || st.KeyFetches != 1 || st.CacheHits != 4 || st.UserinfoCalls != 0 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestUnknownKeyRefetchesOnceAndRotates(t *testing.T) {
	s := newIssuerServer(t)
	clock := time.Now()
	p := newProvider(t, Config{Issuer: s.URL, Now: func() time.Time { return clock }})
	if _, err := p.Verify(context.Background(), s.sign(t, s.claims("alice"))); err != nil {
		t.Fatal(err)
	}
	s.addKey(t, "k2") // rotation: the provider signs with a new key
	rotated := s.sign(t, s.claims("bob"))
	if _, err := p.Verify(context.Background(), rotated); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a new key right after a fetch: %v, want ErrUnavailable (try again), never ErrInvalidToken", err)
	}
	clock = clock.Add(keysRefreshMin)
	if _, err := p.Verify(context.Background(), rotated); err != nil {
		t.Fatalf("token with a rotated-in key: %v", err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	for i := range 3 {
		c := s.claims("mallory")
		c["jti"] = i
		if _, err := p.Verify(context.Background(), signWith(t, jose.RS256, other, "forged", c)); err == nil {
			t.Fatal("forged kid accepted")
		}
	}
	if n := s.jwksCalls.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2 (first use, rotation; forged kids within %v refetch nothing)", n, keysRefreshMin)
	}
	clock = clock.Add(keysRefreshMin)
	if _, err := p.Verify(context.Background(), signWith(t, jose.RS256, other, "forged", s.claims("eve"))); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("unknown kid after a refetch: %v, want ErrInvalidToken", err)
	}
	if n := s.jwksCalls.Load(); n != 3 {
		t.Fatalf("JWKS fetched %d times after the refresh interval, want 3", n)
	}
}

func TestOpaqueTokensUseUserinfo(t *testing.T) {
	s := newIssuerServer(t)
	s.set(func(s *issuerServer) {
		s.userinfo["Bearer opaque-alice"] = map[string]any{"sub": "sub-alice", "preferred_username": "alice", "groups": []string{"admins"}}
		s.userinfo["Bearer opaque-nosub"] = map[string]any{"name": "nobody"}
	})
	clock := time.Now()
	p := newProvider(t, Config{Issuer: s.URL, OpaqueTTL: time.Minute, Now: func() time.Time { return clock }})
	ctx := context.Background()
	for range 3 {
		id, err := p.Verify(ctx, "opaque-alice")
		if err != nil {
			t.Fatal(err)
		}
		if id.String("preferred_username") != "alice" || strings.Join(id.Strings("groups"), ",") != "admins" {
			t.Fatalf("claims = %v", id.Claims)
		}
	}
	if n := s.userinfoCalls.Load(); n != 1 {
		t.Fatalf("userinfo called %d times, want 1", n)
	}
	clock = clock.Add(time.Minute)
	if _, err := p.Verify(ctx, "opaque-alice"); err != nil {
		t.Fatal(err)
	}
	if n := s.userinfoCalls.Load(); n != 2 {
		t.Fatalf("after the TTL userinfo called %d times, want 2", n)
	}
	for range 3 {
		if _, err := p.Verify(ctx, "opaque-bogus"); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("bogus token: %v", err)
		}
	}
	if n := s.userinfoCalls.Load(); n != 3 {
		t.Fatalf("a refused token was asked about %d times, want once", n-2)
	}
	if _, err := p.Verify(ctx, "opaque-nosub"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("userinfo without sub: %v", err)
	}
}

func TestMissingClaimsCompletedFromUserinfo(t *testing.T) {
	s := newIssuerServer(t)
	lean := s.claims("alice")
	delete(lean, "preferred_username")
	tok := s.sign(t, lean)
	s.set(func(s *issuerServer) {
		s.userinfo["Bearer "+tok] = map[string]any{"sub": "sub-alice", "preferred_username": "alice", "email": "a@example.test", "name": "Not The Token's"}
	})
	p := newProvider(t, Config{Issuer: s.URL})
	for range 3 {
		id, err := p.Verify(context.Background(), tok, "preferred_username")
		if err != nil {
			t.Fatal(err)
		}
		if id.String("preferred_username") != "alice" || id.String("name") != "User alice" {
			t.Fatalf("claims = %v (signed claims must win)", id.Claims)
		}
	}
	if n := s.userinfoCalls.Load(); n != 1 {
		t.Fatalf("userinfo called %d times, want 1", n)
	}

	// A provider that refuses its JWTs at userinfo leaves the claim missing,
	// and is asked only once.
	lean["jti"] = "another token"
	refused := s.sign(t, lean)
	for range 3 {
		id, err := p.Verify(context.Background(), refused, "preferred_username")
		if err != nil || id.String("preferred_username") != "" {
			t.Fatalf("id = %v, err = %v", id, err)
		}
	}
	if n := s.userinfoCalls.Load(); n != 2 {
		t.Fatalf("userinfo called %d times, want 2", n)
	}

	// userinfo about another subject is not this token's user.
	lean["jti"] = "a third token"
	mixed := s.sign(t, lean)
	s.set(func(s *issuerServer) { s.userinfo["Bearer "+mixed] = map[string]any{"sub": "sub-bob"} })
	if _, err := p.Verify(context.Background(), mixed, "email"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("sub mismatch: %v", err)
	}
}

func TestProviderUnavailable(t *testing.T) {
	tests := []struct {
		name  string
		setup func(s *issuerServer)
	}{
		{"server error", func(s *issuerServer) { s.status = http.StatusBadGateway }},
		{"discovery announces another issuer", func(s *issuerServer) { s.issuerOverride = "https://other.example" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newIssuerServer(t)
			s.set(tt.setup)
			p := newProvider(t, Config{Issuer: s.URL})
			for _, tok := range []string{s.sign(t, s.claims("alice")), "opaque"} {
				if _, err := p.Verify(context.Background(), tok); !errors.Is(err, ErrUnavailable) {
					t.Fatalf("Verify(%.10s…) = %v, want ErrUnavailable", tok, err)
				}
			}
		})
	}
	t.Run("nothing listening", func(t *testing.T) {
		s := newIssuerServer(t)
		tok := s.sign(t, s.claims("alice"))
		s.Close()
		p := newProvider(t, Config{Issuer: s.URL})
		start := time.Now()
		if _, err := p.Verify(context.Background(), tok); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
		if _, err := p.Verify(context.Background(), "x"+tok); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
		if p.Stats().Discoveries != 1 {
			t.Fatalf("a failed discovery was retried at once: %+v", p.Stats())
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %v", d)
		}
	})
	t.Run("slow userinfo times out", func(t *testing.T) {
		s := newIssuerServer(t)
		s.set(func(s *issuerServer) { s.delay = 2 * time.Second })
		p := newProvider(t, Config{Issuer: s.URL, Timeout: 200 * time.Millisecond})
		start := time.Now()
		if _, err := p.Verify(context.Background(), "opaque"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("took %v despite a 200ms timeout", d)
		}
	})
	t.Run("keys kept while the provider is down", func(t *testing.T) {
		s := newIssuerServer(t)
		p := newProvider(t, Config{Issuer: s.URL})
		if _, err := p.Verify(context.Background(), s.sign(t, s.claims("alice"))); err != nil {
			t.Fatal(err)
		}
		s.set(func(s *issuerServer) { s.status = http.StatusServiceUnavailable })
		if _, err := p.Verify(context.Background(), s.sign(t, s.claims("bob"))); err != nil {
			t.Fatalf("a JWT signed with a known key needs no provider: %v", err)
		}
	})
}

func TestConcurrentLookupsShareOneRoundTrip(t *testing.T) {
	s := newIssuerServer(t)
	s.set(func(s *issuerServer) {
		s.delay = 100 * time.Millisecond
		s.userinfo["Bearer burst"] = map[string]any{"sub": "sub-alice"}
	})
	p := newProvider(t, Config{Issuer: s.URL})
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for range 50 {
		wg.Go(func() {
			_, err := p.Verify(context.Background(), "burst")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.userinfoCalls.Load(); n != 1 {
		t.Fatalf("50 concurrent lookups made %d userinfo calls, want 1", n)
	}
}

func TestCallerCancellationDoesNotFailOthers(t *testing.T) {
	s := newIssuerServer(t)
	s.set(func(s *issuerServer) {
		s.delay = 200 * time.Millisecond
		s.userinfo["Bearer tok"] = map[string]any{"sub": "sub-alice"}
	})
	p := newProvider(t, Config{Issuer: s.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.Verify(ctx, "tok"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("cancelled caller: %v", err)
	}
	if _, err := p.Verify(context.Background(), "tok"); err != nil {
		t.Fatalf("the shared lookup failed with the first caller: %v", err)
	}
	if n := s.userinfoCalls.Load(); n != 1 {
		t.Fatalf("userinfo called %d times, want 1", n)
	}
}

func TestInsecure(t *testing.T) {
	s := &issuerServer{userinfo: map[string]map[string]any{"Bearer tok": {"sub": "sub-alice"}}}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	defer s.Close()
	s.addKey(t, "k1")
	if _, err := newProvider(t, Config{Issuer: s.URL}).Verify(context.Background(), "tok"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("untrusted certificate: %v", err)
	}
	if _, err := newProvider(t, Config{Issuer: s.URL, Insecure: true}).Verify(context.Background(), "tok"); err != nil {
		t.Fatalf("insecure: %v", err)
	}
}

func TestCacheIsBounded(t *testing.T) {
	c := newCache(2)
	now := time.Now()
	e := &entry{expires: now.Add(time.Hour)}
	c.put([32]byte{1}, e)
	c.put([32]byte{2}, e)
	c.get([32]byte{1}, now) // 1 is now the most recent
	c.put([32]byte{3}, e)
	if c.len() != 2 {
		t.Fatalf("len = %d", c.len())
	}
	if _, ok := c.get([32]byte{2}, now); ok {
		t.Fatal("the least recently used entry survived")
	}
	if _, ok := c.get([32]byte{1}, now); !ok {
		t.Fatal("a recently used entry was evicted")
	}
	if _, ok := c.get([32]byte{1}, now.Add(time.Hour)); ok {
		t.Fatal("an expired entry was returned")
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no issuer", Config{}, "issuer URL is required"},
		{"not a URL", Config{Issuer: "idp.example"}, "must be an http(s) URL"},
		{"query", Config{Issuer: "https://idp.example/?x=1"}, "must be an http(s) URL"},
		{"HS256", Config{Issuer: "https://idp.example", Algorithms: []string{"HS256"}}, `"HS256" is not supported`},
		{"none", Config{Issuer: "https://idp.example", Algorithms: []string{"none"}}, `"none" is not supported`},
		{"negative", Config{Issuer: "https://idp.example", Timeout: -1}, "must not be negative"},
		{"negative userinfo concurrency", Config{Issuer: "https://idp.example", UserinfoConcurrency: -1}, "must not be negative"},
		{"introspection secret without client", Config{Issuer: "https://idp.example", Introspection: Introspection{ClientSecret: "s"}}, "introspection needs a client id"},
		{"introspection endpoint without client", Config{Issuer: "https://idp.example", Introspection: Introspection{Endpoint: "https://idp.example/i"}}, "introspection needs a client id"},
		{"introspection endpoint not http", Config{Issuer: "https://idp.example", Introspection: Introspection{ClientID: "c", Endpoint: "idp.example/i"}}, "must be an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	p, err := New(Config{Issuer: "https://idp.example/realms/x/"})
	if err != nil || p.Issuer() != "https://idp.example/realms/x/" {
		t.Fatalf("issuer = %q, %v", p.Issuer(), err)
	}
}

func TestIdentityAccessors(t *testing.T) {
	id := &Identity{Claims: map[string]any{
		"s": "x", "n": float64(42), "big": float64(12345678), "frac": 1.5, "b": true,
		"list": []any{"a", 1.0, "b", map[string]any{}}, "obj": map[string]any{},
	}}
	tests := []struct {
		claim string
		str   string
		strs  string
	}{
		{"s", "x", "x"},
		{"n", "42", "42"},
		{"big", "12345678", "12345678"},
		{"frac", "1.5", "1.5"},
		{"b", "true", "true"},
		{"list", "", "a,1,b"},
		{"obj", "", ""},
		{"missing", "", ""},
	}
	for _, tt := range tests {
		if got := id.String(tt.claim); got != tt.str {
			t.Errorf("String(%s) = %q, want %q", tt.claim, got, tt.str)
		}
		if got := strings.Join(id.Strings(tt.claim), ","); got != tt.strs {
			t.Errorf("Strings(%s) = %q, want %q", tt.claim, got, tt.strs)
		}
	}
}

// Some providers (Auth0, Azure AD v1) publish an issuer ending in "/"; the
// iss of their tokens must equal it exactly, however the issuer is written
// in the configuration.
func TestIssuerWithTrailingSlash(t *testing.T) {
	s := newIssuerServer(t)
	s.set(func(s *issuerServer) { s.issuerOverride = s.URL + "/" })
	withIss := func(iss string) string {
		c := s.claims("alice")
		c["iss"] = iss
		return s.sign(t, c)
	}
	tests := []struct {
		name, configured, iss string
		wantErr               error
	}{
		{"configured with the slash", s.URL + "/", s.URL + "/", nil},
		{"configured without the slash", s.URL, s.URL + "/", nil},
		{"iss without the slash", s.URL + "/", s.URL, ErrInvalidToken},
		{"iss with two slashes", s.URL + "/", s.URL + "//", ErrInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, Config{Issuer: tt.configured})
			_, err := p.Verify(context.Background(), withIss(tt.iss))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Verify: err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// RFC 6750 §3.1: a provider refuses a malformed token with 400
// invalid_request, an unknown or expired one with 401; neither says the
// provider is down.
func TestUserinfoRefusalsAreInvalidTokens(t *testing.T) {
	tests := []struct {
		status int
		want   error
	}{
		{http.StatusBadRequest, ErrInvalidToken},
		{http.StatusUnauthorized, ErrInvalidToken},
		{http.StatusForbidden, ErrInvalidToken},
		{http.StatusInternalServerError, ErrUnavailable},
		{http.StatusBadGateway, ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			s := newIssuerServer(t)
			s.set(func(s *issuerServer) { s.userinfoStatus = tt.status })
			p := newProvider(t, Config{Issuer: s.URL})
			if _, err := p.Verify(context.Background(), "opaque"); !errors.Is(err, tt.want) {
				t.Fatalf("userinfo %d: err = %v, want %v", tt.status, err, tt.want)
			}
		})
	}
}

func TestClaimString(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
		ok   bool
	}{
		{"string", "alice", "alice", true},
		{"empty string", "", "", true},
		{"bool", true, "true", true},
		{"float64 integer", float64(12345678), "12345678", true},
		{"float64 fraction", 1.5, "1.5", true},
		{"float32", float32(2.5), "2.5", true},
		{"int", 7, "7", true},
		{"int64", int64(-9), "-9", true},
		{"json.Number", json.Number("123456789012345678901"), "123456789012345678901", true},
		{"list", []any{"a"}, "", false},
		{"object", map[string]any{"a": "b"}, "", false},
		{"nil", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ClaimString(tt.v)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("ClaimString(%#v) = %q, %v; want %q, %v", tt.v, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// A hanging key endpoint costs at most one timeout: tokens signed with a key
// already known are served without it, even once the keys are old;
// concurrent tokens with a new key share one fetch; and a failed fetch is
// remembered, so the next tokens do not wait for it again.
func TestHangingKeyEndpoint(t *testing.T) {
	const timeout = 300 * time.Millisecond
	setup := func(t *testing.T) (*issuerServer, *Provider, *time.Time) {
		s := newIssuerServer(t)
		clock := time.Now()
		p := newProvider(t, Config{Issuer: s.URL, Timeout: timeout, Now: func() time.Time { return clock }})
		if _, err := p.Verify(context.Background(), s.sign(t, s.claims("alice"))); err != nil {
			t.Fatal(err)
		}
		s.set(func(s *issuerServer) { s.jwksDelay = 2 * time.Second })
		return s, p, &clock
	}
	tokens := func(s *issuerServer, n int) []string {
		var out []string
		for i := range n {
			c := s.claims("bob")
			c["jti"] = strconv.Itoa(i)
			c["exp"] = time.Now().Add(24 * time.Hour).Unix() // outlives the test's clock
			out = append(out, s.sign(t, c))
		}
		return out
	}
	verifyAll := func(p *Provider, toks []string, concurrently bool) []error {
		errs := make([]error, len(toks))
		var wg sync.WaitGroup
		for i, tok := range toks {
			verify := func() { _, errs[i] = p.Verify(context.Background(), tok) }
			if concurrently {
				wg.Go(verify)
			} else {
				verify()
			}
		}
		wg.Wait()
		return errs
	}

	t.Run("old keys, known kid, in turn", func(t *testing.T) {
		s, p, clock := setup(t)
		*clock = clock.Add(keysMaxAge + time.Minute)
		start := time.Now()
		for i, err := range verifyAll(p, tokens(s, 5), false) {
			if err != nil {
				t.Fatalf("token %d signed with a known key: %v", i, err)
			}
		}
		if d := time.Since(start); d > timeout {
			t.Fatalf("five tokens with a known key took %v; the refresh must not hold them up", d)
		}
	})
	for _, concurrently := range []bool{true, false} {
		name := map[bool]string{true: "new kid, concurrently", false: "new kid, in turn"}[concurrently]
		t.Run(name, func(t *testing.T) {
			s, p, clock := setup(t)
			*clock = clock.Add(keysRefreshMin)
			s.addKey(t, "k2")
			start := time.Now()
			for i, err := range verifyAll(p, tokens(s, 5), concurrently) {
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("token %d: %v, want ErrUnavailable", i, err)
				}
			}
			// One waits the timeout, the others fail at once: each
			// waiting it would take five timeouts. Three leave room for
			// a machine running two suites.
			if d := time.Since(start); d > 3*timeout {
				t.Fatalf("five tokens took %v, more than one timeout (%v) and room", d, timeout)
			}
			if n := s.jwksCalls.Load(); n != 2 {
				t.Fatalf("JWKS fetched %d times, want 2 (first use, one refresh)", n)
			}
			// Once the failure is old and the endpoint answers, the new
			// key is found.
			s.set(func(s *issuerServer) { s.jwksDelay = 0 })
			*clock = clock.Add(keysRetry)
			if _, err := p.Verify(context.Background(), tokens(s, 6)[5]); err != nil {
				t.Fatalf("after the retry interval: %v", err)
			}
		})
	}
}

// A burst of random opaque tokens is one userinfo request per token, but
// never more in flight than configured.
func TestUserinfoConcurrencyBounded(t *testing.T) {
	s := newIssuerServer(t)
	s.set(func(s *issuerServer) {
		s.delay = 50 * time.Millisecond
		s.userinfo["Bearer good"] = map[string]any{"sub": "sub-alice"}
	})
	p := newProvider(t, Config{Issuer: s.URL, UserinfoConcurrency: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 21)
	for i := range 20 {
		wg.Go(func() {
			_, err := p.Verify(context.Background(), "random-"+strconv.Itoa(i))
			errs <- err
		})
	}
	wg.Go(func() {
		_, err := p.Verify(context.Background(), "good")
		errs <- err
	})
	wg.Wait()
	close(errs)
	refused := 0
	for err := range errs {
		switch {
		case errors.Is(err, ErrInvalidToken):
			refused++
		case err != nil:
			t.Fatalf("Verify: %v (a slot frees within the timeout)", err)
		}
	}
	if refused != 20 {
		t.Fatalf("%d random tokens refused, want 20", refused)
	}
	if most := s.userinfoMost.Load(); most > 2 {
		t.Fatalf("%d userinfo requests in flight at once, want at most 2", most)
	}
}

// Refused tokens are remembered for invalidTTL, opaque ones too, in a cache
// of their own: a flood of them asks the provider once each and evicts no
// accepted token.
func TestRefusedTokensCachedApart(t *testing.T) {
	s := newIssuerServer(t)
	s.set(func(s *issuerServer) { s.userinfo["Bearer good"] = map[string]any{"sub": "sub-alice"} })
	clock := time.Now()
	p := newProvider(t, Config{Issuer: s.URL, CacheSize: 2, Now: func() time.Time { return clock }})
	ctx := context.Background()
	if _, err := p.Verify(ctx, "good"); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"bogus-0", "bogus-1", "bogus-2", "bogus-3", "bogus-4", "bogus-4", "bogus-4"} {
		if _, err := p.Verify(ctx, tok); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("%s: %v", tok, err)
		}
	}
	if _, err := p.Verify(ctx, "good"); err != nil {
		t.Fatal(err)
	}
	if !p.Known("good") || !p.Known("bogus-4") || p.Known("never-seen") {
		t.Fatalf("Known: good %v, bogus-4 %v, never-seen %v", p.Known("good"), p.Known("bogus-4"), p.Known("never-seen"))
	}
	// good once, each bogus token once: repeating one within invalidTTL,
	// and good after the flood, cost nothing.
	if n := s.userinfoCalls.Load(); n != 1+5 {
		t.Fatalf("userinfo called %d times, want 6", n)
	}
	clock = clock.Add(invalidTTL)
	if p.Known("bogus-4") {
		t.Fatal("a refusal outlived invalidTTL")
	}
}

// Introspection decides about opaque tokens when configured: "active",
// exp, and with audiences the answer's aud or client_id; an endpoint that
// cannot answer is ErrUnavailable, never a refused token.
func TestIntrospection(t *testing.T) {
	s := newIssuerServer(t)
	now := time.Now()
	answers := map[string]map[string]any{
		"ours":            {"active": true, "sub": "sub-alice", "aud": []string{"urn:other", "urn:test:api"}, "exp": now.Add(time.Hour).Unix()},
		"our client":      {"active": true, "sub": "sub-alice", "client_id": "urn:test:api"},
		"another api":     {"active": true, "sub": "sub-alice", "aud": "urn:other", "client_id": "other-app"},
		"expired":         {"active": true, "sub": "sub-alice", "aud": "urn:test:api", "exp": now.Add(-time.Hour).Unix()},
		"inactive":        {"active": false, "sub": "sub-alice", "aud": "urn:test:api"},
		"active as text":  {"active": "true", "sub": "sub-alice", "aud": "urn:test:api"},
		"without sub":     {"active": true, "aud": "urn:test:api"},
		"sub differs":     {"active": true, "sub": "sub-mallory", "aud": "urn:test:api"},
		"short exp first": {"active": true, "sub": "sub-alice", "aud": "urn:test:api", "exp": now.Add(20 * time.Second).Unix()},
		"bearer type":     {"active": true, "sub": "sub-alice", "aud": "urn:test:api", "token_type": "Bearer"},
		"refresh token":   {"active": true, "sub": "sub-alice", "aud": "urn:test:api", "token_type": "refresh_token"},
		"DPoP-bound":      {"active": true, "sub": "sub-alice", "aud": "urn:test:api", "token_type": "DPoP"},
	}
	s.set(func(s *issuerServer) {
		s.introspection = answers
		for token := range answers {
			s.userinfo["Bearer "+token] = map[string]any{"sub": "sub-alice", "preferred_username": "alice"}
		}
	})
	credentials := Introspection{ClientID: "davspaces", ClientSecret: "s3cret:%"}
	p := newProvider(t, Config{Issuer: s.URL, Audiences: []string{"urn:test:api"}, Introspection: credentials})
	tests := []struct {
		token   string
		wantErr error
	}{
		{"ours", nil},
		{"our client", nil},
		{"another api", ErrInvalidToken},
		{"expired", ErrInvalidToken},
		{"inactive", ErrInvalidToken},
		{"active as text", ErrInvalidToken},
		{"without sub", nil},
		{"bearer type", nil},
		{"refresh token", ErrInvalidToken},
		{"DPoP-bound", ErrInvalidToken},
		{"sub differs", ErrInvalidToken},
		{"unknown", ErrInvalidToken},
	}
	for _, tt := range tests {
		t.Run(tt.token, func(t *testing.T) {
			id, err := p.Verify(context.Background(), tt.token, "preferred_username")
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Verify: err = %v, want %v", err, tt.wantErr)
			}
			if err == nil && (id.String("preferred_username") != "alice" || id.String("sub") != "sub-alice") {
				t.Fatalf("claims %v", id.Claims)
			}
		})
	}
	if id, err := p.Verify(context.Background(), "short exp first"); err != nil || id.Expiry.After(now.Add(21*time.Second)) {
		t.Fatalf("an answer is cached past the token's exp: %v, %v", id, err)
	}

	t.Run("cached", func(t *testing.T) {
		before := s.introspections.Load()
		for range 10 {
			if _, err := p.Verify(context.Background(), "ours", "preferred_username"); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.introspections.Load() - before; n != 0 {
			t.Fatalf("%d introspections for a checked token", n)
		}
	})
	t.Run("configured endpoint", func(t *testing.T) {
		elsewhere := newIssuerServer(t)
		elsewhere.set(func(e *issuerServer) { e.introspection = answers })
		withEndpoint := credentials
		withEndpoint.Endpoint = elsewhere.URL + "/introspect"
		p := newProvider(t, Config{Issuer: s.URL, Audiences: []string{"urn:test:api"}, Introspection: withEndpoint})
		if _, err := p.Verify(context.Background(), "ours"); err != nil || elsewhere.introspections.Load() != 1 {
			t.Fatalf("Verify = %v, %d introspections at the configured endpoint", err, elsewhere.introspections.Load())
		}
	})
	t.Run("endpoint trouble", func(t *testing.T) {
		for name, cfg := range map[string]Introspection{
			"wrong secret":  {ClientID: "davspaces", ClientSecret: "guess"},
			"no such place": {ClientID: "davspaces", ClientSecret: "s3cret:%", Endpoint: s.URL + "/nowhere"},
		} {
			p := newProvider(t, Config{Issuer: s.URL, Audiences: []string{"urn:test:api"}, Introspection: cfg})
			if _, err := p.Verify(context.Background(), "ours"); !errors.Is(err, ErrUnavailable) {
				t.Errorf("%s: %v, want unavailable", name, err)
			}
		}
		s.set(func(s *issuerServer) { s.introspectionStatus = http.StatusBadGateway })
		defer s.set(func(s *issuerServer) { s.introspectionStatus = 0 })
		p := newProvider(t, Config{Issuer: s.URL, Introspection: credentials})
		if _, err := p.Verify(context.Background(), "ours"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("502: %v, want unavailable", err)
		}
	})
	t.Run("without audiences", func(t *testing.T) {
		p := newProvider(t, Config{Issuer: s.URL, Introspection: credentials})
		if _, err := p.Verify(context.Background(), "another api"); err != nil {
			t.Errorf("any audience without a list: %v", err)
		}
		if _, err := p.Verify(context.Background(), "inactive"); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("inactive without a list: %v", err)
		}
	})
}

// With audiences and no introspection, an opaque token is refused without
// asking the provider; without audiences userinfo still decides.
func TestOpaqueTokensNeedIntrospectionForAudiences(t *testing.T) {
	s := newIssuerServer(t)
	s.set(func(s *issuerServer) { s.userinfo["Bearer opaque"] = map[string]any{"sub": "sub-alice"} })
	p := newProvider(t, Config{Issuer: s.URL, Audiences: []string{"urn:test:api"}})
	if _, err := p.Verify(context.Background(), "opaque"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("opaque token with audiences: %v, want invalid", err)
	}
	if n := s.userinfoCalls.Load(); n != 0 {
		t.Fatalf("%d userinfo calls for a token that cannot pass", n)
	}
	if _, err := newProvider(t, Config{Issuer: s.URL}).Verify(context.Background(), "opaque"); err != nil {
		t.Fatalf("opaque token without audiences: %v", err)
	}
}

// Introspection and userinfo requests take slots of one budget
// (UserinfoConcurrency): a flood of opaque tokens never has more requests
// in flight at the provider, whichever endpoint they go to.
func TestIntrospectionSharesUserinfoSlots(t *testing.T) {
	s := newIssuerServer(t)
	s.set(func(s *issuerServer) {
		s.delay = 20 * time.Millisecond
		for i := range 12 {
			token := "opaque-" + strconv.Itoa(i)
			// No user claim in the answer: userinfo is asked too.
			s.introspection[token] = map[string]any{"active": true, "sub": "sub-alice"}
			s.userinfo["Bearer "+token] = map[string]any{"sub": "sub-alice", "preferred_username": "alice"}
		}
	})
	p := newProvider(t, Config{Issuer: s.URL, UserinfoConcurrency: 2,
		Introspection: Introspection{ClientID: "davspaces", ClientSecret: "s3cret:%"}})
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		wg.Go(func() {
			_, err := p.Verify(context.Background(), "opaque-"+strconv.Itoa(i), "preferred_username")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Verify: %v (a slot frees within the timeout)", err)
		}
	}
	if st := p.Stats(); st.Introspections != 12 || st.UserinfoCalls != 12 {
		t.Fatalf("stats %+v, want 12 introspections and 12 userinfo calls", st)
	}
	if most := s.userinfoMost.Load(); most > 2 {
		t.Fatalf("%d requests in flight at the provider at once, want at most 2", most)
	}
}
