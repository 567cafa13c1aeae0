package identity

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testidp"
)

// These tests run against a real OpenID Connect provider (oidc-provider on
// Node.js, started on 127.0.0.1).

func TestRealProviderJWT(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{IssuerPath: "/realms/test"})
	p := newProvider(t, Config{Issuer: idp.Issuer, Audiences: []string{idp.Resource}})
	id, err := p.Verify(context.Background(), idp.Token(t, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	if id.String("preferred_username") != "alice" || id.String("name") == "" ||
		strings.Join(id.Strings("groups"), ",") != "admins,developers" {
		t.Fatalf("claims = %v", id.Claims)
	}
	if !id.Expiry.After(time.Now()) {
		t.Fatalf("expiry %v", id.Expiry)
	}

	other := newProvider(t, Config{Issuer: idp.Issuer, Audiences: []string{"urn:someone:else"}})
	if _, err := other.Verify(context.Background(), idp.Token(t, "alice")); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("foreign audience: %v", err)
	}
}

func TestRealProviderRefusesBadTokens(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	p := newProvider(t, Config{Issuer: idp.Issuer})
	mint := func(change func(c map[string]any)) string {
		c := idp.Claims("bob")
		change(c)
		return idp.Mint(t, c)
	}
	tests := map[string]string{
		"expired":      mint(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() }),
		"wrong issuer": mint(func(c map[string]any) { c["iss"] = "http://127.0.0.1:1/other" }),
		"no exp":       mint(func(c map[string]any) { delete(c, "exp") }),
		"alg none":     testidp.Unsigned(idp.Claims("bob")),
		"tampered":     tamper(idp.Token(t, "bob")),
		"opaque junk":  "not-a-token-the-provider-issued",
	}
	for name, tok := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := p.Verify(context.Background(), tok); !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("err = %v, want ErrInvalidToken", err)
			}
		})
	}
	if _, err := p.Verify(context.Background(), mint(func(map[string]any) {})); err != nil {
		t.Fatalf("a well-formed minted token: %v", err)
	}
}

// tamper changes the payload of a JWT without re-signing it.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	payload := []byte(parts[1])
	if payload[5] == 'A' {
		payload[5] = 'B'
	} else {
		payload[5] = 'A'
	}
	return parts[0] + "." + string(payload) + "." + parts[2]
}

func TestRealProviderOpaqueTokenCache(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	p := newProvider(t, Config{Issuer: idp.Issuer})
	tok := idp.OpaqueToken(t, "alice")
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			id, err := p.Verify(context.Background(), tok)
			if err != nil || id.String("preferred_username") != "alice" {
				t.Errorf("id = %v, err = %v", id, err)
			}
		})
	}
	wg.Wait()
	for range 10 {
		if _, err := p.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := idp.UserinfoCalls(t); n != 1 {
		t.Fatalf("30 lookups made %d userinfo calls, want 1", n)
	}
}

func TestRealProviderMissingClaim(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	p := newProvider(t, Config{Issuer: idp.Issuer})
	tok := idp.Token(t, "carol") // carol has no email
	for range 3 {
		id, err := p.Verify(context.Background(), tok, "email")
		if err != nil {
			t.Fatal(err)
		}
		if id.String("email") != "" || id.String("preferred_username") != "carol" {
			t.Fatalf("claims = %v", id.Claims)
		}
	}
	// oidc-provider refuses its JWTs at userinfo; it is asked once.
	if n := idp.UserinfoCalls(t); n != 1 {
		t.Fatalf("userinfo calls = %d, want 1", n)
	}
}

func TestRealProviderDown(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	p := newProvider(t, Config{Issuer: idp.Issuer, Timeout: 2 * time.Second})
	known := idp.Token(t, "alice")
	if _, err := p.Verify(context.Background(), known); err != nil {
		t.Fatal(err)
	}
	opaque := idp.OpaqueToken(t, "bob")
	idp.Stop()
	if _, err := p.Verify(context.Background(), opaque); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("opaque token with the provider down: %v, want ErrUnavailable", err)
	}
	if _, err := p.Verify(context.Background(), known); err != nil {
		t.Fatalf("a cached token needs no provider: %v", err)
	}

	fresh := newProvider(t, Config{Issuer: idp.Issuer, Timeout: 2 * time.Second})
	if _, err := fresh.Verify(context.Background(), known); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("undiscovered provider down: %v, want ErrUnavailable", err)
	}
}

// With audiences configured, an opaque token is refused unless it is
// introspected (RFC 7662), and then the answer's client_id (the provider
// names no aud for opaque tokens) decides. Answers are cached: a burst with
// one token costs one introspection and one userinfo request.
func TestRealProviderIntrospection(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	ctx := context.Background()
	opaque := idp.OpaqueToken(t, "alice")
	credentials := Introspection{ClientID: idp.ClientID, ClientSecret: idp.ClientSecret}

	noIntrospection := newProvider(t, Config{Issuer: idp.Issuer, Audiences: []string{idp.ClientID}})
	if _, err := noIntrospection.Verify(ctx, opaque, "preferred_username"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("opaque token with an audience and no introspection: %v, want invalid", err)
	}
	if s := noIntrospection.Stats(); s.UserinfoCalls != 0 || s.Introspections != 0 {
		t.Fatalf("the refusal asked the provider: %+v", s)
	}

	p := newProvider(t, Config{Issuer: idp.Issuer, Audiences: []string{idp.ClientID}, Introspection: credentials})
	for range 5 {
		id, err := p.Verify(ctx, opaque, "preferred_username")
		if err != nil {
			t.Fatal(err)
		}
		if id.String("preferred_username") != "alice" || id.String("sub") != idp.Claims("alice")["sub"] {
			t.Fatalf("claims %v", id.Claims)
		}
	}
	// oidc-provider's introspection answer carries the user's claims (its
	// extraTokenClaims), so userinfo is needed for none of them here.
	if s := p.Stats(); s.Introspections != 1 || s.UserinfoCalls > 1 {
		t.Fatalf("five checks of one token: %+v, want one introspection and at most one userinfo call", s)
	}
	if n := idp.Introspections(t); n != 1 {
		t.Fatalf("the provider saw %d introspections, want 1", n)
	}

	foreign := newProvider(t, Config{Issuer: idp.Issuer, Audiences: []string{"urn:someone:else"}, Introspection: credentials})
	if _, err := foreign.Verify(ctx, opaque, "preferred_username"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("opaque token of another client: %v, want invalid", err)
	}
	for name, token := range map[string]string{"unknown": "no-such-token-at-all", "tampered": opaque + "x"} {
		if _, err := p.Verify(ctx, token); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s token: %v, want invalid", name, err)
		}
	}

	wrongSecret := newProvider(t, Config{Issuer: idp.Issuer, Audiences: []string{idp.ClientID},
		Introspection: Introspection{ClientID: idp.ClientID, ClientSecret: "wrong"}})
	if _, err := wrongSecret.Verify(ctx, opaque); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("introspection with wrong credentials: %v, want unavailable (the token may be fine)", err)
	}

	// A JWT is still checked locally, and its aud alone decides.
	if _, err := p.Verify(ctx, idp.Token(t, "alice")); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("JWT for %s with audience %s: %v, want invalid", idp.Resource, idp.ClientID, err)
	}
}
