package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/davspaces/davspaces/internal/testidp"
)

// TestOIDCAuthScriptRequestsGetNoBasicChallenge: a request a script sends
// (X-Requested-With: XMLHttpRequest, as ownCloud Web's) is refused with
// the Bearer challenge alone, so that no browser puts its password prompt
// over the page; any other request still learns that Basic is accepted.
func TestOIDCAuthScriptRequestsGetNoBasicChallenge(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	a := &OIDCAuth{OIDC: OIDC{Issuer: idp.Issuer}, ProvidersRaw: basicFallback(t)}
	mustProvisionModule(t, a)
	const (
		bearerChallenge = `Bearer realm="example.com"`
		basicChallenge  = `Basic realm="restricted"`
		invalidToken    = `Bearer realm="example.com", error="invalid_token"`
	)
	tests := []struct {
		name, requestedWith, authorization string
		want                               []string
	}{
		{"script without credentials", "XMLHttpRequest", "", []string{bearerChallenge}},
		{"script, any case", "xmlhttprequest", "", []string{bearerChallenge}},
		{"script with a wrong password", "XMLHttpRequest", basic("einstein", "gravity"), []string{bearerChallenge}},
		{"script with a bad token", "XMLHttpRequest", bearer("garbage"), []string{invalidToken}},
		{"other value", "fetch", "", []string{bearerChallenge, basicChallenge}},
		{"no header", "", "", []string{bearerChallenge, basicChallenge}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/graph/v1.0/me", nil)
			if tt.requestedWith != "" {
				r.Header.Set("X-Requested-With", tt.requestedWith)
			}
			if tt.authorization != "" {
				r.Header.Set("Authorization", tt.authorization)
			}
			x := &exchange{rec: httptest.NewRecorder(), repl: caddy.NewReplacer()}
			r = caddyhttp.PrepareRequest(r, x.repl, x.rec, &caddyhttp.Server{})
			x.err = a.ServeHTTP(x.rec, r, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
				x.next = true
				return nil
			}))
			wantUnauthorized(t, x, tt.want...)
		})
	}
}
