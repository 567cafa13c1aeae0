package integration

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// desktopClientID is the ownCloud desktop client's fixed client id
// (owncloud/client src/libsync/theme.cpp).
const desktopClientID = "xdXOt13JKxym1B1QcEncf2XDkLAexMBFwiT9j6EfhhHFJhs2KM9jbjTmf8JBXE69"

// TestOwnCloudDesktopSignIn replays the ownCloud desktop client 7.x's
// sign-in against the real Caddy and the test provider, in its order and
// with its checks, as read from owncloud/client:
//
//  1. src/gui/networkadapters/discoverwebfingerserviceadapter.cpp
//     (processReply): an anonymous WebFinger lookup of the server URL;
//     Content-Type must contain application/json, subject must be the URL,
//     the first issuer link is where to sign in. Its fallback,
//     resolveurladapter.cpp (status.php) and determineauthtypeadapter.cpp
//     (an anonymous PROPFIND of remote.php/webdav/ whose lower-cased
//     WWW-Authenticate must contain "bearer "), is replayed too.
//  2. src/gui/creds/oauth.cpp (fetchWellKnown): the discovery document at
//     the server root (the client's URL when WebFinger gave none), with
//     authorization_endpoint, token_endpoint and client_secret_basic or
//     client_secret_post in token_endpoint_auth_methods_supported.
//  3. oauth.cpp (authorisationLink, getTokens): authorization code with
//     PKCE (S256) and a redirect to a loopback listener at 127.0.0.1 on a
//     random port; the answer must carry access_token, refresh_token and
//     token_type bearer. The test provider has public clients only, so
//     the code is exchanged without the client secret the desktop client
//     sends (client_secret_basic), and oidc-provider knows neither the
//     prompt value select_account nor the scope offline_access: the
//     request leaves the prompt out, and the refresh, which the client
//     sends with its scope, asks for the granted scope without
//     offline_access (the provider refuses a scope the grant lacks).
//  4. webfingerlookupadapter.cpp: the signed-in lookup of acct:me@<host>;
//     the first server-instance link is the account URL.
//  5. userinfoadapter.cpp: ocs/v2.php/cloud/user (ocs.data.id).
//  6. src/gui/newaccountwizard/oauthpagecontroller.cpp and
//     src/libsync/account.cpp: capabilities with spaces.enabled and a
//     non-empty core.status.productversion.
//  7. A PROPFIND with the token, and the refresh (oauth.cpp
//     refreshAuthentication: discovery again, then refresh_token).
func TestOwnCloudDesktopSignIn(t *testing.T) {
	codes := make(chan url.Values, 1)
	loopback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case codes <- r.URL.Query():
		default:
		}
		io.WriteString(w, "signed in; close this window")
	}))
	t.Cleanup(loopback.Close)
	redirectURI := loopback.URL + "/"
	idp := testidp.Start(t, testidp.Options{WebClient: testidp.WebClient{ID: desktopClientID, RedirectURIs: []string{redirectURI}}})
	port := freePort(t)
	serverURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	startServer(t, serverOptions{issuer: idp.Issuer, port: port, webfinger: []string{"platform_url " + serverURL}})
	anonymous := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	// 1. WebFinger, anonymous.
	resp, body := send(t, anonymous, http.MethodGet, serverURL+"/.well-known/webfinger?resource="+url.QueryEscape(serverURL), "", nil)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.Contains(strings.ToLower(ct), "application/json") {
		t.Fatalf("anonymous WebFinger: %s, Content-Type %q: the client refuses it", resp.Status, ct)
	}
	var doc jrd
	mustDecode(t, body, &doc)
	if doc.Subject != serverURL {
		t.Fatalf("subject %q, want %q", doc.Subject, serverURL)
	}
	authURL := firstHref(doc, relIssuer)
	if authURL != idp.Issuer {
		t.Fatalf("issuer link %q, want %q", authURL, idp.Issuer)
	}

	// 1b, 1c: the fallback when WebFinger fails.
	if resp, _ := send(t, anonymous, http.MethodGet, serverURL+"/status.php", "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("status.php: %s", resp.Status)
	}
	for _, base := range []string{"/remote.php/webdav/", "/remote.php/dav/files/alice/", "/webdav/", "/dav/spaces/"} {
		resp, _ := send(t, anonymous, "PROPFIND", serverURL+base, "", nil)
		challenges := resp.Header.Values("WWW-Authenticate")
		if resp.StatusCode != http.StatusUnauthorized || len(challenges) == 0 ||
			!strings.HasPrefix(challenges[0], "Bearer ") || !strings.Contains(strings.ToLower(strings.Join(challenges, ", ")), "bearer ") {
			t.Fatalf("anonymous PROPFIND %s: %s %q, want 401 with the Bearer challenge first", base, resp.Status, challenges)
		}
	}

	// 2. Discovery at the server root, the provider's document.
	resp, body = send(t, anonymous, http.MethodGet, serverURL+"/.well-known/openid-configuration", "", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("discovery at the root: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	if _, want := send(t, anonymous, http.MethodGet, idp.Issuer+"/.well-known/openid-configuration", "", nil); body != want {
		t.Fatalf("discovery at the root\n%s\nis not the provider's\n%s", body, want)
	}
	var meta struct {
		AuthorizationEndpoint string   `json:"authorization_endpoint"`
		TokenEndpoint         string   `json:"token_endpoint"`
		TokenAuthMethods      []string `json:"token_endpoint_auth_methods_supported"`
	}
	mustDecode(t, body, &meta)
	if !strings.HasPrefix(meta.AuthorizationEndpoint, idp.Issuer+"/") || !strings.HasPrefix(meta.TokenEndpoint, idp.Issuer+"/") {
		t.Fatalf("endpoints %q, %q are not the provider's", meta.AuthorizationEndpoint, meta.TokenEndpoint)
	}
	if !slices.Contains(meta.TokenAuthMethods, "client_secret_basic") && !slices.Contains(meta.TokenAuthMethods, "client_secret_post") {
		t.Fatalf("token_endpoint_auth_methods_supported %q: the client asserts on it", meta.TokenAuthMethods)
	}
	etag := resp.Header.Get("ETag")
	if resp, _ := send(t, anonymous, http.MethodGet, serverURL+"/.well-known/openid-configuration", "", http.Header{"If-None-Match": {etag}}); etag == "" || resp.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation with ETag %q: %s, want 304", etag, resp.Status)
	}

	// 3. Authorization code with PKCE to the loopback listener.
	verifier := randomToken(t)
	code := authorize(t, meta.AuthorizationEndpoint, redirectURI, verifier, codes)
	tokens := tokenRequest(t, meta.TokenEndpoint, url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
		"code_verifier": {verifier}, "scope": {"openid offline_access email profile"}, "client_id": {desktopClientID},
	})
	if tokens.AccessToken == "" || tokens.RefreshToken == "" || !strings.EqualFold(tokens.TokenType, "bearer") {
		t.Fatalf("token answer %+v: the client needs access_token, refresh_token and token_type bearer", tokens)
	}
	bearer := "Bearer " + tokens.AccessToken

	// 4. The signed-in lookup gives the account URL.
	host := strings.Split(strings.TrimPrefix(serverURL, "http://"), ":")[0]
	resp, body = send(t, anonymous, http.MethodGet, serverURL+"/.well-known/webfinger?resource="+url.QueryEscape("acct:me@"+host), bearer, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("signed-in WebFinger: %s %s", resp.Status, body)
	}
	mustDecode(t, body, &doc)
	account := firstHref(doc, relInstance)
	if account != serverURL {
		t.Fatalf("server-instance link %q, want %q (links %v)", account, serverURL, doc.hrefs())
	}

	// 5. cloud/user.
	var user struct {
		OCS struct {
			Data struct {
				ID          string `json:"id"`
				DisplayName string `json:"display-name"`
			} `json:"data"`
		} `json:"ocs"`
	}
	resp, body = send(t, anonymous, http.MethodGet, account+"/ocs/v2.php/cloud/user?format=json", bearer, nil)
	mustDecode(t, body, &user)
	if resp.StatusCode != http.StatusOK || user.OCS.Data.ID != "alice" || user.OCS.Data.DisplayName == "" {
		t.Fatalf("cloud/user: %s %s", resp.Status, body)
	}

	// 6. Capabilities.
	var caps struct {
		OCS struct {
			Data struct {
				Capabilities struct {
					Core struct {
						Status struct {
							ProductVersion string `json:"productversion"`
						} `json:"status"`
					} `json:"core"`
					Spaces struct {
						Enabled bool `json:"enabled"`
					} `json:"spaces"`
				} `json:"capabilities"`
			} `json:"data"`
		} `json:"ocs"`
	}
	resp, body = send(t, anonymous, http.MethodGet, account+"/ocs/v2.php/cloud/capabilities?format=json", bearer, nil)
	mustDecode(t, body, &caps)
	if c := caps.OCS.Data.Capabilities; resp.StatusCode != http.StatusOK || !c.Spaces.Enabled || c.Core.Status.ProductVersion == "" {
		t.Fatalf("capabilities: %s, spaces.enabled %v, productversion %q", resp.Status, c.Spaces.Enabled, c.Core.Status.ProductVersion)
	}

	// 7. A PROPFIND with the token; then the refresh, and one with the new token.
	propfind := func(authorization string) {
		t.Helper()
		for _, path := range []string{"/remote.php/webdav/", "/remote.php/dav/files/alice/"} {
			if resp, body := send(t, anonymous, "PROPFIND", account+path, authorization, http.Header{"Depth": {"0"}}); resp.StatusCode != http.StatusMultiStatus {
				t.Fatalf("PROPFIND %s with the token: %s %s", path, resp.Status, body)
			}
		}
	}
	propfind(bearer)
	if resp, _ := send(t, anonymous, http.MethodGet, serverURL+"/.well-known/openid-configuration", "", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("discovery before the refresh: %s", resp.Status)
	}
	renewed := tokenRequest(t, meta.TokenEndpoint, url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {tokens.RefreshToken},
		"scope": {"openid email profile"}, "client_id": {desktopClientID},
	})
	if renewed.AccessToken == "" || renewed.AccessToken == tokens.AccessToken {
		t.Fatalf("refresh gave no new access token: %+v", renewed)
	}
	propfind("Bearer " + renewed.AccessToken)
}

