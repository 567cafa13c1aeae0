package integration

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testidp"
)

// webClientID is the page's client at the test provider.
const webClientID = "davspaces-web"

// oidcOptions are the options of testdata/webui/oidc.mjs.
type oidcOptions struct {
	browserSession
	Downloads  string `json:"downloads"`
	Issuer     string `json:"issuer"`
	WorkFolder string `json:"workFolder"`
	SubFolder  string `json:"subFolder"`
	NewFolder  string `json:"newFolder"`
	Download   string `json:"download"`
	// TokenTTLMs is the access tokens' lifetime: the script works on
	// past it.
	TokenTTLMs int64  `json:"tokenTTLMs"`
	Foreign    string `json:"foreign"`
}

// TestWebUIOIDC signs in to the browser page with the test OpenID Connect
// provider: the real Caddy with oidc_auth (browser_pages) and davspaces'
// `web { client_id … }`, chromium sent from a folder URL to the
// provider's form and back to that folder, in-page navigation without a
// second sign-in, a new folder and a download with the token, the access
// token renewed with the refresh token past its short lifetime, a reload
// signed in through the provider's session, "not found" for another
// user's files, and sign-out, after which the password is asked again.
func TestWebUIOIDC(t *testing.T) {
	t.Parallel()
	chromium, dir := requireBrowser(t)
	const tokenTTL = 15 * time.Second
	port := freePort(t)
	origin := fmt.Sprintf("http://127.0.0.1:%d", port)
	idp := testidp.Start(t, testidp.Options{TokenTTL: tokenTTL, WebClient: testidp.WebClient{
		ID: webClientID, RedirectURIs: []string{origin + "/"}, PostLogoutRedirectURIs: []string{origin + "/"},
	}})
	s := startServer(t, serverOptions{issuer: idp.Issuer, port: port, davspaces: labSpace, env: []string{"OIDC_WEB_CLIENT_ID=" + webClientID}})

	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	work := "/dav/spaces/lab/results/"
	alice.expect(http.StatusCreated, "MKCOL", work, "")
	alice.expect(http.StatusCreated, "MKCOL", work+"raw/", "")
	const notes = "Measured with a signed-in browser\n"
	alice.expect(http.StatusCreated, http.MethodPut, work+"notes.txt", notes)

	// The page of a folder without credentials is the same shell for a
	// path that exists and one that does not: it names nothing.
	shell := func(path string) string {
		req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
		req.Header.Set("Accept", "text/html")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, resp.StatusCode)
		body := make([]byte, 64<<10)
		n, _ := resp.Body.Read(body)
		return b.String() + " " + string(body[:n])
	}
	if a, b := shell(work), shell("/dav/spaces/no-such-space/x/"); a != b || !strings.HasPrefix(a, "200 ") || !strings.Contains(a, webClientID) {
		t.Errorf("signed-out pages differ or are not the page:\n%.300s\n%.300s", a, b)
	}

	opts := oidcOptions{
		browserSession: newBrowserSession(t, chromium, s.URL, "alice", "alice-password"),
		Downloads:      t.TempDir(),
		Issuer:         idp.Issuer,
		WorkFolder:     work,
		SubFolder:      "raw",
		NewFolder:      "Signed in",
		Download:       "notes.txt",
		TokenTTLMs:     tokenTTL.Milliseconds(),
		Foreign:        "/dav/files/bob/",
	}
	events := runDrive(t, dir, "oidc.mjs", opts)
	for _, ev := range events {
		t.Logf("%v", ev)
	}

	if got, err := os.ReadFile(filepath.Join(opts.Downloads, opts.Download)); err != nil || string(got) != notes {
		t.Errorf("the page's download of %s: %q, %v; want %q", opts.Download, got, err, notes)
	}
	alice.expect(http.StatusMultiStatus, "PROPFIND", work+"Signed%20in/", "", "Depth", "0")
	if n := idp.Refreshes(t); n < 1 {
		t.Errorf("the provider saw %d refresh_token grants; the page did not renew its token", n)
	} else {
		t.Logf("the page renewed its token %d times", n)
	}
}

// TestWebUIBasicPrompt: without a client id, a browser's page load that
// comes without credentials (browser_pages lets it through oidc_auth) is
// answered with a Basic challenge, so that the browser's own prompt
// appears; the page's assets load without credentials, and WebDAV
// requests without them are refused by oidc_auth as before.
func TestWebUIBasicPrompt(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	get := func(method, path, accept string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, path := range []string{"/", "/webdav/", "/dav/spaces/no-such-space/x/"} {
		resp := get(http.MethodGet, path, "text/html")
		if c := resp.Header.Values("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || len(c) != 1 || !strings.HasPrefix(c[0], "Basic realm=") {
			t.Errorf("GET %s from a browser without credentials: %d %q, want 401 with a Basic challenge", path, resp.StatusCode, c)
		}
	}
	if resp := get(http.MethodGet, "/webui/app.js", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET app.js without credentials: %d", resp.StatusCode)
	}
	if resp := get("PROPFIND", "/webdav/", "text/html"); resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
		t.Errorf("PROPFIND without credentials: %d %q, want oidc_auth's 401", resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
	}
}
