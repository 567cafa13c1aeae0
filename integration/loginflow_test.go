package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testidp"
	"github.com/davspaces/davspaces/internal/testpeer"
)

// The Login Flow v2 tests replay what Nextcloud's desktop client does,
// read from nextcloud/desktop: src/libsync/networkjobs.cpp
// (DetermineAuthTypeJob: status.php's version and an anonymous GET of the
// server decide the sign-in) and src/gui/creds/flow2auth.cpp (the
// anonymous POST of /index.php/login/v2 with Content-Length: 0 and its
// User-Agent, the browser opened at the login URL, a form POST of
// token=… to the poll endpoint every interval, 404 meaning "not yet").

// flowAgent is the User-Agent of the desktop client's start
// (Utility::friendlyUserAgentString), which names the app password.
const flowAgent = "loginflow-test (Desktop Client - Linux)"

// nextcloudAgent is the User-Agent of its other requests
// (Utility::userAgentString).
const nextcloudAgent = "Mozilla/5.0 (Linux) mirall/3.7.3git (Nextcloud, debian-6.1.0 ClientArchitecture: x86_64 OsArchitecture: x86_64)"

// loginFlowOptions are the options of testdata/webui/loginflow.mjs.
type loginFlowOptions struct {
	browserSession
	Login       string `json:"login"`
	CancelLogin string `json:"cancelLogin"`
	Unknown     string `json:"unknown"`
	Client      string `json:"client"`
	// Basic signs in with the browser's Basic prompt, not the provider.
	Basic bool `json:"basic"`
	// Revoke, when set, only revokes the app password of this label in
	// the page's Devices and app passwords view.
	Revoke string `json:"revoke,omitempty"`
}

// revokedAt is when the page's revocation was answered, as loginflow.mjs
// reports it.
func revokedAt(t *testing.T, events []map[string]any) time.Time {
	t.Helper()
	for _, ev := range events {
		if at, ok := ev["at"].(float64); ok && ev["event"] == "revoked" {
			return time.UnixMilli(int64(at))
		}
	}
	t.Fatalf("loginflow.mjs reported no revocation: %v", events)
	return time.Time{}
}

// flowStart is the answer to a start.
type flowStart struct {
	Poll struct {
		Token    string `json:"token"`
		Endpoint string `json:"endpoint"`
	} `json:"poll"`
	Login string `json:"login"`
}

// flowGrant is a granted flow's poll answer.
type flowGrant struct {
	Server      string `json:"server"`
	LoginName   string `json:"loginName"`
	AppPassword string `json:"appPassword"`
}

// startFlow starts a flow on base as the desktop client does.
func startFlow(t *testing.T, base string) flowStart {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/index.php/login/v2", nil)
	req.Header.Set("User-Agent", flowAgent)
	req.ContentLength = 0
	resp, body := doRaw(t, req)
	var s flowStart
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &s) != nil || s.Poll.Token == "" || s.Login == "" {
		t.Fatalf("POST /index.php/login/v2: %d %s", resp.StatusCode, body)
	}
	return s
}

