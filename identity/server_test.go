package identity

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/davspaces/davspaces/internal/testidp"
)

// issuerServer is an in-process stand-in for a provider's discovery, JWKS
// and userinfo endpoints, for the failure modes a real provider cannot be
// made to show on demand (outages, slow answers, key rotation, forged
// metadata). The flows against a real provider are in real_test.go.
type issuerServer struct {
	*httptest.Server
	mu       sync.Mutex
	keys     []jose.JSONWebKey // private signing keys; the JWKS serves their public halves
	userinfo map[string]map[string]any
	// introspection answers by token; a token missing is "active": false.
	introspection map[string]map[string]any
	// introspectionStatus, when set, is the introspection endpoint's answer.
	introspectionStatus int
	introspections      atomic.Int64
	// issuerOverride, when set, is announced in discovery instead of the URL.
	issuerOverride string
	status         int           // when set, every endpoint answers this status
	delay          time.Duration // userinfo delay
	userinfoStatus int           // when set, userinfo answers this status
	jwksDelay      time.Duration // JWKS delay: longer than the timeout is a hanging endpoint
	userinfoCalls  atomic.Int64
	userinfoNow    atomic.Int64 // userinfo and introspection requests in flight
	userinfoMost   atomic.Int64 // the most ever in flight at once
	jwksCalls      atomic.Int64
}

func newIssuerServer(t testing.TB) *issuerServer {
	t.Helper()
	s := &issuerServer{userinfo: map[string]map[string]any{}, introspection: map[string]map[string]any{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	s.addKey(t, "k1")
	return s
}

func (s *issuerServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	status, delay, override := s.status, s.delay, s.issuerOverride
	s.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		return
	}
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		iss := s.URL
		if override != "" {
			iss = override
		}
		writeJSON(w, map[string]any{"issuer": iss, "jwks_uri": s.URL + "/jwks", "userinfo_endpoint": s.URL + "/me",
			"introspection_endpoint": s.URL + "/introspect"})
	case "/introspect":
		s.serveIntrospection(w, r)
	case "/jwks":
		s.jwksCalls.Add(1)
		s.mu.Lock()
		jwksDelay := s.jwksDelay
		s.mu.Unlock()
		time.Sleep(jwksDelay)
		writeJSON(w, s.publicKeys())
	case "/me":
		s.userinfoCalls.Add(1)
		defer s.inFlight()()
		time.Sleep(delay)
		s.mu.Lock()
		claims, ok := s.userinfo[r.Header.Get("Authorization")]
		userinfoStatus := s.userinfoStatus
		s.mu.Unlock()
		if userinfoStatus == http.StatusBadRequest {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_request"`)
		}
		if userinfoStatus != 0 {
			w.WriteHeader(userinfoStatus)
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		writeJSON(w, claims)
	default:
		http.NotFound(w, r)
	}
}

// serveIntrospection answers as RFC 7662 §2 says, for the client
// "davspaces" with the secret "s3cret:%" (which Basic authentication must
// form-encode).
func (s *issuerServer) serveIntrospection(w http.ResponseWriter, r *http.Request) {
	s.introspections.Add(1)
	// In flight with the userinfo requests: both take the same slots.
	defer s.inFlight()()
	s.mu.Lock()
	delay := s.delay
	s.mu.Unlock()
	time.Sleep(delay)
	s.mu.Lock()
	answer, ok := s.introspection[r.PostFormValue("token")]
	status := s.introspectionStatus
	s.mu.Unlock()
	id, secret, _ := r.BasicAuth()
	switch {
	case status != 0:
		w.WriteHeader(status)
	case r.Method != http.MethodPost || id != "davspaces" || secret != url.QueryEscape("s3cret:%"):
		w.WriteHeader(http.StatusUnauthorized)
	case !ok:
		writeJSON(w, map[string]any{"active": false})
	default:
		writeJSON(w, answer)
	}
}

// inFlight counts a userinfo or introspection request until the returned
// function is called, and keeps the most ever in flight at once.
func (s *issuerServer) inFlight() (done func()) {
	now := s.userinfoNow.Add(1)
	for most := s.userinfoMost.Load(); now > most && !s.userinfoMost.CompareAndSwap(most, now); most = s.userinfoMost.Load() {
	}
	return func() { s.userinfoNow.Add(-1) }
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (s *issuerServer) publicKeys() jose.JSONWebKeySet {
	s.mu.Lock()
	defer s.mu.Unlock()
	var set jose.JSONWebKeySet
	for _, k := range s.keys {
		set.Keys = append(set.Keys, k.Public())
	}
	return set
}

// addKey adds an RSA signing key; the newest key signs.
func (s *issuerServer) addKey(t testing.TB, kid string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.keys = append(s.keys, jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: "RS256", Use: "sig"})
	s.mu.Unlock()
}

func (s *issuerServer) set(f func(s *issuerServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// claims returns valid access-token claims for user.
func (s *issuerServer) claims(user string) map[string]any {
	now := time.Now()
	return map[string]any{
		"iss": s.URL, "sub": "sub-" + user, "aud": "urn:test:api",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"preferred_username": user, "name": "User " + user,
	}
}

// sign signs claims with the newest key.
func (s *issuerServer) sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	s.mu.Lock()
	k := s.keys[len(s.keys)-1]
	s.mu.Unlock()
	return signWith(t, jose.RS256, k.Key, k.KeyID, claims)
}

func signWith(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	return testidp.Sign(t, alg, key, kid, claims)
}

func newECKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
