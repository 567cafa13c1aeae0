package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/davspaces/davspaces/internal/testidp"
)

// Budgets of Caddyfile.example, which sets no token_rate: the defaults.
const (
	defaultTokenBurst = 20
	defaultTokenRate  = 2 // per second
)

// statusOf sends one request with a bearer token and returns the status.
func statusOf(t *testing.T, method, url, token string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if method == "PROPFIND" {
		req.Header.Set("Depth", "0")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// budget is how many new tokens one address may have checked in elapsed:
// the burst, and what the rate refills meanwhile.
func budget(elapsed time.Duration) int {
	return defaultTokenBurst + int(elapsed.Seconds()*defaultTokenRate) + 1
}

// Finding 6: WebFinger shares oidc_auth's verifier. Random opaque tokens
// sent to the lookup spend the one budget of new tokens of their address, so
// they cost no more userinfo requests than the same burst at oidc_auth, and
// oidc_auth then refuses that address's new tokens too (429).
func TestWebFingerSpendsTheTokenBudget(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	lookupURL := s.URL + "/.well-known/webfinger?resource=acct:x@localhost"

	start := time.Now()
	statuses := map[int]int{}
	const burst = 3 * defaultTokenBurst
	for i := range burst {
		statuses[statusOf(t, http.MethodGet, lookupURL, fmt.Sprintf("random-opaque-%d", i))]++
	}
	elapsed := time.Since(start)
	if statuses[http.StatusUnauthorized]+statuses[http.StatusTooManyRequests] != burst || statuses[http.StatusTooManyRequests] == 0 {
		t.Fatalf("%d random tokens at webfinger: statuses %v, want 401 and 429 only, some 429", burst, statuses)
	}
	calls := idp.UserinfoCalls(t)
	t.Logf("%d random tokens at webfinger in %v: statuses %v, %d userinfo calls", burst, elapsed.Round(time.Millisecond), statuses, calls)
	if calls > budget(elapsed) {
		t.Fatalf("%d random tokens at webfinger in %v cost %d userinfo calls, want at most %d", burst, elapsed, calls, budget(elapsed))
	}
	if got := statusOf(t, "PROPFIND", s.URL+"/webdav/", "random-opaque-at-dav"); got != http.StatusTooManyRequests {
		t.Fatalf("a new token at oidc_auth after the webfinger burst: %d, want 429 (one budget)", got)
	}
	// A token checked before is not held up.
	if got := statusOf(t, http.MethodGet, lookupURL, "random-opaque-0"); got != http.StatusUnauthorized {
		t.Fatalf("a token refused before: %d, want 401 from the cache", got)
	}
}

// Finding 6: warnings about tokens that cannot be checked (here JWTs naming
// signing keys the provider does not have) are throttled across webfinger
// and oidc_auth: a few per interval, then a count of those left out.
func TestTokenWarningsThrottled(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	key := idp.SigningKey().Key
	randomKid := func(i int) string {
		return testidp.Sign(t, jose.RS256, key, fmt.Sprintf("no-such-key-%d", i), idp.Claims("alice"))
	}
	start := time.Now()
	for i := range defaultTokenBurst {
		statusOf(t, http.MethodGet, s.URL+"/.well-known/webfinger?resource=acct:x@localhost", randomKid(i))
		statusOf(t, "PROPFIND", s.URL+"/webdav/", randomKid(defaultTokenBurst+i))
	}
	elapsed := time.Since(start)
	warnings := tokenWarnings(t, s)
	t.Logf("%d tokens with unknown key ids in %v: %d warnings", 2*defaultTokenBurst, elapsed.Round(time.Millisecond), len(warnings))
	// warnBurst (5) per 10-second interval.
	if most := 5 * (int(elapsed/(10*time.Second)) + 1); len(warnings) == 0 || len(warnings) > most {
		t.Fatalf("%d tokens with unknown key ids in %v wrote %d token warnings, want 1 to %d:\n%s",
			2*defaultTokenBurst, elapsed, len(warnings), most, strings.Join(warnings, "\n"))
	}
}

// tokenWarnings returns the warnings the token checks of oidc_auth and
// webfinger wrote to the server's log, without those at start.
func tokenWarnings(t *testing.T, s *server) []string {
	t.Helper()
	f, err := os.Open(s.log.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var entry struct {
			Level, Logger, Msg string
		}
		if json.Unmarshal(sc.Bytes(), &entry) != nil || entry.Level != "warn" {
			continue
		}
		handler := strings.HasPrefix(entry.Logger, "http.handlers.oidc_auth") || strings.HasPrefix(entry.Logger, "http.handlers.webfinger")
		if handler && !strings.HasPrefix(entry.Msg, "no audience configured") {
			out = append(out, sc.Text())
		}
	}
	return out
}

// Finding 7: a user claim that is not a valid user id gets 401 and no
// personal space, whatever the id.
func TestInvalidUserIDsRefused(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	for _, id := range []string{"ein\x00stein", "..", ".", "a/b", "tab\tid", strings.Repeat("x", 5000)} {
		claims := idp.Claims("alice")
		claims["preferred_username"] = id
		c := &client{t: t, base: s.URL, token: idp.Mint(t, claims), http: http.DefaultClient}
		_, body := c.expect(http.StatusUnauthorized, "PROPFIND", "/webdav/", "", "Depth", "0")
		wantDAVError(t, body, "NotAuthenticated")
		c.expect(http.StatusUnauthorized, "PUT", "/webdav/x.txt", "x")
	}
	// A real user still works.
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	alice.expect(http.StatusCreated, "PUT", "/webdav/notes.txt", "by alice")
}

// Finding 8: with audience set, a JWT's aud must name it (azp or client_id
// alone do not pass), and an opaque token is refused unless introspection
// is configured; then the introspection answer decides.
func TestAudienceAndIntrospection(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	mint := func(change func(map[string]any)) string {
		claims := idp.Claims("bob")
		change(claims)
		return idp.Mint(t, claims)
	}
	ourClientOnly := mint(func(c map[string]any) { c["aud"] = "urn:other:api"; c["azp"] = idp.ClientID })
	lookupURL := "/.well-known/webfinger?resource=acct:bob@localhost"

	tests := []struct {
		name          string
		audience      string
		introspection bool
		opaque        int // status of an opaque token at /webdav/
	}{
		{"audience, no introspection", idp.Resource, false, http.StatusUnauthorized},
		{"audience and introspection", idp.Resource + " " + idp.ClientID, true, http.StatusMultiStatus},
		{"audience elsewhere and introspection", idp.Resource, true, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OIDC_AUDIENCE", tt.audience)
			if tt.introspection {
				t.Setenv("OIDC_INTROSPECTION_CLIENT_ID", idp.ClientID)
				t.Setenv("OIDC_INTROSPECTION_CLIENT_SECRET", idp.ClientSecret)
			}
			s := startServer(t, serverOptions{issuer: idp.Issuer})
			if got := statusOf(t, "PROPFIND", s.URL+"/webdav/", idp.Token(t, "alice")); got != http.StatusMultiStatus {
				t.Fatalf("a JWT for %s: %d", idp.Resource, got)
			}
			if got := statusOf(t, "PROPFIND", s.URL+"/webdav/", ourClientOnly); got != http.StatusUnauthorized {
				t.Fatalf("a JWT of our client for another API: %d, want 401", got)
			}
			opaque := idp.OpaqueToken(t, "bob")
			if got := statusOf(t, "PROPFIND", s.URL+"/webdav/", opaque); got != tt.opaque {
				t.Fatalf("an opaque token at oidc_auth: %d, want %d", got, tt.opaque)
			}
			want := http.StatusOK
			if tt.opaque != http.StatusMultiStatus {
				want = http.StatusUnauthorized
			}
			if got := statusOf(t, http.MethodGet, s.URL+lookupURL, opaque); got != want {
				t.Fatalf("an opaque token at webfinger: %d, want %d", got, want)
			}
		})
	}
}
