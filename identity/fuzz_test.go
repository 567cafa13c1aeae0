package identity

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// fuzzProvider is a provider whose keys are already fetched and whose clock
// stands still, so that fuzzing asks the test server nothing more: unknown
// key ids are "fetched too recently" (ErrUnavailable), everything else is
// decided locally.
func fuzzProvider(f *testing.F, cfg Config) (*issuerServer, *Provider) {
	s := newIssuerServer(f)
	clock := time.Now()
	cfg.Issuer, cfg.Now = s.URL, func() time.Time { return clock }
	p := newProvider(f, cfg)
	if _, err := p.Verify(context.Background(), s.sign(f, s.claims("alice"))); err != nil {
		f.Fatal(err)
	}
	return s, p
}

// checkVerified fails unless a verification either refused the token with
// one of the two errors callers map to 401 and 503, or accepted it with the
// claims every accepted token has.
func checkVerified(t *testing.T, id *Identity, err error) {
	if err != nil {
		if !errors.Is(err, ErrInvalidToken) && !errors.Is(err, ErrUnavailable) {
			t.Fatalf("error of neither class: %v", err)
		}
		return
	}
	if id == nil || id.String("sub") == "" || id.Expiry.IsZero() {
		t.Fatalf("accepted without sub or expiry: %+v", id)
	}
	for _, claim := range []string{"sub", "aud", "azp", "groups", "preferred_username", "exp"} {
		id.String(claim)
		id.Strings(claim)
	}
}

// FuzzVerifyToken feeds arbitrary strings to the JWT parsing path.
func FuzzVerifyToken(f *testing.F) {
	s, p := fuzzProvider(f, Config{Audiences: []string{"urn:test:api"}})
	f.Add(s.sign(f, s.claims("alice")))
	f.Add(s.sign(f, map[string]any{"sub": 1, "exp": "tomorrow", "aud": []any{1, nil}}))
	f.Add(signWith(f, jose.ES256, newECKey(f), "k1", s.claims("alice")))
	f.Add(hmacWithPublicKey(f, s))
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	f.Add("eyJ..")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6Ims5In0.e30.c2ln")
	f.Add("eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.c2ln")
	f.Add("not.a.jwt")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		looksLikeJWT(token)
		id, err := p.verifyJWT(context.Background(), token, p.now())
		checkVerified(t, id, err)
	})
}

// FuzzVerifyClaims signs arbitrary payloads with the provider's key, so
// that the claims checks and the claim accessors see every shape a signed
// token can have.
func FuzzVerifyClaims(f *testing.F) {
	s, p := fuzzProvider(f, Config{Audiences: []string{"urn:test:api", "davspaces-app"}})
	s.mu.Lock()
	key := s.keys[0]
	s.mu.Unlock()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{"iss":"` + s.URL + `","sub":"alice","aud":"urn:test:api","exp":4102444800}`,
		`{"iss":"` + s.URL + `","sub":"alice","aud":"account","azp":"davspaces-app","exp":4102444800,"groups":["a",1,null]}`,
		`{"iss":"` + s.URL + `","sub":"alice","client_id":"davspaces-app","exp":4102444800,"preferred_username":12345678}`,
		`{"iss":"` + s.URL + `","sub":"alice","aud":["x","urn:test:api"],"exp":1e300,"nbf":-1e300}`,
		`{"iss":["` + s.URL + `"],"sub":{"a":1},"aud":[[]],"exp":"soon","azp":["davspaces-app"]}`,
		`{"sub":"","exp":0}`,
		`[]`,
		`null`,
		`{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		jws, err := signer.Sign(payload)
		if err != nil {
			t.Skip(err)
		}
		token, err := jws.CompactSerialize()
		if err != nil {
			t.Skip(err)
		}
		id, err := p.verifyJWT(context.Background(), token, p.now())
		checkVerified(t, id, err)
		if err != nil && errors.Is(err, ErrUnavailable) {
			t.Fatalf("a token signed with a known key was not decided: %v", err)
		}
	})
}

// FuzzClaimString checks that any JSON value formats without panicking and
// that the formatting of scalars is stable.
func FuzzClaimString(f *testing.F) {
	for _, seed := range []string{`"alice"`, `12345678`, `1.5e300`, `-0`, `true`, `null`, `["a",1]`, `{"a":"b"}`} {
		f.Add([]byte(`{"c":` + seed + `}`))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var claims map[string]any
		if json.Unmarshal(doc, &claims) != nil {
			return
		}
		id := &Identity{Claims: claims}
		for name, v := range claims {
			s, ok := ClaimString(v)
			if ok && id.String(name) != s {
				t.Fatalf("String(%q) = %q, ClaimString = %q", name, id.String(name), s)
			}
			id.Strings(name)
		}
	})
}

// FuzzCheckIntrospection feeds arbitrary introspection answers to the
// check: whatever the provider says, only an active answer that names an
// accepted audience passes.
func FuzzCheckIntrospection(f *testing.F) {
	_, p := fuzzProvider(f, Config{Audiences: []string{"urn:test:api"}})
	f.Add([]byte(`{"active":true,"aud":"urn:test:api","token_type":"Bearer"}`))
	f.Add([]byte(`{"active":true,"client_id":"urn:test:api","exp":1}`))
	f.Add([]byte(`{"active":"true","aud":["urn:test:api"]}`))
	f.Add([]byte(`{"active":true,"aud":[1,null,"urn:test:api"],"token_type":"refresh_token"}`))
	f.Add([]byte(`{"active":true,"exp":"never","aud":{"x":1}}`))
	f.Add([]byte(`{"active":false}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var answer map[string]any
		if json.Unmarshal(body, &answer) != nil {
			return
		}
		err := p.checkIntrospection(answer, p.now())
		if err == nil {
			if active, _ := answer["active"].(bool); !active {
				t.Fatalf("an answer that is not active passed: %s", body)
			}
			return
		}
		if !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("refusal %v is not ErrInvalidToken", err)
		}
	})
}
