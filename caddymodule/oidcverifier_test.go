package caddymodule

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/davspaces/davspaces/internal/testidp"
)

// WebFinger and oidc_auth with the same settings share one verifier: random
// tokens sent to the lookup spend the same per-address budget as those sent
// to oidc_auth, and cost no more userinfo requests.
func TestWebFingerSharesTokenBudget(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	settings := OIDC{Issuer: idp.Issuer, TokenRate: 0.001, TokenBurst: 5}
	a := &OIDCAuth{OIDC: settings}
	mustProvisionModule(t, a)
	wf := &WebFinger{OIDC: settings, PlatformURL: "https://cloud.example.org"}
	mustProvisionModule(t, wf)
	if wf.providerKey != a.providerKey {
		t.Fatal("webfinger and oidc_auth with the same settings have different verifiers")
	}
	const mallory = "192.0.2.66:4000"

	statuses := map[int]int{}
	for i := range 2 * settings.TokenBurst {
		x := runMiddleware(wf, mwCall{target: lookupTarget, authorization: bearer(fmt.Sprintf("random-%d", i)), remoteAddr: mallory})
		statuses[x.rec.Code]++
		if x.rec.Code == http.StatusTooManyRequests {
			if ra, err := strconv.Atoi(x.rec.Header().Get("Retry-After")); err != nil || ra < 1 {
				t.Fatalf("429 with Retry-After %q", x.rec.Header().Get("Retry-After"))
			}
		}
	}
	if statuses[http.StatusUnauthorized] != settings.TokenBurst || statuses[http.StatusTooManyRequests] != settings.TokenBurst {
		t.Fatalf("%d random tokens at webfinger: statuses %v, want %d of 401 and of 429", 2*settings.TokenBurst, statuses, settings.TokenBurst)
	}
	// The budget is spent for oidc_auth too.
	x := runMiddleware(a, mwCall{target: "/webdav/", authorization: bearer("random-at-oidc-auth"), remoteAddr: mallory})
	wantHandlerError(t, x, http.StatusTooManyRequests)
	if got := a.provider.Stats().UserinfoCalls; got != int64(settings.TokenBurst) {
		t.Fatalf("userinfo calls %d, want %d (the burst)", got, settings.TokenBurst)
	}
	// A token already checked costs nothing, and other addresses have
	// budgets of their own.
	good := bearer(idp.OpaqueToken(t, "alice"))
	wantLinks(t, runMiddleware(wf, mwCall{target: lookupTarget, authorization: good, remoteAddr: "198.51.100.7:4000"}),
		issuerLink(idp.Issuer), instanceLink("https://cloud.example.org", map[string]string{"en": "davspaces Instance"}))
	wantPassed(t, runMiddleware(a, mwCall{target: "/webdav/", authorization: good, remoteAddr: mallory}))
}

// A user claim that is not a valid user id gets 401, never a personal
// space, and a warning names the reason. (Invalid UTF-8 cannot arrive in a
// JSON claim: decoding makes it U+FFFD.)
func TestOIDCAuthRefusesInvalidUserIDs(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	a := &OIDCAuth{OIDC: OIDC{Issuer: idp.Issuer}}
	mustProvisionModule(t, a)
	core, logs := observer.New(zapcore.WarnLevel)
	a.logger = throttled(zap.New(core), newWarnThrottle(nil))

	for _, id := range []string{"ein\x00stein", "..", ".", "a/b", "line\nbreak", "c1\u0085", strings.Repeat("x", 5000)} {
		claims := idp.Claims("alice")
		claims["preferred_username"] = id
		x := runMiddleware(a, mwCall{target: "/webdav/", authorization: bearer(idp.Mint(t, claims))})
		wantUnauthorized(t, x, `Bearer realm="example.com", error="invalid_token"`)
	}
	warnings := logs.FilterMessageSnippet("not a valid user id").All()
	if len(warnings) == 0 || warnings[0].ContextMap()["claim"] != "preferred_username" {
		t.Fatalf("warnings %v", logs.All())
	}
}

