package testidp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/davspaces/davspaces/internal/testidp"
)

// The tests run in parallel on purpose: several providers at once is how
// other packages use them.

func TestDiscovery(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"", "/realms/test"} {
		t.Run("issuer path "+path, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			p := testidp.Start(t, testidp.Options{IssuerPath: path})
			t.Logf("provider ready after %s", time.Since(start).Round(time.Millisecond))
			if !strings.HasSuffix(p.Issuer, path) {
				t.Fatalf("issuer %q lacks the path %q", p.Issuer, path)
			}
			d := discovery(t, p)
			if d.Issuer != p.Issuer {
				t.Errorf("discovery issuer %q, want %q", d.Issuer, p.Issuer)
			}
			for name, u := range map[string]string{"jwks_uri": d.JWKSURI, "userinfo_endpoint": d.Userinfo, "token_endpoint": d.Token} {
				if !strings.HasPrefix(u, p.Issuer+"/") {
					t.Errorf("%s %q is not under the issuer %q", name, u, p.Issuer)
				}
			}
		})
	}
}

func TestTokenIsAVerifiableJWT(t *testing.T) {
	t.Parallel()
	p := testidp.Start(t, testidp.Options{})
	token := p.Token(t, "alice")
	if n := len(strings.Split(token, ".")); n != 3 {
		t.Fatalf("token has %d parts, want 3: %q", n, token)
	}
	claims := verify(t, p, token)
	if claims["preferred_username"] != "alice" || claims["aud"] != p.Resource || claims["iss"] != p.Issuer {
		t.Fatalf("unexpected claims %v", claims)
	}
	if claims["sub"] == "alice" || claims["sub"] == "" {
		t.Errorf("sub %q should be an id, not the username", claims["sub"])
	}
	if fmt.Sprint(claims["groups"]) != "[admins developers]" || claims["email"] != "alice@example.test" {
		t.Errorf("unexpected groups or email in %v", claims)
	}

	// Claims must describe the real tokens, or minted ones prove nothing.
	want := normalize(t, p.Claims("alice"))
	for k, v := range want {
		if k == "iat" || k == "exp" {
			continue
		}
		if fmt.Sprint(claims[k]) != fmt.Sprint(v) {
			t.Errorf("claim %s: token has %v, Claims says %v", k, claims[k], v)
		}
	}
}

func TestUserWithoutEmailOrGroups(t *testing.T) {
	t.Parallel()
	p := testidp.Start(t, testidp.Options{})
	claims := verify(t, p, p.Token(t, "carol"))
	for _, absent := range []string{"email", "groups"} {
		if v, ok := claims[absent]; ok {
			t.Errorf("carol's token has %s = %v", absent, v)
		}
		if _, ok := p.Claims("carol")[absent]; ok {
			t.Errorf("Claims(carol) has %s", absent)
		}
	}
	if claims["name"] == "" || claims["preferred_username"] != "carol" {
		t.Errorf("unexpected claims %v", claims)
	}
}

func TestTokenTTL(t *testing.T) {
	t.Parallel()
	p := testidp.Start(t, testidp.Options{TokenTTL: 90 * time.Second})
	claims := verify(t, p, p.Token(t, "bob"))
	exp, iat := claims["exp"].(float64), claims["iat"].(float64)
	if exp-iat != 90 {
		t.Fatalf("exp - iat = %v, want 90", exp-iat)
	}
}

