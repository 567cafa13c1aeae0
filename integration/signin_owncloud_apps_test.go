package integration

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// TestOwnCloudAndroidSignIn replays the ownCloud Android app's sign-in
// against the real Caddy and the test provider, in its order and with its
// checks, as read from owncloud/android:
//
//  1. owncloudComLibrary/…/webfinger/GetInstancesViaWebFingerOperation.kt
//     (from owncloudData/…/server/repository/OCServerInfoRepository.kt):
//     GET /.well-known/webfinger?rel=<issuer rel>&resource=<URL as typed>,
//     anonymous, redirects not followed, 200; every link's href is taken
//     (the server filters by rel) and the first is the issuer.
//  2. owncloudComLibrary/…/oauth/GetOIDCDiscoveryRemoteOperation.kt: the
//     issuer's discovery document, with OCS-APIREQUEST: true; without
//     WebFinger the app asks the server's, which must be the same.
//  3. owncloudApp/…/authentication/LoginActivity.kt: no registration
//     endpoint, so the fixed client of owncloudApp/src/main/res/values/setup.xml;
//     the authorization request of OAuthUtils.kt buildAuthorizationRequest
//     (redirect oc://android.owncloud.com, scope and prompt of setup.xml,
//     PKCE, state); the system hands the oc:// redirect to the app, which
//     reads the code (the test reads it from the Location it does not
//     follow); exchangeAuthorizationCodeForTokens sends client_id and
//     client_secret in the form, as discovery lists client_secret_post
//     (TokenRequestParams.kt).
//  4. AuthenticationViewModel.kt loginOAuth and
//     GetOwnCloudInstancesFromAuthenticatedWebFingerUseCase.kt: the lookup
//     of acct:me@<host> with rel server-instance and the token; the first
//     href is the account's base URL.
//  5. owncloudData/…/OCRemoteAuthenticationDataSource.kt login:
//     GetBaseUrlRemoteOperation.kt (PROPFIND depth 0, allprop, of
//     remote.php/dav/files/, which must be 2xx or 404), then
//     GetRemoteUserInfoOperation.kt (ocs/v2.php/cloud/user?format=json).
//  6. What the app loads next, from owncloudComLibrary:
//     GetRemoteCapabilitiesOperation.kt, GetRemoteSpacesOperation.kt
//     (graph/v1.0/me/drives), GetRemoteUserIdOperation.kt (graph/v1.0/me),
//     GetRemoteUserGroupsOperation.kt (me?$expand=memberOf), and a listing
//     of the personal space at its webDavUrl.
//  7. AccountAuthenticator.java: the refresh, with the scope and the
//     client's secret in the form.
func TestOwnCloudAndroidSignIn(t *testing.T) {
	t.Parallel()
	site := startSignInSite(t)
	typed := site.url

	// 1. WebFinger with the rel filter.
	query := "rel=" + url.QueryEscape(relIssuer) + "&resource=" + url.QueryEscape(typed)
	resp, body := send(t, site.anonymous, http.MethodGet, typed+"/.well-known/webfinger?"+query, "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("WebFinger: %s %s", resp.Status, body)
	}
	var doc jrd
	mustDecode(t, body, &doc)
	if len(doc.Links) == 0 || !slices.Equal(doc.hrefs(), []string{relIssuer + " " + site.idp.Issuer}) {
		t.Fatalf("WebFinger links %v: the app takes every href as an issuer", doc.hrefs())
	}
	issuer := doc.Links[0].Href

	// 2. Discovery at the issuer, and the fallback's at the server.
	ocsHeader := http.Header{"OCS-APIREQUEST": {"true"}}
	resp, body = send(t, http.DefaultClient, http.MethodGet, issuer+"/.well-known/openid-configuration", "", ocsHeader)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("discovery at the issuer: %s", resp.Status)
	}
	meta := site.checkDiscovery(t, body)
	if resp, atServer := send(t, http.DefaultClient, http.MethodGet, typed+"/.well-known/openid-configuration", "", ocsHeader); resp.StatusCode != http.StatusOK || atServer != body {
		t.Fatalf("discovery at the server: %s, not the issuer's document", resp.Status)
	}
	if !slices.Contains(meta.TokenAuthMethods, "client_secret_post") {
		t.Fatalf("token_endpoint_auth_methods_supported %q: the app would send Basic", meta.TokenAuthMethods)
	}

	// 3. The code, then the token endpoint with the secret in the form.
	verifier, state := randomToken(t), randomToken(t)
	authorization := authorizationQuery(testidp.OwnCloudAndroidID, testidp.OwnCloudAndroidRedirect, verifier, state, testidp.OwnCloudPrompt)
	code := appRedirect(t, site.signIn(t, meta.AuthorizationEndpoint+"?"+authorization.Encode()), testidp.OwnCloudAndroidRedirect, state)
	clientForm := url.Values{"client_id": {testidp.OwnCloudAndroidID}, "client_secret": {testidp.OwnCloudAndroidSecret}}
	tokens := postToken(t, meta.TokenEndpoint, "", withForm(url.Values{
		"code": {code}, "grant_type": {"authorization_code"}, "redirect_uri": {testidp.OwnCloudAndroidRedirect},
		"code_verifier": {verifier}, "scope": {testidp.OwnCloudScope},
	}, clientForm))
	if tokens.AccessToken == "" || tokens.RefreshToken == "" {
		t.Fatalf("token answer %+v: the app keeps an access and a refresh token", tokens)
	}
	bearer := "Bearer " + tokens.AccessToken

	// 4. The signed-in lookup of the instance.
	query = "rel=" + url.QueryEscape(relInstance) + "&resource=" + url.QueryEscape("acct:me@"+site.host)
	resp, body = send(t, site.anonymous, http.MethodGet, typed+"/.well-known/webfinger?"+query, bearer, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("signed-in WebFinger: %s %s", resp.Status, body)
	}
	mustDecode(t, body, &doc)
	if len(doc.Links) == 0 || doc.Links[0].Href != typed {
		t.Fatalf("signed-in WebFinger links %v, want the instance %s first", doc.hrefs(), typed)
	}
	base := doc.Links[0].Href

	// 5. The base URL check and the user.
	allprop := `<?xml version="1.0" encoding="UTF-8"?><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>`
	resp, body = sendBody(t, site.anonymous, "PROPFIND", base+"/remote.php/dav/files/", bearer, http.Header{"Depth": {"0"}, "Content-Type": {"application/xml; charset=utf-8"}}, allprop)
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
		t.Fatalf("PROPFIND remote.php/dav/files/: %s %s: the app's login fails on it", resp.Status, body)
	}
	site.checkCloudUser(t, base, bearer)

	// 6. Capabilities, spaces, the user's id and groups, the personal space.
	if caps := site.capabilities(t, base, bearer, ocsHeader); !caps.OCS.Data.Capabilities.Spaces.Enabled {
		t.Fatal("capabilities: spaces.enabled is not true: the app would not use the spaces")
	}
	webDavURL := personalDrive(t, site, base, bearer)
	var me struct {
		ID       string `json:"id"`
		MemberOf []struct {
			ID string `json:"id"`
		} `json:"memberOf"`
	}
	resp, body = send(t, site.anonymous, http.MethodGet, base+"/graph/v1.0/me", bearer, nil)
	mustDecode(t, body, &me)
	if resp.StatusCode != http.StatusOK || me.ID == "" {
		t.Fatalf("graph/v1.0/me: %s %s", resp.Status, body)
	}
	resp, body = send(t, site.anonymous, http.MethodGet, base+"/graph/v1.0/me?%24expand=memberOf", bearer, nil)
	mustDecode(t, body, &me)
	if resp.StatusCode != http.StatusOK || me.MemberOf == nil {
		t.Fatalf("graph/v1.0/me?$expand=memberOf: %s %s: the app reads memberOf", resp.Status, body)
	}
	listSpace(t, site, webDavURL, bearer)

	// 7. The refresh.
	renewed := postToken(t, meta.TokenEndpoint, "", withForm(url.Values{
		"grant_type": {"refresh_token"}, "scope": {testidp.OwnCloudScope}, "refresh_token": {tokens.RefreshToken},
	}, clientForm))
	if renewed.AccessToken == "" || renewed.AccessToken == tokens.AccessToken {
		t.Fatalf("refresh gave no new access token: %+v", renewed)
	}
	listSpace(t, site, webDavURL, "Bearer "+renewed.AccessToken)
}

