package webfinger

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/davspaces/davspaces/identity"
)

var defaultTitles = map[string]string{"en": "davspaces Instance"}

func TestLookup(t *testing.T) {
	only := func(rels ...string) []string { return rels }
	tests := []struct {
		name      string
		relations []string
		verifier  bool // false: Config.Verifier is nil
		target    string
		auth      string
		want      string // exact body
		cache     string
		verified  int // Verify calls expected
	}{
		{
			name:     "anonymous gets the issuer only",
			verifier: true,
			target:   "/?resource=acct:alice@example.org",
			want:     `{"subject":"acct:alice@example.org","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"}]}`,
			cache:    "no-cache",
		},
		{
			name:     "signed in gets issuer then instance",
			verifier: true,
			target:   "/.well-known/webfinger?resource=acct%3Aalice%40example.org",
			auth:     "Bearer alice-token",
			want:     `{"subject":"acct:alice@example.org","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"},{"rel":"http://webfinger.owncloud/rel/server-instance","href":"https://cloud.example.org","titles":{"en":"davspaces Instance"}}]}`,
			cache:    "no-store",
			verified: 1,
		},
		{
			name:     "bearer scheme is case-insensitive",
			verifier: true,
			target:   "/?resource=https%3A%2F%2Fcloud.example.org",
			auth:     "bEaReR   alice-token",
			want:     `{"subject":"https://cloud.example.org","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"},{"rel":"http://webfinger.owncloud/rel/server-instance","href":"https://cloud.example.org","titles":{"en":"davspaces Instance"}}]}`,
			cache:    "no-store",
			verified: 1,
		},
		{
			name:     "subject is echoed as given, no HTML escaping",
			verifier: true,
			target:   "/?resource=" + "https%3A%2F%2Fcloud.example.org%2F%3Fa%3D1%26b%3D%3C2%3E",
			want:     `{"subject":"https://cloud.example.org/?a=1&b=<2>","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"}]}`,
			cache:    "no-cache",
		},
		{
			name:     "basic is ignored",
			verifier: true,
			target:   "/?resource=mailto:alice@example.org",
			auth:     "Basic YWxpY2U6c2VjcmV0",
			want:     `{"subject":"mailto:alice@example.org","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"}]}`,
			cache:    "no-cache",
		},
		{
			name:     "unknown scheme is ignored",
			verifier: true,
			target:   "/?resource=acct:alice@example.org",
			auth:     "Negotiate abc",
			want:     `{"subject":"acct:alice@example.org","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"}]}`,
			cache:    "no-cache",
		},
		{
			name:   "bearer without verifier is anonymous",
			target: "/?resource=acct:alice@example.org",
			auth:   "Bearer alice-token",
			want:   `{"subject":"acct:alice@example.org","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"}]}`,
			cache:  "no-cache",
		},
		{
			name:   "garbage bearer without verifier is anonymous",
			target: "/?resource=acct:alice@example.org",
			auth:   "Bearer",
			want:   `{"subject":"acct:alice@example.org","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"}]}`,
			cache:  "no-cache",
		},
		{
			name:     "rel filter: issuer",
			verifier: true,
			target:   "/?resource=acct:alice@example.org&rel=" + RelIssuer,
			auth:     "Bearer alice-token",
			want:     `{"subject":"acct:alice@example.org","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"}]}`,
			cache:    "no-store",
			verified: 1,
		},
		{
			name:     "rel filter: instance",
			verifier: true,
			target:   "/?rel=" + RelServerInstance + "&resource=acct:alice@example.org",
			auth:     "Bearer alice-token",
			want:     `{"subject":"acct:alice@example.org","links":[{"rel":"http://webfinger.owncloud/rel/server-instance","href":"https://cloud.example.org","titles":{"en":"davspaces Instance"}}]}`,
			cache:    "no-store",
			verified: 1,
		},
		{
			name:     "rel filter: both, in stable order",
			verifier: true,
			target:   "/?resource=acct:alice@example.org&rel=" + RelServerInstance + "&rel=" + RelIssuer,
			auth:     "Bearer alice-token",
			want:     `{"subject":"acct:alice@example.org","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"},{"rel":"http://webfinger.owncloud/rel/server-instance","href":"https://cloud.example.org","titles":{"en":"davspaces Instance"}}]}`,
			cache:    "no-store",
			verified: 1,
		},
		{
			name:     "rel filter: unknown rel matches nothing",
			verifier: true,
			target:   "/?resource=acct:alice@example.org&rel=http%3A%2F%2Fexample.org%2Frel%2Fother",
			auth:     "Bearer alice-token",
			want:     `{"subject":"acct:alice@example.org","links":[]}`,
			cache:    "no-store",
			verified: 1,
		},
		{
			name:     "rel filter: instance for anonymous is empty",
			verifier: true,
			target:   "/?resource=acct:alice@example.org&rel=" + RelServerInstance,
			want:     `{"subject":"acct:alice@example.org","links":[]}`,
			cache:    "no-cache",
		},
		{
			name:      "relations: issuer only",
			relations: only(RelIssuer),
			verifier:  true,
			target:    "/?resource=acct:alice@example.org",
			auth:      "Bearer alice-token",
			want:      `{"subject":"acct:alice@example.org","links":[{"rel":"http://openid.net/specs/connect/1.0/issuer","href":"https://idp.example.org/realms/main"}]}`,
			cache:     "no-store",
			verified:  1,
		},
		{
			name:      "relations: instance only",
			relations: only(RelServerInstance),
			verifier:  true,
			target:    "/?resource=acct:alice@example.org",
			auth:      "Bearer alice-token",
			want:      `{"subject":"acct:alice@example.org","links":[{"rel":"http://webfinger.owncloud/rel/server-instance","href":"https://cloud.example.org","titles":{"en":"davspaces Instance"}}]}`,
			cache:     "no-store",
			verified:  1,
		},
		{
			name:      "relations: a rel not configured is not served even when asked",
			relations: only(RelServerInstance),
			verifier:  true,
			target:    "/?resource=acct:alice@example.org&rel=" + RelIssuer,
			want:      `{"subject":"acct:alice@example.org","links":[]}`,
			cache:     "no-cache",
		},
		{
			name:      "relations: none",
			relations: []string{},
			verifier:  true,
			target:    "/?resource=acct:alice@example.org",
			auth:      "Bearer alice-token",
			want:      `{"subject":"acct:alice@example.org","links":[]}`,
			cache:     "no-store",
			verified:  1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fv := &fakeVerifier{ids: map[string]map[string]any{"alice-token": alice}}
			cfg := Config{PlatformURL: testPlatform, Relations: tt.relations}
			if tt.verifier {
				cfg.Verifier = fv
			}
			w := do(newHandler(t, cfg), http.MethodGet, tt.target, tt.auth)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d, body %s", w.Code, w.Body)
			}
			if got := strings.TrimSuffix(w.Body.String(), "\n"); got != tt.want {
				t.Errorf("body\n got %s\nwant %s", got, tt.want)
			}
			checkHeaders(t, w.Header(), map[string]string{
				"Content-Type":   "application/json",
				"Cache-Control":  tt.cache,
				"Vary":           "Authorization",
				"Content-Length": fmt.Sprint(w.Body.Len()),
			})
			if n := fv.callCount(); n != tt.verified {
				t.Errorf("Verify called %d times, want %d", n, tt.verified)
			}
		})
	}
}

