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
//     client_secret_post in token_endpoint_auth_methods_supported (Basic
//     is taken when listed); the prompt is the theme's "select_account
//     consent" narrowed to prompt_values_supported.
//  3. oauth.cpp (authorisationLink, getTokens, postTokenRequest) and
//     src/libsync/theme.cpp: authorization code with PKCE (S256) for the
//     fixed client, scope "openid offline_access email profile", a
//     redirect to a loopback listener at http://127.0.0.1:<random port>;
//     the code goes to the token endpoint with the client's secret in a
//     Basic header, and the answer must carry access_token, refresh_token
//     and token_type bearer.
//  4. webfingerlookupadapter.cpp: the signed-in lookup of acct:me@<host>;
//     the first server-instance link is the account URL.
//  5. userinfoadapter.cpp: ocs/v2.php/cloud/user (ocs.data.id).
//  6. src/gui/newaccountwizard/oauthpagecontroller.cpp and
//     src/libsync/account.cpp: capabilities with spaces.enabled and a
//     non-empty core.status.productversion.
//  7. A PROPFIND with the token, and the refresh (oauth.cpp
//     refreshAuthentication: discovery again, then refresh_token with the
//     scope and the secret in the Basic header).
func TestOwnCloudDesktopSignIn(t *testing.T) {
	t.Parallel()
	codes := make(chan url.Values, 1)
	loopback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case codes <- r.URL.Query():
		default:
		}
		io.WriteString(w, "signed in; close this window")
	}))
	t.Cleanup(loopback.Close)
	site := startSignInSite(t)
	serverURL, anonymous, idp := site.url, site.anonymous, site.idp

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
	meta := site.checkDiscovery(t, body)
	if !slices.Contains(meta.TokenAuthMethods, "client_secret_basic") && !slices.Contains(meta.TokenAuthMethods, "client_secret_post") {
		t.Fatalf("token_endpoint_auth_methods_supported %q: the client asserts on it", meta.TokenAuthMethods)
	}
	prompt := meta.prompt(testidp.OwnCloudPrompt)
	if prompt != testidp.OwnCloudPrompt {
		t.Errorf("prompt %q from prompt_values_supported %q, want %q", prompt, meta.PromptValues, testidp.OwnCloudPrompt)
	}
	etag := resp.Header.Get("ETag")
	if resp, _ := send(t, anonymous, http.MethodGet, serverURL+"/.well-known/openid-configuration", "", http.Header{"If-None-Match": {etag}}); etag == "" || resp.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation with ETag %q: %s, want 304", etag, resp.Status)
	}

	// 3. Authorization code with PKCE to the loopback listener, then the
	// token endpoint with the secret in a Basic header.
	redirectURI := loopback.URL // http://127.0.0.1:<port>, no path, as the client writes it
	verifier, state := randomToken(t), randomToken(t)
	site.signIn(t, meta.AuthorizationEndpoint+"?"+authorizationQuery(testidp.OwnCloudDesktopID, redirectURI, verifier, state, prompt).Encode())
	var got url.Values
	select {
	case got = <-codes:
	default:
		t.Fatal("the browser did not reach the loopback listener")
	}
	if got.Get("state") != state || got.Get("code") == "" {
		t.Fatalf("loopback redirect %v, want a code and state %q", got, state)
	}
	desktopAuth := clientBasic(testidp.OwnCloudDesktopID, testidp.OwnCloudDesktopSecret)
	tokens := postToken(t, meta.TokenEndpoint, desktopAuth, url.Values{
		"grant_type": {"authorization_code"}, "code": {got.Get("code")}, "redirect_uri": {redirectURI},
		"code_verifier": {verifier}, "scope": {testidp.OwnCloudScope},
	})
	if tokens.AccessToken == "" || tokens.RefreshToken == "" || !strings.EqualFold(tokens.TokenType, "bearer") {
		t.Fatalf("token answer %+v: the client needs access_token, refresh_token and token_type bearer", tokens)
	}
	bearer := "Bearer " + tokens.AccessToken

	// 4. The signed-in lookup gives the account URL.
	resp, body = send(t, anonymous, http.MethodGet, serverURL+"/.well-known/webfinger?resource="+url.QueryEscape("acct:me@"+site.host), bearer, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("signed-in WebFinger: %s %s", resp.Status, body)
	}
	mustDecode(t, body, &doc)
	account := firstHref(doc, relInstance)
	if account != serverURL {
		t.Fatalf("server-instance link %q, want %q (links %v)", account, serverURL, doc.hrefs())
	}

	// 5. cloud/user.
	site.checkCloudUser(t, account, bearer)

	// 6. Capabilities.
	caps := site.capabilities(t, account, bearer, nil)
	if c := caps.OCS.Data.Capabilities; !c.Spaces.Enabled || c.Core.Status.ProductVersion == "" {
		t.Fatalf("capabilities: spaces.enabled %v, productversion %q", c.Spaces.Enabled, c.Core.Status.ProductVersion)
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
	renewed := postToken(t, meta.TokenEndpoint, desktopAuth, url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {tokens.RefreshToken}, "scope": {testidp.OwnCloudScope},
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
	t.Parallel()
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
	return sendBody(t, c, method, target, authorization, header, "")
}

// sendBody is send with a request body.
func sendBody(t *testing.T, c *http.Client, method, target, authorization string, header http.Header, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
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
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(answer)
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

// signInSite is a server whose users sign in at the test provider, which
// knows the ownCloud clients' fixed clients, as a deployment registers
// them. Its WebFinger names the server itself as the users' instance.
type signInSite struct {
	idp  *testidp.IdP
	url  string // what the user types: http://127.0.0.1:<port>
	host string
	// anonymous follows no redirect and keeps no cookie.
	anonymous *http.Client
}

func startSignInSite(t *testing.T) *signInSite {
	t.Helper()
	idp := testidp.Start(t, testidp.Options{Clients: testidp.OwnCloudClients()})
	port := freePort(t)
	serverURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	startServer(t, serverOptions{issuer: idp.Issuer, port: port, webfinger: []string{"platform_url " + serverURL}})
	return &signInSite{
		idp:       idp,
		url:       serverURL,
		host:      "127.0.0.1",
		anonymous: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

// oidcMeta is what the ownCloud clients read of a discovery document.
type oidcMeta struct {
	AuthorizationEndpoint string   `json:"authorization_endpoint"`
	TokenEndpoint         string   `json:"token_endpoint"`
	RegistrationEndpoint  string   `json:"registration_endpoint"`
	TokenAuthMethods      []string `json:"token_endpoint_auth_methods_supported"`
	PromptValues          []string `json:"prompt_values_supported"`
}

// checkDiscovery decodes a discovery document: its endpoints must be the
// provider's, and it must offer no dynamic registration, so that the apps
// use their fixed clients (the test provider's registration is off).
func (s *signInSite) checkDiscovery(t *testing.T, body string) oidcMeta {
	t.Helper()
	var meta oidcMeta
	mustDecode(t, body, &meta)
	if !strings.HasPrefix(meta.AuthorizationEndpoint, s.idp.Issuer+"/") || !strings.HasPrefix(meta.TokenEndpoint, s.idp.Issuer+"/") {
		t.Fatalf("endpoints %q, %q are not the provider's", meta.AuthorizationEndpoint, meta.TokenEndpoint)
	}
	if meta.RegistrationEndpoint != "" {
		t.Fatalf("registration_endpoint %q: the clients would register instead of using their fixed client", meta.RegistrationEndpoint)
	}
	return meta
}

// prompt narrows the client's prompt values to those the provider lists,
// as the desktop client does (oauth.cpp fetchWellKnown); with no list, the
// client's own.
func (m oidcMeta) prompt(wanted string) string {
	if len(m.PromptValues) == 0 {
		return wanted
	}
	var kept []string
	for v := range strings.FieldsSeq(wanted) {
		if slices.Contains(m.PromptValues, v) {
			kept = append(kept, v)
		}
	}
	return strings.Join(kept, " ")
}

// authorizationQuery is the authorization request the ownCloud clients
// send: code flow, PKCE S256, their scope and prompt.
func authorizationQuery(clientID, redirectURI, verifier, state, prompt string) url.Values {
	sum := sha256.Sum256([]byte(verifier))
	return url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"scope": {testidp.OwnCloudScope}, "prompt": {prompt}, "state": {state},
	}
}

var formAction = regexp.MustCompile(`<form method="post" action="([^"]+)"`)

// signIn plays the browser the client opens: the authorization request,
// the provider's sign-in form filled in as alice, and the redirects
// followed until one leaves http(s) (an app's oc:// URI, which the system
// hands to the app instead). It returns the last answer: the loopback
// listener's for the desktop client, the redirect to the app otherwise.
func (s *signInSite) signIn(t *testing.T, authorizationURL string) *http.Response {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" || len(via) > 10 {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, page := send(t, browser, http.MethodGet, authorizationURL, "", nil)
	m := formAction.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no sign-in form (%s):\n%s", resp.Status, page)
	}
	action, err := resp.Request.URL.Parse(m[1])
	if err != nil {
		t.Fatal(err)
	}
	resp, err = browser.PostForm(action.String(), url.Values{"username": {"alice"}, "password": {"alice-password"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// appRedirect reads the code of a redirect to an app's redirect URI,
// after checking state, as the app does when the system hands it the URI.
func appRedirect(t *testing.T, resp *http.Response, redirectURI, state string) string {
	t.Helper()
	loc, err := url.Parse(resp.Header.Get("Location"))
	// The provider writes the URI back with an empty path as "/".
	if err != nil || strings.TrimSuffix(loc.Scheme+"://"+loc.Host+loc.Path, "/") != redirectURI {
		t.Fatalf("the sign-in ended at %s (%s), not with a redirect to %s", resp.Request.URL, resp.Status, redirectURI)
	}
	if loc.Query().Get("state") != state || loc.Query().Get("code") == "" {
		t.Fatalf("redirect %q, want a code and state %q", loc, state)
	}
	return loc.Query().Get("code")
}

// clientBasic is a client's Basic header at the token endpoint.
func clientBasic(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
}

type tokenAnswer struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	TokenType    string `json:"token_type"`
}

// postToken sends a token request as the Qt, OkHttp and iOS clients do
// (a form; authorization, when not empty, is the client's Basic header)
// and requires a 200.
func postToken(t *testing.T, endpoint, authorization string, form url.Values) tokenAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
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

// checkCloudUser asks ocs/v2.php/cloud/user as all three clients do; it
// must name alice.
func (s *signInSite) checkCloudUser(t *testing.T, base, bearer string) {
	t.Helper()
	var user struct {
		OCS struct {
			Data struct {
				ID          string `json:"id"`
				DisplayName string `json:"display-name"`
			} `json:"data"`
		} `json:"ocs"`
	}
	resp, body := send(t, s.anonymous, http.MethodGet, base+"/ocs/v2.php/cloud/user?format=json", bearer, nil)
	mustDecode(t, body, &user)
	if resp.StatusCode != http.StatusOK || user.OCS.Data.ID != "alice" || user.OCS.Data.DisplayName == "" {
		t.Fatalf("cloud/user: %s %s", resp.Status, body)
	}
}

// ocsCapabilities is what the ownCloud clients read of the capabilities.
type ocsCapabilities struct {
	OCS struct {
		Data struct {
			Capabilities struct {
				Core struct {
					Status struct {
						Version        string `json:"version"`
						ProductName    string `json:"productname"`
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

func (s *signInSite) capabilities(t *testing.T, base, bearer string, header http.Header) ocsCapabilities {
	t.Helper()
	var caps ocsCapabilities
	resp, body := send(t, s.anonymous, http.MethodGet, base+"/ocs/v2.php/cloud/capabilities?format=json", bearer, header)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("capabilities: %s %s", resp.Status, body)
	}
	mustDecode(t, body, &caps)
	return caps
}
