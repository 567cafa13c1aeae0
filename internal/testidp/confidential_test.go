package testidp_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// TestConfidentialClients signs alice in with each ownCloud fixed client as
// the apps do: prompt=select_account consent, scope with offline_access,
// PKCE, the desktop's loopback redirect on a port it picked, the apps'
// custom schemes, and the client's secret at the token endpoint in the
// Authorization header or the form. Each gets a JWT for the API and a
// refresh token, which refreshes with the secret; a wrong secret is
// refused.
func TestConfidentialClients(t *testing.T) {
	t.Parallel()
	p := testidp.Start(t, testidp.Options{Clients: testidp.OwnCloudClients()})
	d := discovery(t, p)
	for _, want := range []string{"client_secret_basic", "client_secret_post"} {
		if !slices.Contains(d.TokenAuthMethods, want) {
			t.Errorf("token_endpoint_auth_methods_supported %q lacks %s", d.TokenAuthMethods, want)
		}
	}
	for _, want := range []string{"select_account", "consent"} {
		if !slices.Contains(d.PromptValues, want) {
			t.Errorf("prompt_values_supported %q lacks %s", d.PromptValues, want)
		}
	}
	if !slices.Contains(d.Scopes, "offline_access") {
		t.Errorf("scopes_supported %q lacks offline_access", d.Scopes)
	}

	for _, tc := range []struct {
		name, id, secret, redirect string
		post                       bool
	}{
		{"desktop", testidp.OwnCloudDesktopID, testidp.OwnCloudDesktopSecret, "http://127.0.0.1:54321", false},
		{"desktop on another port", testidp.OwnCloudDesktopID, testidp.OwnCloudDesktopSecret, "http://127.0.0.1:1234", true},
		{"android", testidp.OwnCloudAndroidID, testidp.OwnCloudAndroidSecret, testidp.OwnCloudAndroidRedirect, true},
		{"ios", testidp.OwnCloudIOSID, testidp.OwnCloudIOSSecret, testidp.OwnCloudIOSRedirect, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBrowserUntil(t, tc.redirect)
			verifier := randomString(t)
			sum := sha256.Sum256([]byte(verifier))
			q := url.Values{
				"response_type": {"code"}, "client_id": {tc.id}, "redirect_uri": {tc.redirect},
				"scope": {testidp.OwnCloudScope}, "prompt": {testidp.OwnCloudPrompt}, "state": {"s"},
				"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
			}
			form := b.get(t, p.Issuer+"/auth?"+q.Encode())
			res := b.postRedirect(t, p, formAction(t, form), url.Values{"username": {"alice"}, "password": {"alice-password"}})
			// The provider writes the URI back with an empty path as "/".
			loc, _ := url.Parse(res.Header.Get("Location"))
			if loc == nil || strings.TrimSuffix(loc.Scheme+"://"+loc.Host+loc.Path, "/") != tc.redirect || loc.Query().Get("code") == "" || loc.Query().Get("state") != "s" {
				t.Fatalf("not a redirect to %s with a code: %s %q", tc.redirect, res.Status, res.Header.Get("Location"))
			}
			code := loc.Query().Get("code")

			auth := func(form url.Values, secret string) tokenRequest {
				if tc.post {
					form.Set("client_id", tc.id)
					form.Set("client_secret", secret)
					return tokenRequest{form: form}
				}
				return tokenRequest{form: form, authorization: "Basic " + base64.StdEncoding.EncodeToString([]byte(tc.id+":"+secret))}
			}
			tokens := tokenCall(t, p, http.StatusOK, auth(url.Values{
				"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {tc.redirect},
				"code_verifier": {verifier}, "scope": {testidp.OwnCloudScope},
			}, tc.secret))
			if tokens.RefreshToken == "" {
				t.Fatalf("no refresh token for offline_access: %+v", tokens)
			}
			if claims := verify(t, p, tokens.AccessToken); claims["preferred_username"] != "alice" || claims["aud"] != p.Resource || claims["client_id"] != tc.id {
				t.Fatalf("access token claims %v", claims)
			}
			refresh := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tokens.RefreshToken}, "scope": {testidp.OwnCloudScope}}
			tokenCall(t, p, http.StatusUnauthorized, auth(cloneValues(refresh), "wrong"))
			renewed := tokenCall(t, p, http.StatusOK, auth(cloneValues(refresh), tc.secret))
			if renewed.AccessToken == "" || renewed.AccessToken == tokens.AccessToken {
				t.Fatalf("refresh gave no new access token: %+v", renewed)
			}
		})
	}
}

// TestClientSecretInHeaderAndForm: the iOS app refreshes with its client's
// credentials both in the Basic header and in the form
// (owncloud/ios-sdk OCAuthenticationMethodOpenIDConnect.m
// tokenRefreshParametersForRefreshToken), which Keycloak takes; the test
// provider takes it when both name the same client and secret, and
// refuses it when they differ.
func TestClientSecretInHeaderAndForm(t *testing.T) {
	t.Parallel()
	p := testidp.Start(t, testidp.Options{Clients: testidp.OwnCloudClients()})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(testidp.OwnCloudIOSID+":"+testidp.OwnCloudIOSSecret))
	// A refresh token the provider does not know: the client is
	// authenticated before the grant is checked.
	form := url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {"unknown"}, "scope": {testidp.OwnCloudScope},
		"client_id": {testidp.OwnCloudIOSID}, "client_secret": {testidp.OwnCloudIOSSecret},
	}
	if answer := tokenError(t, p, tokenRequest{form, basic}); answer.Error != "invalid_grant" {
		t.Errorf("the same credentials twice: %+v, want invalid_grant (the client authenticated)", answer)
	}
	form.Set("client_secret", "another")
	if answer := tokenError(t, p, tokenRequest{form, basic}); answer.Error != "invalid_request" {
		t.Errorf("two different secrets: %+v, want invalid_request", answer)
	}
}

type tokenFailure struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

func tokenError(t *testing.T, p *testidp.IdP, r tokenRequest) tokenFailure {
	t.Helper()
	res, body := postToken(t, p, r)
	var answer tokenFailure
	if res.StatusCode == http.StatusOK || json.Unmarshal(body, &answer) != nil {
		t.Fatalf("token endpoint: %s %s, want an error", res.Status, body)
	}
	return answer
}

func tokenCall(t *testing.T, p *testidp.IdP, want int, r tokenRequest) tokenAnswer {
	t.Helper()
	res, body := postToken(t, p, r)
	if res.StatusCode != want {
		t.Fatalf("token endpoint: %s %s, want %d", res.Status, body, want)
	}
	var answer tokenAnswer
	if want == http.StatusOK {
		if err := json.Unmarshal(body, &answer); err != nil {
			t.Fatal(err)
		}
	}
	return answer
}

// tokenRequest is a token endpoint form and the Authorization header to
// send with it ("" for none).
type tokenRequest struct {
	form          url.Values
	authorization string
}

func postToken(t *testing.T, p *testidp.IdP, r tokenRequest) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.Issuer+"/token", strings.NewReader(r.form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if r.authorization != "" {
		req.Header.Set("Authorization", r.authorization)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

func cloneValues(v url.Values) url.Values {
	c := url.Values{}
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}
