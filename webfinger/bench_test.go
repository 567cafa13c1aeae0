package webfinger

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/davspaces/davspaces/identity"
	"github.com/davspaces/davspaces/internal/testidp"
)

// fixedVerifier answers instantly with one identity, like a warm cache.
type fixedVerifier struct{ id *identity.Identity }

func (f fixedVerifier) Verify(context.Context, string, ...string) (*identity.Identity, error) {
	return f.id, nil
}

// nullWriter drops the answer, like a fast client would.
type nullWriter struct{ h http.Header }

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) WriteHeader(int)             {}
func (w *nullWriter) Write(p []byte) (int, error) { return len(p), nil }

func benchLookup(b *testing.B, v Verifier, auth string) {
	rules := append(DefaultRules(),
		Rule{Claim: "email", Regex: "@example\\.org$", Href: "https://{{.preferred_username}}.example.org", Titles: map[string]string{"en": "Personal"}},
		Rule{Claim: "groups", Regex: "^admins$", Href: "{{.PLATFORM_URL}}/admin/{{.sub}}", Titles: map[string]string{"en": "Admin", "de": "Verwaltung"}, Break: true},
	)
	h := newHandler(b, Config{
		PlatformURL: testPlatform,
		Rules:       rules,
		Verifier:    v,
	})
	r := httptest.NewRequest(http.MethodGet, "/.well-known/webfinger?resource=acct%3Aalice%40example.org", nil)
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	check := httptest.NewRecorder()
	h.ServeHTTP(check, r)
	if check.Code != http.StatusOK {
		b.Fatalf("status %d: %s", check.Code, check.Body)
	}
	w := &nullWriter{h: make(http.Header)}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

var warmVerifier = fixedVerifier{&identity.Identity{Claims: alice}}

// BenchmarkSignedInLookup measures the handler alone, with a verifier that
// answers at once.
func BenchmarkSignedInLookup(b *testing.B) {
	benchLookup(b, warmVerifier, "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl")
}

func BenchmarkAnonymousLookup(b *testing.B) { benchLookup(b, warmVerifier, "") }

// BenchmarkSignedInLookupWarmCache measures a signed-in lookup with a real
// provider's token after the first lookup filled the caches: what every
// lookup but the first costs the server.
func BenchmarkSignedInLookupWarmCache(b *testing.B) {
	for _, kind := range []string{"jwt", "opaque"} {
		b.Run(kind, func(b *testing.B) {
			idp := testidp.Start(b, testidp.Options{})
			p, err := identity.New(identity.Config{Issuer: idp.Issuer})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			token := idp.Token(b, "alice")
			if kind == "opaque" {
				token = idp.OpaqueToken(b, "alice")
			}
			benchLookup(b, p, "Bearer "+token)
			if n := p.Stats().UserinfoCalls; n > 1 {
				b.Fatalf("%d userinfo calls; the cache should have answered", n)
			}
		})
	}
}