// TestWebFingerSubjectWithTrailingSlash: the iOS app
// (owncloud/ios-sdk ownCloudSDK/Connection/OCConnection+Setup.m) compares
// subject with its root URL exactly, and the Android app
// (GetInstancesViaWebFingerOperation.kt) filters by rel on the server; both
// get what they asked for, with and without a trailing slash.
func TestWebFingerSubjectWithTrailingSlash(t *testing.T) {
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	for _, resource := range []string{s.URL, s.URL + "/"} {
		query := "rel=" + url.QueryEscape(relIssuer) + "&resource=" + url.QueryEscape(resource)
		resp, doc := lookup(t, s, query, "")
		if resp.StatusCode != http.StatusOK || doc.Subject != resource || !slices.Equal(doc.hrefs(), []string{relIssuer + " " + idp.Issuer}) {
			t.Errorf("lookup of %q: %d, subject %q, links %v", resource, resp.StatusCode, doc.Subject, doc.hrefs())
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/.well-known/webfinger?resource="+url.QueryEscape(s.URL), nil)
	req.Header.Set("Accept", "application/jrd+json")
	resp, _ := send(t, http.DefaultClient, req.Method, req.URL.String(), "", req.Header)
	if ct := resp.Header.Get("Content-Type"); ct != "application/jrd+json" {
		t.Errorf("Accept: application/jrd+json got Content-Type %q", ct)
	}
}

// send makes one request and reads its answer.
func send(t *testing.T, c *http.Client, method, target, authorization string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

func mustDecode(t *testing.T, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("decoding %q: %v", body, err)
	}
}

// firstHref is the href of the first link with rel, as the client takes it.
func firstHref(doc jrd, rel string) string {
	for _, l := range doc.Links {
		if l.Rel == rel {
			return l.Href
		}
	}
	return ""
}

func randomToken(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

var formAction = regexp.MustCompile(`<form method="post" action="([^"]+)"`)

// authorize plays the browser: the authorization request as the desktop
// client builds it, the provider's sign-in form filled in as alice, and
// the redirects followed to the loopback listener, which hands over the
// query it got. It returns the code, after checking state.
func authorize(t *testing.T, endpoint, redirectURI, verifier string, codes <-chan url.Values) string {
	t.Helper()
	sum := sha256.Sum256([]byte(verifier))
	state := randomToken(t)
	q := url.Values{
		"response_type": {"code"}, "client_id": {desktopClientID}, "redirect_uri": {redirectURI},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"scope": {"openid offline_access email profile"}, "state": {state},
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar}
	resp, page := send(t, browser, http.MethodGet, endpoint+"?"+q.Encode(), "", nil)
	m := formAction.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no sign-in form (%s):\n%s", resp.Status, page)
	}
	action, err := resp.Request.URL.Parse(m[1])
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"username": {"alice"}, "password": {"alice-password"}}
	resp, err = browser.PostForm(action.String(), form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case got := <-codes:
		if got.Get("state") != state || got.Get("code") == "" {
			t.Fatalf("loopback redirect %v, want a code and state %q", got, state)
		}
		return got.Get("code")
	default:
		t.Fatalf("the browser ended at %s (%s), not at the loopback listener", resp.Request.URL, resp.Status)
		return ""
	}
}

type tokenAnswer struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
}

func tokenRequest(t *testing.T, endpoint string, form url.Values) tokenAnswer {
	t.Helper()
	resp, err := http.PostForm(endpoint, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token endpoint: %s %s", resp.Status, body)
	}
	var answer tokenAnswer
	mustDecode(t, string(body), &answer)
	return answer
}
