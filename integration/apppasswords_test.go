package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testidp"
	"github.com/davspaces/davspaces/internal/testpeer"
)

// TestAppPasswords is an OpenID Connect user connecting the clients that
// speak only Basic: alice makes an app password with her token over
// oCIS's auth-app API, then the real rclone and cadaver list and write
// with alice:<app password>, and so does a plain request. Revoked, it is
// refused at once by all three. Another comes from Nextcloud's OCS
// getapppassword, which a request signed in with an app password may not
// call, and revokes itself. Wrong app passwords from one address are
// answered 429 within the address's budget. No password reaches the log.
func TestAppPasswords(t *testing.T) {
	rclone := requirePeer(t, "rclone")
	cadaver := requirePeer(t, "cadaver")
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer, davspaces: labSpace})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}

	_, body := alice.expect(http.StatusOK, "POST", "/auth-app/tokens?expiry=1h&label=rclone", "")
	var made struct{ Token string }
	if err := json.Unmarshal([]byte(body), &made); err != nil || made.Token == "" {
		t.Fatalf("POST /auth-app/tokens answered %s", body)
	}
	password := made.Token
	basic := func(pw string) *appPasswordClient {
		return &appPasswordClient{t: t, base: s.URL, user: "alice", password: pw}
	}

	// rclone writes and lists.
	r := newRcloneRemote(t, rclone, s.URL+"/remote.php/webdav/", "alice", password)
	local := filepath.Join(t.TempDir(), "from-rclone.txt")
	writeFile(t, local, "written by rclone")
	r.mustRun(t, "copyto", local, "dav:from-rclone.txt")
	if out := r.mustRunQuiet(t, "lsf", "dav:"); !strings.Contains(out, "from-rclone.txt") {
		t.Fatalf("rclone lsf:\n%s", out)
	}

	// cadaver writes and lists, its credentials in ~/.netrc.
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	netrc := "machine 127.0.0.1\nlogin alice\npassword " + password + "\n"
	if err := os.WriteFile(filepath.Join(home, ".netrc"), []byte(netrc), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(work, "upload.txt"), "written by cadaver")
	cadaverSession(t, cadaver, home, work, s.URL+"/webdav/", []cadaverStep{
		{cmd: "put upload.txt from-cadaver.txt", want: "succeeded."},
		{cmd: "ls", want: "from-cadaver.txt"},
		{cmd: "quit", want: "Connection to `127.0.0.1' closed."},
	})
	if code, got := basic(password).do("GET", "/webdav/from-cadaver.txt"); code != http.StatusOK || got != "written by cadaver" {
		t.Fatalf("GET with the app password: %d %q", code, got)
	}
	// The groups of her last sign-in come with it: admins manage the lab.
	if code, got := basic(password).do("PUT", "/dav/spaces/lab/from-app.txt"); code != http.StatusCreated {
		t.Fatalf("PUT in the lab, which alice's group manages: %d %s", code, got)
	}

	// Revoked through the list's id: refused at once by every client.
	_, body = alice.expect(http.StatusOK, "GET", "/auth-app/tokens", "")
	var list []struct{ Token, Label string }
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list) != 1 || list[0].Label != "rclone" || strings.Contains(body, password) {
		t.Fatalf("GET /auth-app/tokens answered %s", body)
	}
	alice.expect(http.StatusOK, "DELETE", "/auth-app/tokens?token="+list[0].Token, "")
	revoked := time.Now()
	if code, _ := basic(password).do("PROPFIND", "/webdav/"); code != http.StatusUnauthorized {
		t.Fatalf("PROPFIND with the revoked password: %d, want 401", code)
	}
	if out, err := r.run(t, "lsf", "dav:", "--low-level-retries", "1", "--retries", "1"); err == nil {
		t.Fatalf("rclone lsf with the revoked password succeeded:\n%s", out)
	}
	out := cadaverRefused(t, cadaver, home, work, s.URL+"/webdav/")
	if !strings.Contains(out, "401") && !strings.Contains(out, "uthenticat") {
		t.Fatalf("cadaver with the revoked password:\n%s", out)
	}
	t.Logf("cadaver with the revoked password:\n%s", out)
	t.Logf("raw request, rclone and cadaver refused within %s of the revocation", time.Since(revoked).Round(time.Millisecond))

	// Nextcloud's OCS: one password more, which makes none and revokes
	// itself.
	_, body = alice.expect(http.StatusOK, "GET", "/ocs/v2.php/core/getapppassword?format=json", "", "OCS-APIRequest", "true")
	var ocs struct {
		OCS struct{ Data struct{ AppPassword string } }
	}
	if err := json.Unmarshal([]byte(body), &ocs); err != nil || ocs.OCS.Data.AppPassword == "" {
		t.Fatalf("getapppassword answered %s", body)
	}
	nc := basic(ocs.OCS.Data.AppPassword)
	if code, _ := nc.do("PUT", "/webdav/from-ocs.txt"); code != http.StatusCreated {
		t.Fatalf("PUT with the OCS app password: %d", code)
	}
	if code, got := nc.do("GET", "/ocs/v2.php/core/getapppassword?format=json"); code != http.StatusForbidden {
		t.Fatalf("getapppassword with an app password: %d %s", code, got)
	}
	if code, got := nc.do("DELETE", "/ocs/v2.php/core/apppassword?format=json"); code != http.StatusOK {
		t.Fatalf("DELETE apppassword: %d %s", code, got)
	}
	if code, _ := nc.do("PROPFIND", "/webdav/"); code != http.StatusUnauthorized {
		t.Fatalf("PROPFIND after DELETE apppassword: %d, want 401", code)
	}

	// Guesses from this address: refused without a compare once its
	// budget (10 per 5 minutes, the refusals above included) is spent.
	wrong := password[:16] + strings.Repeat("a", len(password)-16)
	limited := false
	for i := range 12 {
		resp := basic(wrong).send("PROPFIND", "/webdav/")
		if resp.StatusCode == http.StatusTooManyRequests {
			if resp.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			t.Logf("429 at the %d. wrong password after the refusals above", i+1)
			limited = true
			break
		}
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a wrong app password: %d", resp.StatusCode)
		}
	}
	if !limited {
		t.Fatal("12 wrong app passwords from one address were all compared")
	}

	logged, err := os.ReadFile(s.log.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{password, ocs.OCS.Data.AppPassword, wrong} {
		if strings.Contains(string(logged), pw) || strings.Contains(string(logged), pw[16:]) {
			t.Fatal("an app password is in the server's log")
		}
	}
}

