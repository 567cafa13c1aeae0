package identity

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a time the test moves forward; safe for concurrent use.
// It starts at the real time, since the test's tokens are signed with
// the real time and a verifier refuses one issued after its now.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := new(fakeClock)
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// TestDocument: the document is the provider's, byte for byte, with a
// strong ETag; it is shared with the verifier, reused for DocumentTTL,
// fetched again after it, and answered stale while the provider is down up
// to DocumentStaleLimit.
func TestDocument(t *testing.T) {
	ctx := context.Background()
	s := newIssuerServer(t)
	clock := newFakeClock()
	p := newProvider(t, Config{Issuer: s.URL, Now: clock.now})

	doc, err := p.Document(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := fetchBody(t, s.URL+"/.well-known/openid-configuration")
	if string(doc.Body) != want {
		t.Fatalf("body %s, want the provider's %s", doc.Body, want)
	}
	if len(doc.ETag) < 3 || !strings.HasPrefix(doc.ETag, `"`) || !strings.HasSuffix(doc.ETag, `"`) {
		t.Fatalf("ETag %q is not a quoted strong tag", doc.ETag)
	}
	if _, err := p.Verify(ctx, s.sign(t, s.claims("alice"))); err != nil {
		t.Fatal(err)
	}
	clock.advance(DocumentTTL - time.Second)
	if again, _ := p.Document(ctx); again.ETag != doc.ETag || p.Stats().Discoveries != 1 {
		t.Fatalf("within the TTL: ETag %q, %d discoveries; want %q and 1 (the verifier's shared)", again.ETag, p.Stats().Discoveries, doc.ETag)
	}

	clock.advance(2 * time.Second)
	refreshed, err := p.Document(ctx)
	if err != nil || p.Stats().Discoveries != 2 {
		t.Fatalf("after the TTL: %v, %d discoveries, want a second one", err, p.Stats().Discoveries)
	}
	if refreshed.ETag != doc.ETag || !refreshed.Fetched.After(doc.Fetched) {
		t.Errorf("the same body refreshed: ETag %q fetched %v, want %q after %v", refreshed.ETag, refreshed.Fetched, doc.ETag, doc.Fetched)
	}

	s.set(func(s *issuerServer) { s.status = http.StatusBadGateway })
	clock.advance(DocumentTTL + time.Second)
	if stale, err := p.Document(ctx); err != nil || stale.ETag != doc.ETag {
		t.Fatalf("provider down, document %v old: %v, want the last good one", DocumentTTL, err)
	}
	clock.advance(DocumentStaleLimit)
	if _, err := p.Document(ctx); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("provider down, document older than the stale limit: %v, want ErrUnavailable", err)
	}
	if _, err := p.discovery.metadata(ctx); err != nil {
		t.Errorf("the verifier lost its metadata to a failed refresh: %v", err)
	}

	s.set(func(s *issuerServer) { s.status = 0 })
	clock.advance(discoveryRetry)
	if _, err := p.Document(ctx); err != nil {
		t.Errorf("provider back: %v", err)
	}
}

func TestDocumentRefused(t *testing.T) {
	tests := map[string]http.HandlerFunc{
		"unreachable": nil,
		"error status": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		},
		"not JSON": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<html>"))
		},
		"trailing garbage": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"issuer":"` + issuerOf(r) + `","jwks_uri":"x"} {}`))
		},
		"another issuer": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"issuer":"https://evil.example","jwks_uri":"x"}`))
		},
		"larger than the bound": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"issuer":"` + issuerOf(r) + `","jwks_uri":"x","pad":"` + strings.Repeat("x", maxDocumentBytes) + `"}`))
		},
	}
	for name, serve := range tests {
		t.Run(name, func(t *testing.T) {
			s := httptest.NewServer(serve)
			if serve == nil {
				s.Close()
			} else {
				t.Cleanup(s.Close)
			}
			p := newProvider(t, Config{Issuer: s.URL})
			if doc, err := p.Document(context.Background()); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("Document = %d bytes, %v; want ErrUnavailable", len(doc.Body), err)
			}
		})
	}
}

func issuerOf(r *http.Request) string { return "http://" + r.Host }

func fetchBody(t *testing.T, url string) string {
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
