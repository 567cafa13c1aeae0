package webfinger

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/davspaces/davspaces/identity"
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

func benchLookup(b *testing.B, auth string) {
	rules := append(DefaultRules(),
		Rule{Claim: "email", Regex: "@example\\.org$", Href: "https://{{.preferred_username}}.example.org", Titles: map[string]string{"en": "Personal"}},
		Rule{Claim: "groups", Regex: "^admins$", Href: "{{.PLATFORM_URL}}/admin/{{.sub}}", Titles: map[string]string{"en": "Admin", "de": "Verwaltung"}, Break: true},
	)
	h := newHandler(b, Config{
		PlatformURL: testPlatform,
		Rules:       rules,
		Verifier:    fixedVerifier{&identity.Identity{Claims: alice}},
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

func BenchmarkSignedInLookup(b *testing.B) {
	benchLookup(b, "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl")
}

func BenchmarkAnonymousLookup(b *testing.B) { benchLookup(b, "") }
