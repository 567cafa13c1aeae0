package identity

import (
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestProviderCallsAreSpans verifies a JWT, an opaque token and an
// introspected one under a request's span and wants one child span for
// each call to the provider, naming the call and nothing of the token.
func TestProviderCallsAreSpans(t *testing.T) {
	s := newIssuerServer(t)
	s.set(func(s *issuerServer) {
		s.userinfo["Bearer opaque-alice"] = map[string]any{"sub": "sub-alice"}
		s.introspection = map[string]map[string]any{
			"introspected-alice": {"active": true, "sub": "sub-alice", "aud": "urn:test:api", "exp": time.Now().Add(time.Hour).Unix()},
		}
	})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	ctx, request := tp.Tracer("test").Start(t.Context(), "request")

	jwt := s.sign(t, s.claims("alice"))
	tokens := []string{jwt, "opaque-alice"}
	if _, err := newProvider(t, Config{Issuer: s.URL}).Verify(ctx, jwt); err != nil {
		t.Fatalf("Verify of a JWT: %v", err)
	}
	if _, err := newProvider(t, Config{Issuer: s.URL}).Verify(ctx, "opaque-alice"); err != nil {
		t.Fatalf("Verify of an opaque token: %v", err)
	}
	introspecting := newProvider(t, Config{Issuer: s.URL, Audiences: []string{"urn:test:api"},
		Introspection: Introspection{ClientID: "davspaces", ClientSecret: "s3cret:%"}})
	if _, err := introspecting.Verify(ctx, "introspected-alice"); err != nil {
		t.Fatalf("Verify of an introspected token: %v", err)
	}
	tokens = append(tokens, "introspected-alice", "s3cret")

	count := map[string]int{}
	for _, sp := range rec.Ended() {
		count[sp.Name()]++
		if sp.Parent().SpanID() != request.SpanContext().SpanID() {
			t.Errorf("%s: parent %s, want the request's span", sp.Name(), sp.Parent().SpanID())
		}
		for _, kv := range sp.Attributes() {
			for _, tok := range tokens {
				if strings.Contains(kv.Value.Emit(), tok) {
					t.Errorf("%s: attribute %s carries a token or secret", sp.Name(), kv.Key)
				}
			}
		}
	}
	// Three providers, three discoveries; one key fetch for the JWT.
	want := map[string]int{
		"davspaces.identity.discovery":     3,
		"davspaces.identity.jwks":          1,
		"davspaces.identity.userinfo":      1,
		"davspaces.identity.introspection": 1,
	}
	for name, n := range want {
		if count[name] != n {
			t.Errorf("%d spans %s, want %d (all: %v)", count[name], name, n, count)
		}
	}
}

// TestRefusedTokenSpanIsNoError: a token the provider refuses is an
// answer, marked on the span, not a failure of the server.
func TestRefusedTokenSpanIsNoError(t *testing.T) {
	s := newIssuerServer(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	ctx, _ := tp.Tracer("test").Start(t.Context(), "request")
	if _, err := newProvider(t, Config{Issuer: s.URL}).Verify(ctx, "opaque-unknown"); err == nil {
		t.Fatal("an unknown opaque token was accepted")
	}
	for _, sp := range rec.Ended() {
		if sp.Name() != "davspaces.identity.userinfo" {
			continue
		}
		if sp.Status().Code != 0 {
			t.Errorf("userinfo refusal: status %v", sp.Status())
		}
		for _, kv := range sp.Attributes() {
			if kv.Key == attrRefused && kv.Value.AsBool() {
				return
			}
		}
		t.Fatalf("userinfo refusal: no %s attribute in %v", attrRefused, sp.Attributes())
	}
	t.Fatal("no userinfo span")
}