// appPasswordClient sends requests with Basic user:password.
type appPasswordClient struct {
	t                    *testing.T
	base, user, password string
}

func (c *appPasswordClient) send(method, path string) *http.Response {
	c.t.Helper()
	var body io.Reader
	if method == "PUT" {
		body = strings.NewReader("written with an app password")
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.SetBasicAuth(c.user, c.password)
	req.Header.Set("OCS-APIRequest", "true")
	if method == "PROPFIND" {
		req.Header.Set("Depth", "1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// refusedSince polls PROPFIND /webdav/ until the password, revoked at
// revoked, is refused, and returns how long after that it was. Anything but
// a listing before then, or no refusal within a second and a half (a
// second plus the test's own latency), fails the test.
func (c *appPasswordClient) refusedSince(revoked time.Time) time.Duration {
	c.t.Helper()
	for {
		code, _ := c.do("PROPFIND", "/webdav/")
		if code == http.StatusUnauthorized {
			return time.Since(revoked)
		}
		if code != http.StatusMultiStatus || time.Since(revoked) > 1500*time.Millisecond {
			c.t.Fatalf("%s, %s after the revocation: %d, want 401 within a second", c.base, time.Since(revoked), code)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *appPasswordClient) do(method, path string) (int, string) {
	c.t.Helper()
	resp := c.send(method, path)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// cadaverRefused runs cadaver's ls, which is to be refused, and returns
// what it printed.
func cadaverRefused(t *testing.T, bin, home, dir, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, bin, url)
	cmd.Env = append(os.Environ(), "HOME="+home, "LC_ALL=C.UTF-8", "TERM=dumb")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("ls\nquit\n")
	cmd.WaitDelay = 5 * time.Second
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestAppPasswordsCluster makes an app password on one node of a cluster
// and uses it on both; revoked on the first, it is refused on the other
// within apppass.DefaultRecheck (a second), without a restart.
func TestAppPasswordsCluster(t *testing.T) {
	c := startCluster(t, clusterOptions{})
	einstein := newClient(t, c.nodes[0].URL, "einstein")
	_, body := einstein.expect(http.StatusOK, "POST", "/auth-app/tokens?label=cluster", "")
	var made struct{ Token string }
	if err := json.Unmarshal([]byte(body), &made); err != nil || made.Token == "" {
		t.Fatalf("POST /auth-app/tokens answered %s", body)
	}
	on := func(n *clusterNode) *appPasswordClient {
		return &appPasswordClient{t: t, base: n.URL, user: "einstein", password: made.Token}
	}
	for i, n := range c.nodes {
		if code, _ := on(n).do("PROPFIND", "/webdav/"); code != http.StatusMultiStatus {
			t.Fatalf("node %d: PROPFIND with the app password: %d", i, code)
		}
	}
	einstein.expect(http.StatusOK, "DELETE", "/auth-app/tokens?token="+made.Token, "")
	revoked := time.Now()
	if code, _ := on(c.nodes[0]).do("PROPFIND", "/webdav/"); code != http.StatusUnauthorized {
		t.Fatalf("node 0, where it was revoked: %d, want 401 at once", code)
	}
	t.Logf("node 1 refused the revoked password after %s", on(c.nodes[1]).refusedSince(revoked).Round(time.Millisecond))
}
