// Package testidp runs a real OpenID Connect provider for tests: panva's
// oidc-provider (node/idp.mjs) on 127.0.0.1, with the test users of
// node/users.json (alice, bob, carol; password "<username>-password").
//
// It issues JWT access tokens (RS256, typ at+jwt, aud = IdP.Resource, with
// preferred_username, name, email and groups added as Keycloak does) and
// opaque access tokens that its userinfo endpoint accepts. The userinfo
// endpoint refuses the JWTs: oidc-provider serves userinfo only for tokens
// without an audience. The signing key is made here, so Mint can forge
// tokens the provider's JWKS verifies.
//
// Besides the password grant's test client, it can register a public
// browser client (Options.WebClient) and confidential clients of the
// authorization code flow (Options.Clients), such as the ownCloud desktop,
// Android and iOS apps' fixed clients (OwnCloudClients), with their
// loopback and oc:// redirects, prompt select_account and offline_access.
//
// Node and the npm packages must be installed:
//
//	npm ci --prefix internal/testidp/node
package testidp

import (
	"bufio"
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// InstallCommand installs the provider's npm packages, from the module root.
const InstallCommand = "npm ci --prefix internal/testidp/node"

const (
	defaultTTL   = time.Hour
	readyTimeout = 30 * time.Second
	stopTimeout  = 5 * time.Second
)

// Options configure a provider. The zero value is a provider at
// http://127.0.0.1:<free port> issuing tokens valid for an hour.
type Options struct {
	// TokenTTL is the lifetime of issued access tokens, in whole seconds
	// (at least one). Default: one hour.
	TokenTTL time.Duration
	// IssuerPath is appended to http://127.0.0.1:<port> to form the issuer,
	// e.g. "/realms/test" as Keycloak has it.
	IssuerPath string
	// WebClient, when its ID is set, adds a public client for a browser
	// page: the authorization code flow with PKCE, refresh tokens, CORS for
	// its redirect URIs' origins, a sign-in form for the users of
	// node/users.json, and RP-initiated logout. Its access tokens are JWTs
	// for Resource, like Token's.
	WebClient WebClient
	// Clients are confidential clients of the authorization code flow,
	// such as the ownCloud apps' fixed clients (OwnCloudClients). Their
	// access tokens are JWTs for Resource too; they get refresh tokens
	// when the user grants offline_access.
	Clients []Client
}

// WebClient is a public client of the provider (no secret).
type WebClient struct {
	ID                     string   `json:"id"`
	RedirectURIs           []string `json:"redirect_uris"`
	PostLogoutRedirectURIs []string `json:"post_logout_redirect_uris,omitempty"`
}

// Client is a confidential client of the authorization code flow.
type Client struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	// AuthMethod is how it authenticates at the token endpoint, as
	// registered: client_secret_basic (the default) or client_secret_post.
	// The token endpoint takes either, as Keycloak does.
	AuthMethod   string   `json:"auth_method,omitempty"`
	RedirectURIs []string `json:"redirect_uris"`
	// Native lets it redirect to custom schemes (oc://…) and to a
	// registered loopback URI on any port (RFC 8252 §7.3): the registered
	// http://127.0.0.1 accepts http://127.0.0.1:51234.
	Native bool `json:"native,omitempty"`
}

// The ownCloud clients' fixed registrations, from their sources. The
// secrets are public: they ship in the apps.
const (
	// owncloud/client src/libsync/theme.cpp (oauthClientId,
	// oauthClientSecret); the redirect is http://127.0.0.1:<random port>
	// once discovery succeeded (src/gui/creds/oauth.cpp), else
	// http://localhost:<port>.
	OwnCloudDesktopID     = "xdXOt13JKxym1B1QcEncf2XDkLAexMBFwiT9j6EfhhHFJhs2KM9jbjTmf8JBXE69"
	OwnCloudDesktopSecret = "UBntmLjC2yYCeHwsyj73Uwo9TAaecAetRwMw0xYcvNL9yRdLSUi0hUAHfvCHFeFh"
	// owncloud/android owncloudApp/src/main/res/values/setup.xml
	// (oauth2_client_id, oauth2_client_secret, oauth2_redirect_uri_*).
	OwnCloudAndroidID       = "e4rAsNUSIUs0lF4nbv9FmCeUkTlV9GdgTLDH1b5uie7syb90SzEVrbN7HIpmWJeD"
	OwnCloudAndroidSecret   = "dInFYGV33xKzhbRmpqQltYNdfLdJIfJ9L5ISoKhNoT9qZftpdWSP71VrpGR9pmoD"
	OwnCloudAndroidRedirect = "oc://android.owncloud.com"
	// owncloud/ios-sdk ownCloudSDK/Authentication/OCAuthenticationMethodOAuth2.m
	// (the class settings' defaults).
	OwnCloudIOSID       = "mxd5OQDk6es5LzOzRvidJNfXLUZS2oN3oUFeXPP8LpPrhx3UroJFduGEYIBOxkY1"
	OwnCloudIOSSecret   = "KFeFWWEZO9TkisIQzR3fo7hfiMXlOpaqP8CFuTbSHzV1TUuGECglPxpiVKJfOXIx"
	OwnCloudIOSRedirect = "oc://ios.owncloud.com"
	// OwnCloudScope and OwnCloudPrompt are what all three ask for.
	OwnCloudScope  = "openid offline_access email profile"
	OwnCloudPrompt = "select_account consent"
)