func checkHeaders(t *testing.T, h http.Header, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

func TestBadRequests(t *testing.T) {
	targets := map[string]string{
		"missing":              "/",
		"other params only":    "/?rel=" + RelIssuer,
		"empty":                "/?resource=",
		"several":              "/?resource=acct:a@example.org&resource=acct:b@example.org",
		"several, one empty":   "/?resource=acct:a@example.org&resource=",
		"relative":             "/?resource=alice@example.org",
		"network-path":         "/?resource=%2F%2Fexample.org%2Falice",
		"bare scheme":          "/?resource=acct:",
		"scheme and slashes":   "/?resource=https:%2F%2F",
		"control character":    "/?resource=acct:alice%0A@example.org",
		"DEL":                  "/?resource=acct:alice%7F@example.org",
		"C1 control":           "/?resource=acct:alice%C2%85@example.org",
		"invalid UTF-8":        "/?resource=acct:alice%FF@example.org",
		"url.Parse error":      "/?resource=http%3A%2F%2F%5B%3A%3A1",
		"bad escape in host":   "/?resource=http%3A%2F%2Fa%25zz",
		"malformed query":      "/?resource=acct:alice@example.org&x=%zz",
		"semicolon separator":  "/?resource=acct:alice@example.org;rel=x",
		"missing scheme colon": "/?resource=%3Aalice",
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			fv := &fakeVerifier{ids: map[string]map[string]any{"alice-token": alice}}
			h := newHandler(t, Config{Verifier: fv})
			w := do(h, http.MethodGet, target, "Bearer alice-token")
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %s", w.Code, w.Body)
			}
			checkHeaders(t, w.Header(), map[string]string{
				"Content-Type":  "application/json",
				"Cache-Control": "no-store",
				"Vary":          "Authorization",
			})
			if !strings.HasPrefix(w.Body.String(), `{"error":"invalid_request","error_description":"`) {
				t.Errorf("body %s", w.Body)
			}
			if fv.callCount() != 0 {
				t.Error("a bad request reached the verifier")
			}
		})
	}
	// The resource message is the one oCIS clients may show.
	w := do(newHandler(t, Config{}), http.MethodGet, "/", "")
	want := `{"error":"invalid_request","error_description":"absent or malformed 'resource' parameter"}` + "\n"
	if w.Body.String() != want {
		t.Errorf("body %s, want %s", w.Body, want)
	}
}

