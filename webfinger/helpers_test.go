package webfinger

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/identity"
)

const (
	testIssuer   = "https://idp.example.org/realms/main"
	testPlatform = "https://cloud.example.org"
)

// The real provider must fit the interface.
var _ Verifier = (*identity.Provider)(nil)

// fakeVerifier answers from a map token -> claims; tokens in errs fail with
// their error, unknown tokens with identity.ErrInvalidToken.
type fakeVerifier struct {
	ids  map[string]map[string]any
	errs map[string]error

	mu    sync.Mutex
	calls []verifyCall
}

type verifyCall struct {
	token string
	want  []string
}

func (f *fakeVerifier) Verify(_ context.Context, token string, want ...string) (*identity.Identity, error) {
	f.mu.Lock()
	f.calls = append(f.calls, verifyCall{token, slices.Clone(want)})
	f.mu.Unlock()
	if err, ok := f.errs[token]; ok {
		return nil, err
	}
	if claims, ok := f.ids[token]; ok {
		return &identity.Identity{Claims: claims}, nil
	}
	return nil, identity.ErrInvalidToken
}

func (f *fakeVerifier) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// alice is the usual signed-in user.
var alice = map[string]any{
	"sub":                "9c3a-alice",
	"preferred_username": "alice",
	"email":              "alice@example.org",
	"groups":             []any{"staff", "admins"},
}

func newHandler(t testing.TB, cfg Config) *Handler {
	t.Helper()
	if cfg.Issuer == "" {
		cfg.Issuer = testIssuer
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

// do sends method target with the optional Authorization header.
func do(h http.Handler, method, target, auth string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// testJRD and testLink are what a client decodes.
type testJRD struct {
	Subject string     `json:"subject"`
	Links   []testLink `json:"links"`
}

type testLink struct {
	Rel    string            `json:"rel"`
	Href   string            `json:"href"`
	Titles map[string]string `json:"titles"`
}

// decode parses a JRD answer strictly.
func decode(t *testing.T, w *httptest.ResponseRecorder) testJRD {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d, body %s", w.Code, w.Body)
	}
	var doc testJRD
	dec := json.NewDecoder(w.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decoding %q: %v", w.Body, err)
	}
	return doc
}

func issuerLink() testLink { return testLink{Rel: RelIssuer, Href: testIssuer} }

func instanceLink(href string, titles map[string]string) testLink {
	return testLink{Rel: RelServerInstance, Href: href, Titles: titles}
}