// OwnCloudClients are the ownCloud desktop, Android and iOS fixed clients,
// registered as oCIS's Keycloak example registers them, with the token
// endpoint authentication each uses where both are offered: the desktop
// and iOS send Basic, Android the form.
func OwnCloudClients() []Client {
	return []Client{
		{ID: OwnCloudDesktopID, Secret: OwnCloudDesktopSecret, RedirectURIs: []string{"http://127.0.0.1", "http://localhost"}, Native: true},
		{ID: OwnCloudAndroidID, Secret: OwnCloudAndroidSecret, AuthMethod: "client_secret_post", RedirectURIs: []string{OwnCloudAndroidRedirect}, Native: true},
		{ID: OwnCloudIOSID, Secret: OwnCloudIOSSecret, RedirectURIs: []string{OwnCloudIOSRedirect}, Native: true},
	}
}

// IdP is a running provider.
type IdP struct {
	// Issuer is the issuer URL; discovery is at
	// Issuer + "/.well-known/openid-configuration".
	Issuer string
	// Resource is the resource indicator that Token asks for: the aud of
	// the JWT access tokens.
	Resource string
	// ClientID and ClientSecret are the client that gets the tokens
	// (client_secret_basic, password grant only).
	ClientID     string
	ClientSecret string

	scope  string
	ttl    time.Duration
	key    *jose.JSONWebKey
	users  map[string]user
	client *http.Client

	cmd      *exec.Cmd
	stdin    io.WriteCloser // held open, never written: see start
	stderr   *syncBuffer
	exited   chan struct{}
	stopOnce sync.Once
}

// user is one entry of node/users.json.
type user struct {
	Username string   `json:"username"`
	Sub      string   `json:"sub"`
	Name     string   `json:"name"`
	Email    string   `json:"email,omitempty"`
	Groups   []string `json:"groups,omitempty"`
}