func TestAuthErrors(t *testing.T) {
	down := fmt.Errorf("discovery: %w: dial tcp: connection refused", identity.ErrUnavailable)
	fv := &fakeVerifier{
		ids: map[string]map[string]any{"alice-token": alice},
		errs: map[string]error{
			"expired-token": fmt.Errorf("%w: token expired", identity.ErrInvalidToken),
			"down-token":    down,
			"weird-token":   errors.New("something else"),
			"nil-token":     nil, // nil identity and nil error
			"flood-token":   &identity.TooManyTokensError{Wait: 2500 * time.Millisecond},
		},
	}
	const invalid = `Bearer error="invalid_token"`
	tests := []struct {
		name, auth   string
		status       int
		code         string
		authenticate string // prefix of WWW-Authenticate
		retry        string
		logged       bool // a warning is logged
	}{
		{"empty bearer", "Bearer", 401, "invalid_token", invalid, "", false},
		{"blank bearer", "Bearer    ", 401, "invalid_token", invalid, "", false},
		{"only padding", "Bearer ==", 401, "invalid_token", invalid, "", false},
		{"space inside", "Bearer abc def", 401, "invalid_token", invalid, "", false},
		{"quoted", `Bearer "abc"`, 401, "invalid_token", invalid, "", false},
		{"auth params", "Bearer abc, realm=x", 401, "invalid_token", invalid, "", false},
		{"padding inside", "Bearer ab=c", 401, "invalid_token", invalid, "", false},
		{"unknown token", "Bearer nobody-token", 401, "invalid_token", invalid, "", false},
		{"expired token", "Bearer expired-token", 401, "invalid_token", invalid, "", false},
		{"provider down", "Bearer down-token", 503, "temporarily_unavailable", "", "5", true},
		{"other verifier error", "Bearer weird-token", 503, "temporarily_unavailable", "", "5", true},
		{"nil identity", "Bearer nil-token", 503, "temporarily_unavailable", "", "5", true},
		// The token was not looked at: 429, not 401, which would make a
		// client drop a token that may be fine.
		{"client over its token budget", "Bearer flood-token", 429, "temporarily_unavailable", "", "3", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.WarnLevel)
			h := newHandler(t, Config{Verifier: fv, Logger: zap.New(core)})
			w := do(h, http.MethodGet, "/?resource=acct:alice@example.org", tt.auth)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d; body %s", w.Code, tt.status, w.Body)
			}
			if got := w.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, tt.authenticate) || (tt.authenticate == "") != (got == "") {
				t.Errorf("WWW-Authenticate = %q, want prefix %q", got, tt.authenticate)
			}
			checkHeaders(t, w.Header(), map[string]string{
				"Retry-After":   tt.retry,
				"Content-Type":  "application/json",
				"Cache-Control": "no-store",
				"Vary":          "Authorization",
			})
			if !strings.HasPrefix(w.Body.String(), `{"error":"`+tt.code+`",`) {
				t.Errorf("body %s, want error %s", w.Body, tt.code)
			}
			if got := logs.Len() > 0; got != tt.logged {
				t.Errorf("warning logged: %v, want %v (%v)", got, tt.logged, logs.All())
			}
			if tt.logged && logs.All()[0].ContextMap()["error"] == nil {
				t.Errorf("warning without error field: %v", logs.All()[0])
			}
		})
	}
}