// TestOwnCloudIOSSignIn replays the ownCloud iOS app's sign-in against the
// real Caddy and the test provider, in its order and with its checks, as
// read from owncloud/ios-sdk:
//
//  1. ownCloudSDK/Connection/OCConnection+Setup.m (prepareForSetupWithOptions):
//     GET /.well-known/webfinger?resource=<root URL>, the root URL being
//     the typed one with the path "/" (NSURL+OCURLQueryParameterExtensions.m
//     rootURL); subject must equal it exactly, and the first issuer link is
//     the provider's base. The lookup URL of acct:me@<host> is kept.
//  2. ownCloudSDK/Authentication/OCAuthenticationMethodOpenIDConnect.m:
//     the provider's discovery document; no registration_endpoint, so the
//     fixed client of OCAuthenticationMethodOAuth2.m; PKCE and state;
//     scope and prompt of OCAuthenticationMethodOpenIDConnect.m; the
//     redirect oc://ios.owncloud.com read by the app; the token request
//     with the client in a Basic header, as discovery lists
//     client_secret_basic (sendClientIDAndSecretInPOSTBodyForConnection).
//  3. The token answer has no user_id, so retrieveAvailableInstances
//     (OCConnection+Setup.m): the acct:me lookup with the token; the
//     first server-instance link is the account URL.
//  4. ownCloudSDK/Connection/OCConnection.m connectWithCompletionHandler:
//     status.php (a version of 10.0 or more, or hidden; not Nextcloud;
//     not in maintenance), capabilities (OCConnection+Compatibility.m:
//     core.status.version of 10.0 or more, not Nextcloud, spaces.enabled
//     for the drive API), cloud/user, the role definitions, me/drives, and
//     a listing of the personal drive's davRootURL.
//  5. The connection validator (OCConnection.m): PROPFIND depth 0 of
//     remote.php/dav/files/ for D:supported-method-set, 2xx.
//  6. The refresh (tokenRefreshParametersForRefreshToken): grant,
//     refresh_token, client_id, client_secret and scope in the form and
//     the client in the Basic header as well.
//
// The app's default URL has no path, so the WebFinger resource ends with
// "/"; TestOwnCloudAndroidSignIn asks without it.
func TestOwnCloudIOSSignIn(t *testing.T) {
	t.Parallel()
	site := startSignInSite(t)
	root := site.url + "/"

	// 1. WebFinger of the root URL; subject compared exactly.
	resp, body := send(t, site.anonymous, http.MethodGet, root+".well-known/webfinger?resource="+url.QueryEscape(root), "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("WebFinger: %s %s", resp.Status, body)
	}
	var doc jrd
	mustDecode(t, body, &doc)
	if doc.Subject != root {
		t.Fatalf("subject %q, want %q exactly: the app skips WebFinger", doc.Subject, root)
	}
	idpBase := firstHref(doc, relIssuer)
	if idpBase != site.idp.Issuer {
		t.Fatalf("issuer link %q, want %q", idpBase, site.idp.Issuer)
	}
	accountLookup := root + ".well-known/webfinger?resource=" + url.QueryEscape("acct:me@"+site.host)

	// 2. Discovery at the provider, the code, the token with Basic.
	resp, body = send(t, http.DefaultClient, http.MethodGet, idpBase+"/.well-known/openid-configuration", "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("discovery: %s", resp.Status)
	}
	meta := site.checkDiscovery(t, body)
	if !slices.Contains(meta.TokenAuthMethods, "client_secret_basic") {
		t.Fatalf("token_endpoint_auth_methods_supported %q: the app would post its secret", meta.TokenAuthMethods)
	}
	verifier, state := randomToken(t), randomToken(t)
	authorization := authorizationQuery(testidp.OwnCloudIOSID, testidp.OwnCloudIOSRedirect, verifier, state, testidp.OwnCloudPrompt)
	code := appRedirect(t, site.signIn(t, meta.AuthorizationEndpoint+"?"+authorization.Encode()), testidp.OwnCloudIOSRedirect, state)
	iosAuth := clientBasic(testidp.OwnCloudIOSID, testidp.OwnCloudIOSSecret)
	tokens := postToken(t, meta.TokenEndpoint, iosAuth, url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testidp.OwnCloudIOSRedirect}, "code_verifier": {verifier},
	})
	if tokens.AccessToken == "" || tokens.RefreshToken == "" {
		t.Fatalf("token answer %+v: the app keeps an access and a refresh token", tokens)
	}
	bearer := "Bearer " + tokens.AccessToken

	// 3. The account's instance.
	resp, body = send(t, site.anonymous, http.MethodGet, accountLookup, bearer, nil)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("signed-in WebFinger: %s %s", resp.Status, body)
	}
	mustDecode(t, body, &doc)
	base := firstHref(doc, relInstance)
	if base != site.url {
		t.Fatalf("server-instance link %q, want %q (links %v)", base, site.url, doc.hrefs())
	}

	// 4. The connection: status.php, capabilities, user, roles, drives.
	var status struct {
		Version     string `json:"version"`
		ProductName string `json:"productname"`
		Maintenance bool   `json:"maintenance"`
	}
	resp, body = send(t, site.anonymous, http.MethodGet, base+"/status.php", "", nil)
	mustDecode(t, body, &status)
	if resp.StatusCode != http.StatusOK || (status.Version != "" && versionBelow(status.Version, 10)) || strings.EqualFold(status.ProductName, "nextcloud") || status.Maintenance {
		t.Fatalf("status.php: %s %s: the app refuses it", resp.Status, body)
	}
	caps := site.capabilities(t, base, bearer, nil).OCS.Data.Capabilities
	if versionBelow(caps.Core.Status.Version, 10) || strings.EqualFold(caps.Core.Status.ProductName, "nextcloud") || !caps.Spaces.Enabled {
		t.Fatalf("capabilities: version %q, productname %q, spaces.enabled %v: the app refuses them or uses no drives",
			caps.Core.Status.Version, caps.Core.Status.ProductName, caps.Spaces.Enabled)
	}
	site.checkCloudUser(t, base, bearer)
	var roles []struct {
		ID string `json:"id"`
	}
	resp, body = send(t, site.anonymous, http.MethodGet, base+"/graph/v1beta1/roleManagement/permissions/roleDefinitions", bearer, nil)
	mustDecode(t, body, &roles)
	if resp.StatusCode != http.StatusOK || len(roles) == 0 {
		t.Fatalf("role definitions: %s %s", resp.Status, body)
	}
	webDavURL := personalDrive(t, site, base, bearer)
	listSpace(t, site, webDavURL, bearer)

	// 5. The connection validator.
	supportedMethods := `<?xml version="1.0" encoding="UTF-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:supported-method-set/></D:prop></D:propfind>`
	resp, body = sendBody(t, site.anonymous, "PROPFIND", base+"/remote.php/dav/files/", bearer, http.Header{"Depth": {"0"}, "Content-Type": {"application/xml"}}, supportedMethods)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("the validator's PROPFIND of remote.php/dav/files/: %s %s", resp.Status, body)
	}

	// 6. The refresh, with the client in the form and in the header.
	renewed := postToken(t, meta.TokenEndpoint, iosAuth, url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {tokens.RefreshToken},
		"client_id": {testidp.OwnCloudIOSID}, "client_secret": {testidp.OwnCloudIOSSecret}, "scope": {testidp.OwnCloudScope},
	})
	if renewed.AccessToken == "" || renewed.AccessToken == tokens.AccessToken {
		t.Fatalf("refresh gave no new access token: %+v", renewed)
	}
	listSpace(t, site, webDavURL, "Bearer "+renewed.AccessToken)
}