// pollFlow polls endpoint (on base, whatever host the answer named) as
// the desktop client does.
func pollFlow(t *testing.T, base string, s flowStart) (int, flowGrant) {
	t.Helper()
	u, err := url.Parse(s.Poll.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, base+u.Path, strings.NewReader(url.Values{"token": {s.Poll.Token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", nextcloudAgent)
	resp, body := doRaw(t, req)
	var g flowGrant
	if resp.StatusCode == http.StatusOK && json.Unmarshal(body, &g) != nil {
		t.Fatalf("poll answered %s", body)
	}
	if resp.StatusCode == http.StatusNotFound && strings.TrimSpace(string(body)) != "[]" {
		t.Fatalf("poll answered 404 with %s, want []", body)
	}
	return resp.StatusCode, g
}

// onBase is the login URL of s on base (a node of a cluster).
func (s flowStart) onBase(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(s.Login)
	if err != nil {
		t.Fatal(err)
	}
	return base + u.Path
}

func doRaw(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// TestLoginFlow signs the Nextcloud desktop client in where people sign
// in with OpenID Connect, end to end: status.php gives it version 16 and
// the server's root no challenge, so it picks Login Flow v2; it starts a
// flow, chromium opens the login URL, signs alice in at the test provider
// and grants; the poll hands the app password out once. Then the real
// nextcloudcmd syncs a folder with it, and rclone and cadaver list and
// write with it. Revoked in the page's Devices and app passwords view, it
// is refused at once by all three. On the way:
// a grant without sign-in is refused, a cancelled flow polls 404, an
// unknown link says so; no password or token is in the server's DEBUG log
// or its /metrics.
func TestLoginFlow(t *testing.T) {
	chromium, dir := requireBrowser(t)
	nextcloudcmd := requirePeer(t, "nextcloudcmd")
	rclone := requirePeer(t, "rclone")
	cadaver := requirePeer(t, "cadaver")
	t.Parallel()
	port, adminAddr := freePort(t), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	idp := testidp.Start(t, testidp.Options{WebClient: testidp.WebClient{
		ID: webClientID, RedirectURIs: []string{base + "/"}, PostLogoutRedirectURIs: []string{base + "/"},
	}})
	s := startLoginFlowServer(t, port, adminAddr, idp.Issuer)
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	anonymous := &client{t: t, base: s.URL, http: http.DefaultClient}

	// What makes the client choose the flow (DetermineAuthTypeJob).
	_, status := anonymous.expect(http.StatusOK, http.MethodGet, "/status.php", "", "User-Agent", nextcloudAgent)
	if !strings.Contains(status, `"version":"20.0.0.0"`) {
		t.Fatalf("status.php for the Nextcloud client: %s", status)
	}
	if resp, _ := anonymous.do(http.MethodGet, "/", "", "User-Agent", nextcloudAgent); resp.StatusCode == http.StatusUnauthorized {
		t.Fatalf("the Nextcloud client's GET of / was challenged (%q): it would ask for a password", resp.Header.Values("WWW-Authenticate"))
	}
	_, status = anonymous.expect(http.StatusOK, http.MethodGet, "/status.php", "", "User-Agent", "Mozilla/5.0 (Linux) mirall/5.3.2 (ownCloud, debian)")
	if !strings.Contains(status, `"version":"10.11.0.0"`) {
		t.Fatalf("status.php for the ownCloud client: %s", status)
	}

	flow, cancelled := startFlow(t, s.URL), startFlow(t, s.URL)
	if code, _ := pollFlow(t, s.URL, flow); code != http.StatusNotFound {
		t.Fatalf("poll before the grant: %d", code)
	}
	loginToken := strings.TrimPrefix(flow.onBase(t, ""), "/index.php/login/v2/flow/")
	grantForm := url.Values{"token": {loginToken}}.Encode()
	if resp, body := anonymous.do(http.MethodPost, "/index.php/login/v2/grant", grantForm, "Content-Type", "application/x-www-form-urlencoded"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a grant without sign-in: %d %s", resp.StatusCode, body)
	}

	opts := loginFlowOptions{
		browserSession: newBrowserSession(t, chromium, s.URL, "alice", "alice-password"),
		Login:          flow.Login,
		CancelLogin:    cancelled.Login,
		Unknown:        s.URL + "/index.php/login/v2/flow/" + strings.Repeat("a", len(loginToken)),
		Client:         flowAgent,
	}
	for _, ev := range runDrive(t, dir, "loginflow.mjs", opts) {
		t.Logf("%v", ev)
	}

	code, grant := pollFlow(t, s.URL, flow)
	if code != http.StatusOK || grant.Server != s.URL || grant.LoginName != "alice" || grant.AppPassword == "" {
		t.Fatalf("poll after the grant: %d %+v", code, grant)
	}
	if code, _ := pollFlow(t, s.URL, flow); code != http.StatusNotFound {
		t.Fatalf("a second poll: %d", code)
	}
	if code, _ := pollFlow(t, s.URL, cancelled); code != http.StatusNotFound {
		t.Fatalf("a poll of the cancelled flow: %d", code)
	}
	_, list := alice.expect(http.StatusOK, http.MethodGet, "/auth-app/tokens", "")
	if !strings.Contains(list, `"label":"`+flowAgent+`"`) {
		t.Fatalf("alice's app passwords: %s", list)
	}
	password := grant.AppPassword

	// nextcloudcmd syncs a folder with it, as the client does from now on.
	alice.expect(http.StatusCreated, "MKCOL", "/webdav/Synced/", "")
	alice.expect(http.StatusCreated, http.MethodPut, "/webdav/Synced/from-server.txt", "from the server")
	local := t.TempDir()
	writeFile(t, filepath.Join(local, "from-nextcloudcmd.txt"), "written by nextcloudcmd")
	out, err := nextcloudcmdSync(t, nextcloudcmd, s.URL, "alice", password, "Synced", local)
	if err != nil {
		t.Fatalf("nextcloudcmd with the app password: %v\n%s", err, tail(out, 3000))
	}
	if !strings.Contains(out, `"version":"20.0.0.0"`) {
		t.Errorf("nextcloudcmd did not see version 16 in status.php:\n%s", tail(out, 3000))
	}
	if got, err := os.ReadFile(filepath.Join(local, "from-server.txt")); err != nil || string(got) != "from the server" {
		t.Fatalf("nextcloudcmd's download: %q, %v", got, err)
	}
	if _, got := alice.expect(http.StatusOK, http.MethodGet, "/webdav/Synced/from-nextcloudcmd.txt", ""); got != "written by nextcloudcmd" {
		t.Fatalf("nextcloudcmd's upload: %q", got)
	}

	// rclone and cadaver list and write with it.
	r := newRcloneRemote(t, rclone, s.URL+"/remote.php/webdav/", "alice", password)
	writeFile(t, filepath.Join(local, "rclone.txt"), "written by rclone")
	r.mustRun(t, "copyto", filepath.Join(local, "rclone.txt"), "dav:Synced/from-rclone.txt")
	if out := r.mustRunQuiet(t, "lsf", "dav:Synced"); !strings.Contains(out, "from-rclone.txt") || !strings.Contains(out, "from-nextcloudcmd.txt") {
		t.Fatalf("rclone lsf:\n%s", out)
	}
	home, work := filepath.Join(t.TempDir(), "home"), t.TempDir()
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".netrc"), []byte("machine 127.0.0.1\nlogin alice\npassword "+password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "upload.txt"), "written by cadaver")
	cadaverSession(t, cadaver, home, work, s.URL+"/webdav/Synced/", []cadaverStep{
		{cmd: "put upload.txt from-cadaver.txt", want: "succeeded."},
		{cmd: "ls", want: "from-cadaver.txt"},
		{cmd: "quit", want: "Connection to `127.0.0.1' closed."},
	})

	// alice revokes it in the page's Devices and app passwords view.
	opts.Revoke = flowAgent
	revoked := revokedAt(t, runDrive(t, dir, "loginflow.mjs", opts))
	basic := &appPasswordClient{t: t, base: s.URL, user: "alice", password: password}
	if code, _ := basic.do("PROPFIND", "/webdav/"); code != http.StatusUnauthorized {
		t.Fatalf("PROPFIND with the revoked password: %d, want 401", code)
	}
	rawRefused := time.Since(revoked)
	// The three clients at once, each refused at its first request; each
	// says how long it ran, most of which is its own start.
	var (
		refusals sync.WaitGroup
		mu       sync.Mutex
		took     = map[string]time.Duration{}
	)
	timed := func(name string, run func()) func() {
		return func() {
			start := time.Now()
			run()
			mu.Lock()
			defer mu.Unlock()
			took[name] = time.Since(start).Round(time.Millisecond)
		}
	}
	refusals.Go(timed("nextcloudcmd", func() {
		if out, err := nextcloudcmdSync(t, nextcloudcmd, s.URL, "alice", password, "Synced", local); err == nil {
			t.Errorf("nextcloudcmd with the revoked password succeeded:\n%s", tail(out, 3000))
		} else if !strings.Contains(out, "401") && !strings.Contains(strings.ToLower(out), "authenticat") {
			t.Errorf("nextcloudcmd with the revoked password failed otherwise:\n%s", tail(out, 3000))
		}
	}))
	refusals.Go(timed("rclone", func() {
		if out, err := r.run(t, "lsf", "dav:", "--low-level-retries", "1", "--retries", "1"); err == nil || !strings.Contains(out, "401") {
			t.Errorf("rclone lsf with the revoked password: %v\n%s", err, out)
		}
	}))
	refusals.Go(timed("cadaver", func() {
		if out := cadaverRefused(t, cadaver, home, work, s.URL+"/webdav/"); !strings.Contains(out, "401") && !strings.Contains(out, "uthenticat") {
			t.Errorf("cadaver with the revoked password:\n%s", out)
		}
	}))
	refusals.Wait()
	t.Logf("a request with the revoked password refused %s after the page's revocation; nextcloudcmd, rclone and cadaver, started together, all refused by %s (each ran %v)",
		rawRefused.Round(time.Millisecond), time.Since(revoked).Round(time.Millisecond), took)

	// This address has started 2 flows; at 10 within their lifetime the
	// next waits.
	for i := 3; ; i++ {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/index.php/login/v2", nil)
		resp, body := doRaw(t, req)
		if resp.StatusCode == http.StatusTooManyRequests {
			if i != 11 || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("start %d answered 429 (Retry-After %q), want the 11th", i, resp.Header.Get("Retry-After"))
			}
			break
		}
		if resp.StatusCode != http.StatusOK || i > 11 {
			t.Fatalf("start %d: %d %s", i, resp.StatusCode, body)
		}
	}

	// Neither the password nor a token is in the log or the metrics.
	metrics := scrapeText(t, "http://"+adminAddr+"/metrics")
	logged, err := os.ReadFile(s.log.Name())
	if err != nil {
		t.Fatal(err)
	}
	for name, secret := range map[string]string{
		"the app password": password, "its secret": password[16:],
		"the poll token": flow.Poll.Token, "the login token": loginToken, "the other poll token": cancelled.Poll.Token,
	} {
		if strings.Contains(string(logged), secret) {
			t.Errorf("%s is in the server's log", name)
		}
		if strings.Contains(metrics, secret) {
			t.Errorf("%s is in the metrics", name)
		}
	}
}

// startLoginFlowServer is startServer for OpenID Connect with the page's
// client, plus the admin endpoint on adminAddr with Caddy's metrics and a
// DEBUG log, which the test reads for secrets.
func startLoginFlowServer(t *testing.T, port int, adminAddr, issuer string) *server {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "data")
	cfg := exampleCaddyfile(t, port, root, serverOptions{admin: adminAddr})
	global := "\tadmin " + adminAddr + "\n"
	if !strings.Contains(cfg, global) {
		t.Fatalf("no admin line in the test's Caddyfile")
	}
	cfg = strings.Replace(cfg, global, global+"\tmetrics\n\tlog {\n\t\tlevel DEBUG\n\t\toutput stderr\n\t\tformat json\n\t}\n", 1)
	s := caddyRun{dir: dir, config: cfg, url: fmt.Sprintf("http://127.0.0.1:%d", port),
		env: []string{"OIDC_ISSUER=" + issuer, "OIDC_WEB_CLIENT_ID=" + webClientID}}.start(t)
	s.Root = root
	return s
}

// scrapeText is the text of a metrics page.
func scrapeText(t *testing.T, url string) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("scraping %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scraping %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// nextcloudcmdSync runs one sync of local with folder of user's personal
// space, as the desktop client syncs once signed in: Basic with the user
// and the app password the poll gave.
func nextcloudcmdSync(t *testing.T, bin, serverURL, user, password, folder, local string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), desktopSyncTimeout)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, bin, "--non-interactive", "--max-sync-retries", "1", "--logdebug",
		"--user", user, "--password", password, "--path", "/"+folder, local, serverURL+"/")
	home := t.TempDir()
	cmd.Env = (&desktopSession{home: home}).environment()
	cmd.Dir = home
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestLoginFlowCluster: each step of the flow on another node of the
// cluster, signed in with the browser's Basic prompt: the client starts
// on node 0, the browser grants on node 1, the poll takes the password on
// node 0 and rclone uses it through the load balancer. Revoked in the
// page on node 1, it is refused on node 0 within a second.
func TestLoginFlowCluster(t *testing.T) {
	chromium, dir := requireBrowser(t)
	rclone := requirePeer(t, "rclone")
	t.Parallel()
	c := startCluster(t, clusterOptions{})
	first, second := c.nodes[0].URL, c.nodes[1].URL
	flow, cancelled := startFlow(t, first), startFlow(t, first)
	opts := loginFlowOptions{
		browserSession: newBrowserSession(t, chromium, second, "einstein", users["einstein"]),
		Login:          flow.onBase(t, second),
		CancelLogin:    cancelled.onBase(t, second),
		Unknown:        second + "/index.php/login/v2/flow/" + strings.Repeat("a", len(strings.TrimPrefix(flow.onBase(t, ""), "/index.php/login/v2/flow/"))),
		Client:         flowAgent,
		Basic:          true,
	}
	for _, ev := range runDrive(t, dir, "loginflow.mjs", opts) {
		t.Logf("%v", ev)
	}
	code, grant := pollFlow(t, first, flow)
	if code != http.StatusOK || grant.LoginName != "einstein" || grant.AppPassword == "" {
		t.Fatalf("poll on node 0 after the grant on node 1: %d %+v", code, grant)
	}
	if code, _ := pollFlow(t, second, flow); code != http.StatusNotFound {
		t.Fatalf("a second poll, on node 1: %d", code)
	}
	if code, _ := pollFlow(t, first, cancelled); code != http.StatusNotFound {
		t.Fatalf("a poll of the flow cancelled on node 1: %d", code)
	}

	r := newRcloneRemote(t, rclone, c.lb.URL+"/remote.php/webdav/", "einstein", grant.AppPassword)
	local := filepath.Join(t.TempDir(), "cluster.txt")
	writeFile(t, local, "written through the load balancer")
	r.mustRun(t, "copyto", local, "dav:from-login-flow.txt")
	if out := r.mustRunQuiet(t, "lsf", "dav:"); !strings.Contains(out, "from-login-flow.txt") {
		t.Fatalf("rclone lsf:\n%s", out)
	}

	// einstein revokes it in the page's Devices and app passwords view on
	// node 1.
	on := func(base string) *appPasswordClient {
		return &appPasswordClient{t: t, base: base, user: "einstein", password: grant.AppPassword}
	}
	opts.Revoke = flowAgent
	revoked := revokedAt(t, runDrive(t, dir, "loginflow.mjs", opts))
	t.Logf("node 0 refused the password revoked on node 1 after %s", on(first).refusedSince(revoked).Round(time.Millisecond))
	if out, err := r.run(t, "lsf", "dav:", "--low-level-retries", "1", "--retries", "1"); err == nil || !strings.Contains(out, "401") {
		t.Fatalf("rclone lsf with the revoked password: %v\n%s", err, out)
	}
}