func TestWWWAuthenticateIsWellFormed(t *testing.T) {
	h := newHandler(t, Config{Verifier: &fakeVerifier{}})
	for _, auth := range []string{"Bearer", "Bearer unknown"} {
		got := do(h, http.MethodGet, "/?resource=acct:a@b", auth).Header().Get("WWW-Authenticate")
		// Scheme, then auth-params whose quoted values hold no quotes.
		params, ok := strings.CutPrefix(got, "Bearer ")
		if !ok {
			t.Fatalf("WWW-Authenticate %q", got)
		}
		for p := range strings.SplitSeq(params, ", ") {
			k, v, ok := strings.Cut(p, "=")
			if !ok || k == "" || len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || strings.ContainsAny(v[1:len(v)-1], "\"\\\r\n") {
				t.Errorf("bad auth-param %q in %q", p, got)
			}
		}
	}
}

func TestAnonymousWorksWhileProviderIsDown(t *testing.T) {
	fv := &fakeVerifier{errs: map[string]error{"t": identity.ErrUnavailable}}
	h := newHandler(t, Config{Verifier: fv})
	for _, auth := range []string{"", "Basic YTpi"} {
		w := do(h, http.MethodGet, "/?resource=acct:alice@example.org", auth)
		doc := decode(t, w)
		if !reflect.DeepEqual(doc.Links, []testLink{issuerLink()}) {
			t.Errorf("links %+v", doc.Links)
		}
	}
	if fv.callCount() != 0 {
		t.Errorf("anonymous lookups called the verifier %d times", fv.callCount())
	}
}

func TestMethods(t *testing.T) {
	fv := &fakeVerifier{ids: map[string]map[string]any{"alice-token": alice}}
	h := newHandler(t, Config{Verifier: fv, PlatformURL: testPlatform})
	const target = "/?resource=acct:alice@example.org"

	t.Run("HEAD", func(t *testing.T) {
		for _, auth := range []string{"", "Bearer alice-token"} {
			get := do(h, http.MethodGet, target, auth)
			head := do(h, http.MethodHead, target, auth)
			if head.Code != http.StatusOK || head.Body.Len() != 0 {
				t.Errorf("HEAD: status %d, body %q", head.Code, head.Body)
			}
			if !reflect.DeepEqual(head.Header(), get.Header()) {
				t.Errorf("HEAD headers %v, GET headers %v", head.Header(), get.Header())
			}
		}
		// Errors too: same headers, no body.
		head := do(h, http.MethodHead, "/", "")
		if head.Code != http.StatusBadRequest || head.Body.Len() != 0 || head.Header().Get("Content-Length") == "0" {
			t.Errorf("HEAD error: status %d, body %q, headers %v", head.Code, head.Body, head.Header())
		}
	})

	t.Run("OPTIONS", func(t *testing.T) {
		w := do(h, http.MethodOptions, "/", "")
		if w.Code != http.StatusNoContent || w.Body.Len() != 0 {
			t.Errorf("status %d, body %q", w.Code, w.Body)
		}
		checkHeaders(t, w.Header(), map[string]string{"Allow": "GET, HEAD, OPTIONS"})
	})

	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, "PROPFIND"} {
		t.Run(m, func(t *testing.T) {
			w := do(h, m, target, "Bearer alice-token")
			if w.Code != http.StatusMethodNotAllowed {
				t.Fatalf("status %d", w.Code)
			}
			checkHeaders(t, w.Header(), map[string]string{
				"Allow":        "GET, HEAD, OPTIONS",
				"Content-Type": "application/json",
			})
			if !strings.HasPrefix(w.Body.String(), `{"error":"invalid_request","error_description":"method not allowed`) {
				t.Errorf("body %s", w.Body)
			}
		})
	}
	if fv.callCount() != 2 {
		t.Errorf("Verify called %d times, want 2 (the signed-in GET and HEAD)", fv.callCount())
	}
}

