package testidp_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// The redirect URI is never served: the test reads the code from the
// redirect itself.
const webRedirect = "http://127.0.0.1:1/"

// TestWebClientSignsIn runs the page's flow over HTTP: authorization code
// with PKCE through the sign-in form (a wrong password refused), the code
// exchanged by the public client for a JWT for the API and a refresh token,
// the refresh token rotated, and a second authorization answered from the
// provider's session without the form.
func TestWebClientSignsIn(t *testing.T) {
	t.Parallel()
	p := testidp.Start(t, testidp.Options{WebClient: testidp.WebClient{
		ID: "web", RedirectURIs: []string{webRedirect}, PostLogoutRedirectURIs: []string{webRedirect},
	}})
	browser := newBrowser(t)
	verifier := randomString(t)

	form := browser.get(t, authorizeURL(p, verifier))
	action := formAction(t, form)
	if page := browser.post(t, p, action, url.Values{"username": {"alice"}, "password": {"wrong"}}); !strings.Contains(page, "Wrong username or password") {
		t.Fatalf("a wrong password was not refused:\n%s", page)
	}
	code := browser.code(t, browser.postRedirect(t, p, action, url.Values{"username": {"alice"}, "password": {"alice-password"}}))
	tokens := exchange(t, p, url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {webRedirect},
		"client_id": {"web"}, "code_verifier": {verifier},
	})
	if tokens.RefreshToken == "" || tokens.IDToken == "" {
		t.Fatalf("no refresh or ID token: %+v", tokens)
	}
	claims := verify(t, p, tokens.AccessToken)
	if claims["preferred_username"] != "alice" || claims["aud"] != p.Resource {
		t.Fatalf("access token claims %v, want alice's for %s", claims, p.Resource)
	}

	renewed := exchange(t, p, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tokens.RefreshToken}, "client_id": {"web"}})
	if renewed.RefreshToken == "" || renewed.RefreshToken == tokens.RefreshToken {
		t.Errorf("the refresh token was not rotated")
	}
	if claims := verify(t, p, renewed.AccessToken); claims["aud"] != p.Resource {
		t.Errorf("renewed access token for %v, want %s", claims["aud"], p.Resource)
	}
	if n := p.Refreshes(t); n != 1 {
		t.Errorf("Refreshes = %d, want 1", n)
	}

	// The provider's session signs in again without the form.
	verifier = randomString(t)
	browser.code(t, browser.getRedirect(t, authorizeURL(p, verifier)))
}

type tokenAnswer struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	IDToken      string `json:"id_token"`
	ExpiresIn    int    `json:"expires_in"`
}

func exchange(t *testing.T, p *testidp.IdP, form url.Values) tokenAnswer {
	t.Helper()
	res, err := http.PostForm(p.Issuer+"/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("token endpoint: %s: %s", res.Status, body)
	}
	var answer tokenAnswer
	if err := json.Unmarshal(body, &answer); err != nil {
		t.Fatal(err)
	}
	return answer
}

func authorizeURL(p *testidp.IdP, verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{
		"client_id": {"web"}, "response_type": {"code"}, "redirect_uri": {webRedirect},
		"scope": {"openid profile"}, "state": {"s"}, "nonce": {"n"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
	}
	return p.Issuer + "/auth?" + q.Encode()
}

func randomString(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func formAction(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`<form method="post" action="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no sign-in form:\n%s", page)
	}
	return m[1]
}

// browser follows the provider's redirects with its cookies, and stops at
// the redirect URI.
type browser struct{ client *http.Client }

func newBrowser(t *testing.T) *browser {
	return newBrowserUntil(t, webRedirect)
}

// newBrowserUntil is a browser that stops at redirects to redirectURI,
// which may be on any port of a loopback address or a custom scheme.
func newBrowserUntil(t *testing.T, redirectURI string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{client: &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirectURI) || len(via) > 10 {
			return http.ErrUseLastResponse
		}
		return nil
	}}}
}

func (b *browser) do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

func (b *browser) get(t *testing.T, u string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	_, body := b.do(t, req)
	return body
}

func (b *browser) getRedirect(t *testing.T, u string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	res, _ := b.do(t, req)
	return res
}

func (b *browser) postRequest(p *testidp.IdP, action string, form url.Values) *http.Request {
	base, _ := url.Parse(p.Issuer)
	target, _ := base.Parse(action)
	req, _ := http.NewRequest(http.MethodPost, target.String(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func (b *browser) post(t *testing.T, p *testidp.IdP, action string, form url.Values) string {
	t.Helper()
	_, body := b.do(t, b.postRequest(p, action, form))
	return body
}

func (b *browser) postRedirect(t *testing.T, p *testidp.IdP, action string, form url.Values) *http.Response {
	t.Helper()
	res, _ := b.do(t, b.postRequest(p, action, form))
	return res
}

// code is the authorization code of a redirect to the redirect URI.
func (b *browser) code(t *testing.T, res *http.Response) string {
	t.Helper()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), webRedirect) || loc.Query().Get("code") == "" {
		t.Fatalf("not a redirect with a code: %s %q", res.Status, res.Header.Get("Location"))
	}
	if loc.Query().Get("state") != "s" {
		t.Fatalf("state %q, want s", loc.Query().Get("state"))
	}
	return loc.Query().Get("code")
}