// readyLine is what idp.mjs prints on stdout once it accepts requests.
type readyLine struct {
	Issuer       string `json:"issuer"`
	Resource     string `json:"resource"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	Scope        string `json:"scope"`
}

// Start runs the provider for the test and stops it in t.Cleanup. Node and
// the npm packages (internal/testidp/node/node_modules) must be present:
// when CI=true a missing one fails the test, otherwise the test is skipped
// with a message naming the install command.
func Start(t testing.TB, opts Options) *IdP {
	t.Helper()
	dir := nodeDir()
	requireNode(t, dir)
	users, err := loadUsers(filepath.Join(dir, "users.json"))
	if err != nil {
		t.Fatalf("testidp: %v", err)
	}
	key, err := newSigningKey()
	if err != nil {
		t.Fatalf("testidp: %v", err)
	}
	jwksFile := filepath.Join(t.TempDir(), "jwks.json")
	if err := writeJWKS(jwksFile, key); err != nil {
		t.Fatalf("testidp: %v", err)
	}
	ttl := opts.TokenTTL
	if ttl <= 0 {
		ttl = defaultTTL
	}
	ttl = max(ttl.Round(time.Second), time.Second)

	p := &IdP{
		ttl:    ttl,
		key:    key,
		users:  users,
		stderr: &syncBuffer{},
		exited: make(chan struct{}),
		// No keep-alive: a reused connection that the provider is closing
		// would fail a POST that Go does not retry.
		client: &http.Client{
			Timeout:   10 * time.Second,
			Transport: &http.Transport{DisableKeepAlives: true},
		},
	}
	if opts.IssuerPath != "" && !strings.HasPrefix(opts.IssuerPath, "/") {
		opts.IssuerPath = "/" + opts.IssuerPath
	}
	env := []string{
		"IDP_PORT=0",
		"IDP_JWKS_FILE=" + jwksFile,
		"IDP_ISSUER=", // the default, built on the port and IssuerPath
		"IDP_ISSUER_PATH=" + opts.IssuerPath,
		"IDP_ACCESS_TOKEN_TTL=" + strconv.Itoa(int(ttl/time.Second)),
		"IDP_EXIT_WITH_STDIN=1",
	}
	if opts.WebClient.ID != "" {
		client, err := json.Marshal(opts.WebClient)
		if err != nil {
			t.Fatalf("testidp: %v", err)
		}
		env = append(env, "IDP_WEB_CLIENT="+string(client))
	}
	if len(opts.Clients) > 0 {
		clients, err := json.Marshal(opts.Clients)
		if err != nil {
			t.Fatalf("testidp: %v", err)
		}
		env = append(env, "IDP_CLIENTS="+string(clients))
	}
	if err := p.start(dir, env); err != nil {
		t.Fatalf("testidp: %v\nprovider stderr:\n%s", err, p.stderr)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() && p.stderr.Len() > 0 {
			t.Logf("testidp provider stderr:\n%s", p.stderr)
		}
	})
	return p
}

// nodeDir is the folder of idp.mjs, found from this source file so that
// tests of any package, run from any directory, find it.
func nodeDir() string {
	_, file, _, _ := runtime.Caller(0)
	if filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(file), "node")
	}
	// Built with -trimpath: file is module-relative. Tests run in their
	// package's folder, inside the module, so look for its go.mod above.
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "internal", "testidp", "node")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "node" // not found: requireNode reports it
		}
		dir = parent
	}
}

// requireNode skips the test, or fails it in CI, when node or the npm
// packages are missing.
func requireNode(t testing.TB, dir string) {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "oidc-provider", "package.json")); err != nil {
		missing = "the npm packages of " + dir + " are not installed; run: " + InstallCommand
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("testidp: %s", missing)
	}
	t.Skipf("testidp: %s", missing)
}

// start runs node and waits for the ready line.
func (p *IdP) start(dir string, env []string) error {
	cmd := exec.Command("node", filepath.Join(dir, "idp.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = p.stderr
	// The pipe ends when this process does, and with it the provider
	// (IDP_EXIT_WITH_STDIN), even when a test panics or times out.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("stdin pipe: %w", err)
	}
	p.stdin = stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("stdout pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start node: %w", err)
	}
	p.cmd = cmd

	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		lines <- line
		_, _ = io.Copy(p.stderr, r) // anything later is unexpected: keep it for failure messages
		_ = cmd.Wait()
		close(p.exited)
	}()

	select {
	case line := <-lines:
		if err := p.ready(line); err != nil {
			p.Stop()
			return err
		}
		return nil
	case <-time.After(readyTimeout):
		p.Stop()
		return fmt.Errorf("provider not ready after %s", readyTimeout)
	}
}

// ready takes the provider's details from its ready line.
func (p *IdP) ready(line string) error {
	if line == "" {
		<-p.exited // so that stderr is complete
		return fmt.Errorf("provider exited before it was ready (%v)", p.cmd.ProcessState)
	}
	var r readyLine
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.Issuer == "" {
		return fmt.Errorf("bad ready line %q: %v", line, err)
	}
	p.Issuer, p.Resource, p.ClientID, p.ClientSecret, p.scope = r.Issuer, r.Resource, r.ClientID, r.ClientSecret, r.Scope
	return nil
}

// Stop stops the provider now; its port refuses connections once Stop
// returns. It is safe to call more than once.
func (p *IdP) Stop() {
	p.stopOnce.Do(func() {
		if p.cmd == nil || p.cmd.Process == nil {
			return
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			_ = p.cmd.Process.Kill() // no SIGTERM on this system, or already gone
		}
		select {
		case <-p.exited:
		case <-time.After(stopTimeout):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

// Token returns a JWT access token for user, from the password grant with
// resource = p.Resource.
func (p *IdP) Token(t testing.TB, user string) string {
	t.Helper()
	return p.passwordGrant(t, user, p.Resource)
}

// OpaqueToken returns an opaque access token for user, from the password
// grant without a resource; the userinfo endpoint accepts it.
func (p *IdP) OpaqueToken(t testing.TB, user string) string {
	t.Helper()
	return p.passwordGrant(t, user, "")
}

func (p *IdP) passwordGrant(t testing.TB, user, resource string) string {
	t.Helper()
	form := url.Values{
		"grant_type": {"password"},
		"username":   {user},
		"password":   {user + "-password"},
		"scope":      {p.scope},
	}
	if resource != "" {
		form.Set("resource", resource)
	}
	req, err := http.NewRequest(http.MethodPost, p.Issuer+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatalf("testidp: token request: %v", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(p.ClientID, p.ClientSecret)
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := p.do(req, &body); err != nil {
		t.Fatalf("testidp: token for %q: %v", user, err)
	}
	return body.AccessToken
}

// UserinfoCalls returns how many requests reached the userinfo endpoint
// since the provider started.
func (p *IdP) UserinfoCalls(t testing.TB) int {
	t.Helper()
	return p.calls(t).Userinfo
}

// Introspections returns how many requests reached the introspection
// endpoint since the provider started.
func (p *IdP) Introspections(t testing.TB) int {
	t.Helper()
	return p.calls(t).Introspections
}

// Refreshes returns how many refresh_token grants the provider answered
// with new tokens since it started.
func (p *IdP) Refreshes(t testing.TB) int {
	t.Helper()
	return p.calls(t).Refreshes
}

type callCounts struct {
	Userinfo       int `json:"calls"`
	Introspections int `json:"introspections"`
	Refreshes      int `json:"refreshes"`
}

func (p *IdP) calls(t testing.TB) callCounts {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.Issuer+"/test/userinfo-calls", nil)
	if err != nil {
		t.Fatalf("testidp: userinfo-calls request: %v", err)
	}
	var body callCounts
	if err := p.do(req, &body); err != nil {
		t.Fatalf("testidp: call counts: %v", err)
	}
	return body
}

// do sends req and decodes a 200 JSON answer into v.
func (p *IdP) do(req *http.Request, v any) error {
	res, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("read %s: %w", req.URL, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", req.Method, req.URL, res.Status, data)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", req.URL, err)
	}
	return nil
}

// Claims returns the claims a JWT access token from Token(user) carries,
// issued now (jti aside), for tests to change and pass to Mint. Claims
// the user lacks are absent: carol has neither email nor groups. It panics
// for an unknown user.
func (p *IdP) Claims(name string) map[string]any {
	u, ok := p.users[name]
	if !ok {
		panic(fmt.Sprintf("testidp: unknown user %q", name))
	}
	now := time.Now().Unix()
	claims := map[string]any{
		"iss":                p.Issuer,
		"aud":                p.Resource,
		"sub":                u.Sub,
		"iat":                now,
		"exp":                now + int64(p.ttl/time.Second),
		"client_id":          p.ClientID,
		"scope":              p.scope,
		"preferred_username": u.Username,
		"name":               u.Name,
	}
	if u.Email != "" {
		claims["email"] = u.Email
	}
	if len(u.Groups) > 0 {
		claims["groups"] = append([]string(nil), u.Groups...)
	}
	return claims
}

// Mint signs claims with the provider's key and kid, as an RS256 JWT with
// header typ at+jwt: a token the provider's JWKS verifies, whatever the
// claims say (expired, another issuer, a claim missing).
func (p *IdP) Mint(t testing.TB, claims map[string]any) string {
	t.Helper()
	return Sign(t, jose.RS256, p.key, "", claims)
}

// Forge signs claims with a fresh key under the provider's kid: a token
// whose header looks right and whose signature is not the provider's.
func (p *IdP) Forge(t testing.TB, claims map[string]any) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("testidp: forge: %v", err)
	}
	return Sign(t, jose.RS256, key, p.key.KeyID, claims)
}

// Sign makes a compact JWS (typ at+jwt) of claims with key; kid, when not
// empty, goes into the header (a *jose.JSONWebKey brings its own).
func Sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatalf("testidp: sign: %v", err)
	}
	opts := (&jose.SignerOptions{}).WithType("at+jwt")
	if kid != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatalf("testidp: sign: %v", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatalf("testidp: sign: %v", err)
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		t.Fatalf("testidp: sign: %v", err)
	}
	return token
}

// Unsigned makes an "alg": "none" token of claims, which no verifier may
// accept.
func Unsigned(claims map[string]any) string {
	payload, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"none","typ":"at+jwt"}`)) + "." + enc.EncodeToString(payload) + "."
}

// SigningKey returns the provider's private signing key (RS256, with kid).
func (p *IdP) SigningKey() *jose.JSONWebKey {
	return p.key
}

// newSigningKey makes an RSA key whose kid is its thumbprint.
func newSigningKey() (*jose.JSONWebKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate RSA key: %w", err)
	}
	key := &jose.JSONWebKey{Key: priv, Algorithm: string(jose.RS256), Use: "sig"}
	thumb, err := key.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("key thumbprint: %w", err)
	}
	key.KeyID = base64.RawURLEncoding.EncodeToString(thumb)[:16]
	return key, nil
}

// writeJWKS writes the private key for the provider to sign with.
func writeJWKS(path string, key *jose.JSONWebKey) error {
	data, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{*key}})
	if err != nil {
		return fmt.Errorf("encode JWKS: %w", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write JWKS: %w", err)
	}
	return nil
}

func loadUsers(path string) (map[string]user, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read test users: %w", err)
	}
	var list []user
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	users := make(map[string]user, len(list))
	for _, u := range list {
		users[u.Username] = u
	}
	return users, nil
}

// syncBuffer collects the provider's stderr, which exec writes from its own
// goroutine while a test may read it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