// personalDrive asks graph/v1.0/me/drives, as both apps do, and returns
// the personal drive's webDavUrl.
func personalDrive(t *testing.T, site *signInSite, base, bearer string) string {
	t.Helper()
	var drives struct {
		Value []struct {
			DriveType string `json:"driveType"`
			Root      struct {
				WebDavURL string `json:"webDavUrl"`
			} `json:"root"`
		} `json:"value"`
	}
	resp, body := send(t, site.anonymous, http.MethodGet, base+"/graph/v1.0/me/drives", bearer, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("graph/v1.0/me/drives: %s %s", resp.Status, body)
	}
	mustDecode(t, body, &drives)
	for _, d := range drives.Value {
		if d.DriveType == "personal" && strings.HasPrefix(d.Root.WebDavURL, base+"/") {
			return d.Root.WebDavURL
		}
	}
	t.Fatalf("no personal drive with a webDavUrl under %s: %s", base, body)
	return ""
}

// listSpace lists a space's root, depth 1, with the token.
func listSpace(t *testing.T, site *signInSite, webDavURL, bearer string) {
	t.Helper()
	if resp, body := send(t, site.anonymous, "PROPFIND", webDavURL, bearer, http.Header{"Depth": {"1"}}); resp.StatusCode != http.StatusMultiStatus {
		t.Fatalf("PROPFIND %s: %s %s", webDavURL, resp.Status, body)
	}
}

// versionBelow reports whether a dotted version's major number is below
// major, or the version is not one.
func versionBelow(version string, major int) bool {
	first, _, _ := strings.Cut(version, ".")
	n := 0
	for _, c := range first {
		if c < '0' || c > '9' {
			return true
		}
		n = n*10 + int(c-'0')
	}
	return first == "" || n < major
}

// withForm adds the fields of extra to form.
func withForm(form, extra url.Values) url.Values {
	for k, v := range extra {
		form[k] = v
	}
	return form
}