func TestPlatformURLDefaultsToOrigin(t *testing.T) {
	fv := &fakeVerifier{ids: map[string]map[string]any{"alice-token": alice}}
	rules := []Rule{{Claim: "sub", Regex: ".", Href: "{{.PLATFORM_URL}}/instance/{{.OCIS_URL}}"}}
	tests := []struct {
		name, platform, target, want string
	}{
		{"tls", "", "https://cloud.example.org/.well-known/webfinger?resource=acct:a@b", "https://cloud.example.org/instance/https://cloud.example.org"},
		{"plain, with port", "", "http://localhost:8080/?resource=acct:a@b", "http://localhost:8080/instance/http://localhost:8080"},
		{"configured wins", "https://files.example.org/", "http://localhost:8080/?resource=acct:a@b", "https://files.example.org/instance/https://files.example.org"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(t, Config{Verifier: fv, PlatformURL: tt.platform, Rules: rules})
			doc := decode(t, do(h, http.MethodGet, tt.target, "Bearer alice-token"))
			want := []testLink{issuerLink(), instanceLink(tt.want, nil)}
			if !reflect.DeepEqual(doc.Links, want) {
				t.Errorf("links %+v, want %+v", doc.Links, want)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no issuer", Config{}, `issuer "": not an absolute http(s) URL`},
		{"relative issuer", Config{Issuer: "/realms/main"}, `issuer "/realms/main": not an absolute http(s) URL`},
		{"issuer without host", Config{Issuer: "https:///x"}, `issuer "https:///x": not an absolute http(s) URL`},
		{"issuer of another scheme", Config{Issuer: "ftp://idp.example.org"}, `issuer "ftp://idp.example.org": not an absolute http(s) URL`},
		{"unparsable issuer", Config{Issuer: "http://\n\rinvalid"}, `issuer "http://\n\rinvalid": parse`},
		{"bad platform URL", Config{Issuer: testIssuer, PlatformURL: "http://\n\rinvalid"}, `platform URL "http://\n\rinvalid": parse`},
		{"relative platform URL", Config{Issuer: testIssuer, PlatformURL: "cloud.example.org"}, `platform URL "cloud.example.org": not an absolute http(s) URL`},
		{"unknown relation", Config{Issuer: testIssuer, Relations: []string{RelIssuer, "http://webfinger.opencloud/rel/server-instance"}}, `unknown relation "http://webfinger.opencloud/rel/server-instance"`},
		{"bad regex", Config{Issuer: testIssuer, Rules: []Rule{
			{Claim: "sub", Regex: ".+", Href: "https://a.example.org"},
			{Claim: "sub", Regex: ".+", Href: "https://b.example.org"},
			{Claim: "sub", Regex: "(", Href: "https://c.example.org"},
		}}, `instance rule 2: regex "(": error parsing regexp: missing closing ): ` + "`(`"},
		{"bad template", Config{Issuer: testIssuer, Rules: []Rule{{Claim: "sub", Regex: ".+", Href: "{{invalid}}ee"}}},
			`instance rule 0: href "{{invalid}}ee": template: href:1: function "invalid" not defined`},
		{"unclosed action", Config{Issuer: testIssuer, Rules: []Rule{{Claim: "sub", Regex: ".+", Href: "https://{{.sub"}}},
			`instance rule 0: href "https://{{.sub": template: href:1: `},
		{"no claim", Config{Issuer: testIssuer, Rules: []Rule{{Regex: ".+", Href: "https://a.example.org"}}}, `instance rule 0: claim is empty`},
		{"no href", Config{Issuer: testIssuer, Rules: []Rule{{Claim: "sub", Regex: ".+", Href: " "}}}, `instance rule 0: href is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(tt.cfg)
			if err == nil {
				t.Fatalf("New succeeded: %+v", h)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q, want prefix %q", err, tt.want)
			}
		})
	}
}

func TestCheckRule(t *testing.T) {
	if err := CheckRule(DefaultRules()[0]); err != nil {
		t.Errorf("default rule: %v", err)
	}
	err := CheckRule(Rule{Claim: "sub", Regex: "(", Href: "https://x"})
	if err == nil || !strings.HasPrefix(err.Error(), `regex "(": error parsing regexp`) {
		t.Errorf("bad regex: %v", err)
	}
	err = CheckRule(Rule{Claim: "sub", Href: "{{invalid}}ee"})
	if err == nil || !strings.HasPrefix(err.Error(), `href "{{invalid}}ee": template: `) {
		t.Errorf("bad template: %v", err)
	}
}

func TestCancelledLookupIsNotAWarning(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	fv := &fakeVerifier{errs: map[string]error{"t": fmt.Errorf("%w: context canceled", identity.ErrUnavailable)}}
	h := newHandler(t, Config{Verifier: fv, Logger: zap.New(core)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodGet, "/?resource=acct:a@b", nil).WithContext(ctx)
	r.Header.Set("Authorization", "Bearer t")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d", w.Code)
	}
	if n := logs.FilterLevelExact(zapcore.WarnLevel).Len(); n != 0 || logs.Len() != 1 {
		t.Errorf("logs %v", logs.All())
	}
}

func TestNewDefaults(t *testing.T) {
	h, err := New(Config{Issuer: testIssuer})
	if err != nil {
		t.Fatal(err)
	}
	if !h.serveIssuer || !h.serveInstance {
		t.Errorf("relations: issuer %v, instance %v", h.serveIssuer, h.serveInstance)
	}
	if len(h.rules) != 1 || h.log == nil || h.verifier != nil {
		t.Errorf("defaults not applied: %+v", h)
	}
	// Rules are copied: changing the config afterwards changes nothing.
	rules := DefaultRules()
	h = newHandler(t, Config{Rules: rules, PlatformURL: testPlatform, Verifier: &fakeVerifier{ids: map[string]map[string]any{"t": alice}}})
	rules[0].Titles["en"] = "changed"
	doc := decode(t, do(h, http.MethodGet, "/?resource=acct:a@b", "Bearer t"))
	if got := doc.Links[1].Titles["en"]; got != "davspaces Instance" {
		t.Errorf("title %q after the caller changed its rules", got)
	}
}

func TestDefaultRules(t *testing.T) {
	want := []Rule{{Claim: "sub", Regex: ".+", Href: "{{.PLATFORM_URL}}", Titles: defaultTitles}}
	if got := DefaultRules(); !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultRules() = %+v", got)
	}
	// Each call returns fresh maps, so one caller's change cannot leak.
	DefaultRules()[0].Titles["en"] = "x"
	if DefaultRules()[0].Titles["en"] != "davspaces Instance" {
		t.Error("DefaultRules shares its titles")
	}
}

func TestPath(t *testing.T) {
	if Path != "/.well-known/webfinger" {
		t.Errorf("Path = %q", Path)
	}
}