// Warnings are written warnBurst times an interval; the first one written
// after that counts those left out.
func TestWarnThrottle(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	throttle := newWarnThrottle(func() time.Time { return now })
	core, logs := observer.New(zapcore.DebugLevel)
	webfinger := throttled(zap.New(core), throttle)
	oidcAuth := throttled(zap.New(core).Named("oidc_auth").With(zap.String("handler", "oidc_auth")), throttle)

	for range 50 {
		webfinger.Warn("refused")
		oidcAuth.Warn("refused")
		oidcAuth.Debug("not throttled")
	}
	if n := logs.FilterLevelExact(zapcore.WarnLevel).Len(); n != warnBurst {
		t.Fatalf("%d warnings written, want %d", n, warnBurst)
	}
	if n := logs.FilterLevelExact(zapcore.DebugLevel).Len(); n != 50 {
		t.Fatalf("%d debug lines, want 50", n)
	}
	now = now.Add(warnInterval)
	oidcAuth.Error("again")
	all := logs.All()
	summary, last := all[len(all)-2], all[len(all)-1]
	if summary.Level != zapcore.WarnLevel || summary.ContextMap()["suppressed_warnings"] != int64(100-warnBurst) ||
		summary.ContextMap()["handler"] != "oidc_auth" || summary.LoggerName != "oidc_auth" {
		t.Fatalf("summary before the first line of the next interval: %+v", summary)
	}
	if last.Message != "again" || last.Level != zapcore.ErrorLevel {
		t.Fatalf("first line of the next interval: %+v", last)
	}
	oidcAuth.Warn("and again")
	if logs.Len() != len(all)+1 {
		t.Fatalf("a second line without suppressed ones: %v", logs.All()[len(all):])
	}
}

// The throttle decides first; the lines it lets through still meet the
// filters of the logger it wraps.
func TestWarnThrottleKeepsTheLoggerFilters(t *testing.T) {
	core, logs := observer.New(zapcore.ErrorLevel)
	logger := throttled(zap.New(core), newWarnThrottle(nil))
	for range 3 {
		logger.Warn("below the level of the wrapped core")
	}
	logger.Error("written")
	if logs.Len() != 1 || logs.All()[0].Message != "written" {
		t.Fatalf("logs %v", logs.All())
	}
}

// A webfinger block that names only the issuer checks tokens with the
// verifier of the oidc_auth handler of its configuration and issuer, and so
// spends that handler's budgets, not budgets of its own.
func TestWebFingerBorrowsOIDCAuthVerifier(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	config := newContext(t)
	// In route order: webfinger is provisioned first.
	wf := &WebFinger{OIDC: OIDC{Issuer: idp.Issuer + "/"}, PlatformURL: "https://cloud.example.org"}
	a := &OIDCAuth{OIDC: OIDC{Issuer: idp.Issuer, TokenRate: 0.001, TokenBurst: 5, UserinfoConcurrency: 3}}
	for _, m := range []provisionCleaner{wf, a} {
		if err := m.Provision(config); err != nil {
			t.Fatal(err)
		}
	}
	other := &WebFinger{OIDC: OIDC{Issuer: idp.Issuer}, PlatformURL: "https://cloud.example.org"}
	mustProvisionModule(t, other) // another configuration: its own verifier
	const mallory = "192.0.2.66:4000"

	statuses := map[int]int{}
	for i := range 10 {
		x := runMiddleware(wf, mwCall{target: lookupTarget, authorization: bearer(fmt.Sprintf("random-%d", i)), remoteAddr: mallory})
		statuses[x.rec.Code]++
	}
	if statuses[http.StatusUnauthorized] != 5 || statuses[http.StatusTooManyRequests] != 5 {
		t.Fatalf("10 random tokens at webfinger: statuses %v, want 5 of 401 (the burst of oidc_auth) and 5 of 429", statuses)
	}
	wantHandlerError(t, runMiddleware(a, mwCall{target: "/webdav/", authorization: bearer("random-at-oidc-auth"), remoteAddr: mallory}),
		http.StatusTooManyRequests)
	if got, own := a.provider.Stats().UserinfoCalls, wf.provider.Stats().UserinfoCalls; got != 5 || own != 0 {
		t.Fatalf("userinfo calls: %d by oidc_auth's verifier, %d by webfinger's own; want 5 and 0", got, own)
	}
	x := runMiddleware(other, mwCall{target: lookupTarget, authorization: bearer("random-0"), remoteAddr: mallory})
	wantAnswered(t, x, http.StatusUnauthorized)

	for _, m := range []provisionCleaner{wf, a} {
		if err := m.Cleanup(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, found := authVerifiers.find(newConfigIssuer(config.Context, idp.Issuer), ""); found {
		t.Fatal("oidc_auth's verifier still listed after its Cleanup")
	}
}

func TestClientKey(t *testing.T) {
	tests := []struct{ remoteAddr, want string }{
		{"192.0.2.1:1234", "192.0.2.1"},
		{"[::ffff:192.0.2.1]:1234", "192.0.2.1"},
		{"[2001:db8:1:2:3:4:5:6]:1234", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:1234", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:1234", "fe80::/64"},
		{"not an address", "not an address"},
	}
	for _, tt := range tests {
		t.Run(tt.remoteAddr, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remoteAddr
			r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), httptest.NewRecorder(), &caddyhttp.Server{})
			if got := clientKey(r); got != tt.want {
				t.Fatalf("clientKey = %q, want %q", got, tt.want)
			}
		})
	}
}