func TestOpaqueTokenAtUserinfo(t *testing.T) {
	t.Parallel()
	p := testidp.Start(t, testidp.Options{})
	userinfo := discovery(t, p).Userinfo
	if n := p.UserinfoCalls(t); n != 0 {
		t.Fatalf("%d userinfo calls before any", n)
	}

	token := p.OpaqueToken(t, "bob")
	if strings.Count(token, ".") == 2 {
		t.Fatalf("opaque token looks like a JWT: %q", token)
	}
	status, info := getJSON(t, userinfo, token)
	if status != http.StatusOK {
		t.Fatalf("userinfo: %d %v", status, info)
	}
	if info["preferred_username"] != "bob" || info["name"] != "Bob Baker" || info["email"] != "bob@example.test" ||
		fmt.Sprint(info["groups"]) != "[developers]" || info["sub"] != p.Claims("bob")["sub"] {
		t.Errorf("unexpected userinfo %v", info)
	}
	if n := p.UserinfoCalls(t); n != 1 {
		t.Errorf("%d userinfo calls counted, want 1", n)
	}

	// oidc-provider refuses JWT access tokens at userinfo; the request counts.
	if status, _ := getJSON(t, userinfo, p.Token(t, "bob")); status != http.StatusUnauthorized {
		t.Errorf("userinfo with a JWT: %d, want 401", status)
	}
	if n := p.UserinfoCalls(t); n != 2 {
		t.Errorf("%d userinfo calls counted, want 2", n)
	}
}

func TestMintVerifiesWithTheProvidersJWKS(t *testing.T) {
	t.Parallel()
	p := testidp.Start(t, testidp.Options{})
	claims := p.Claims("bob")
	claims["exp"] = time.Now().Add(-time.Hour).Unix() // what a test of expiry mints
	delete(claims, "name")

	got := verify(t, p, p.Mint(t, claims))
	if fmt.Sprint(got) != fmt.Sprint(normalize(t, claims)) {
		t.Fatalf("minted claims %v, want %v", got, claims)
	}
}

func TestStopClosesThePort(t *testing.T) {
	t.Parallel()
	p := testidp.Start(t, testidp.Options{})
	u, err := url.Parse(p.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	p.Stop()
	conn, err := net.DialTimeout("tcp", u.Host, 2*time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("%s still accepts connections after Stop", u.Host)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial after Stop: %v, want connection refused", err)
	}
}

type metadata struct {
	Issuer   string `json:"issuer"`
	JWKSURI  string `json:"jwks_uri"`
	Token    string `json:"token_endpoint"`
	Userinfo string `json:"userinfo_endpoint"`

	TokenAuthMethods []string `json:"token_endpoint_auth_methods_supported"`
	PromptValues     []string `json:"prompt_values_supported"`
	Scopes           []string `json:"scopes_supported"`
}

func discovery(t *testing.T, p *testidp.IdP) metadata {
	t.Helper()
	var m metadata
	fetch(t, p.Issuer+"/.well-known/openid-configuration", &m)
	return m
}

// verify checks token as a resource server would: signature against the
// JWKS at jwks_uri, kid and typ at+jwt. It returns the claims.
func verify(t *testing.T, p *testidp.IdP, token string) map[string]any {
	t.Helper()
	var keys jose.JSONWebKeySet
	fetch(t, discovery(t, p).JWKSURI, &keys)
	jws, err := jose.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatalf("parse JWT: %v", err)
	}
	header := jws.Signatures[0].Header
	if header.KeyID != p.SigningKey().KeyID || header.ExtraHeaders[jose.HeaderType] != "at+jwt" {
		t.Fatalf("unexpected header kid=%q typ=%v", header.KeyID, header.ExtraHeaders[jose.HeaderType])
	}
	key := keys.Key(header.KeyID)
	if len(key) != 1 || !key[0].IsPublic() {
		t.Fatalf("JWKS has %d public keys for kid %q", len(key), header.KeyID)
	}
	payload, err := jws.Verify(key[0])
	if err != nil {
		t.Fatalf("JWT does not verify with the JWKS: %v", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatalf("JWT payload: %v", err)
	}
	return claims
}

// normalize gives claims the types they have after a JSON round trip.
func normalize(t *testing.T, claims map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func fetch(t *testing.T, u string, v any) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

func getJSON(t *testing.T, u, bearer string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	var body map[string]any
	_ = json.Unmarshal(data, &body) // error answers may carry no JSON
	return res.StatusCode, body
}
