package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testidp"
	"github.com/davspaces/davspaces/internal/testpeer"
)

// devicesOptions are the options of testdata/webui/devices.mjs.
type devicesOptions struct {
	browserSession
	// Basic signs in with the browser's Basic prompt, not at a provider.
	Basic bool `json:"basic"`
	// Label names the password that rclone and cadaver use.
	Label string `json:"label"`
	// Screenshots makes the full run: a scoped password (ScopedLabel,
	// in Space's Folder, read-only), the cap's refusal and a screenshot
	// of each state.
	Screenshots bool   `json:"screenshots"`
	ScopedLabel string `json:"scopedLabel"`
	Space       string `json:"space"`
	Folder      string `json:"folder"`
}

// shownPassword is the "created" event: what the page showed once.
type shownPassword struct {
	Password, User, Rclone, DavURL, Secrets, URL string
}

// TestWebUIDevices is the browser page's "Devices and app passwords"
// view, signed in at the test provider: its empty state, a password
// named "rclone on laptop" made in the page and read from it once; the
// real rclone, configured with the page's own rclone line, and cadaver
// list and write with it; a second password narrowed to a folder of the
// lab, read-only; the first revoked in the page, after which rclone,
// cadaver and a plain request are refused within a second of the page's
// DELETE being answered; and the cap's 507 shown in words. It writes
// screenshots of every state at desktop and phone width.
func TestWebUIDevices(t *testing.T) {
	t.Parallel()
	chromium, dir := requireBrowser(t)
	rclone := requirePeer(t, "rclone")
	cadaver := requirePeer(t, "cadaver")
	port := freePort(t)
	origin := fmt.Sprintf("http://127.0.0.1:%d", port)
	idp := testidp.Start(t, testidp.Options{WebClient: testidp.WebClient{
		ID: webClientID, RedirectURIs: []string{origin + "/"}, PostLogoutRedirectURIs: []string{origin + "/"},
	}})
	s := startServer(t, serverOptions{issuer: idp.Issuer, port: port, davspaces: labSpace, env: []string{"OIDC_WEB_CLIENT_ID=" + webClientID}})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	alice.expect(http.StatusCreated, "MKCOL", "/dav/spaces/lab/raw/", "")

	opts := devicesOptions{
		browserSession: newBrowserSession(t, chromium, s.URL, "alice", "alice-password"),
		Label:          "rclone on laptop",
		Screenshots:    true,
		ScopedLabel:    "Backup of the lab's raw data",
		Space:          "lab",
		Folder:         "raw",
	}
	script := startBrowserScript(t, dir, "devices.mjs", opts)
	made := script.created()
	if want := s.URL + "/remote.php/webdav/"; made.User != "alice" || made.DavURL != want {
		t.Errorf("the page shows user %q and address %q, want alice and %s", made.User, made.DavURL, want)
	}
	if want := made.DavURL + " alice " + made.Password; made.Secrets != want {
		t.Errorf("the davfs2 secrets line is %q, want %q", made.Secrets, want)
	}
	clients := useShownPassword(t, rclone, cadaver, s.URL, made)
	script.goOn()

	scoped := script.next("scoped")
	query := queryOf(t, scoped["url"])
	if query.Get("space") != "lab" || query.Get("path") != "/raw" || query.Get("readonly") != "true" || query.Get("expiry") != "720h" {
		t.Errorf("the page asked for the scoped password with %s", query.Encode())
	}
	if u := fmt.Sprint(scoped["davURL"]); !strings.HasPrefix(u, s.URL+"/dav/spaces/") || !strings.HasSuffix(u, "$lab/raw/") {
		t.Errorf("the scoped password's address is %s, want the lab's raw folder", u)
	}
	t.Logf("the scoped password's row says %q", scoped["scope"])
	if listed := listAppPasswords(t, alice); listed[opts.ScopedLabel].ReadOnly && !strings.Contains(fmt.Sprint(scoped["scope"]), "read-only") {
		t.Errorf("the server lists %q read-only, the page says %q", opts.ScopedLabel, scoped["scope"])
	}

	clients.refusedWithin(t, script.revoked(), s.URL, time.Second)
	// Up to the cap of 100 (the scoped one is left), for the page's
	// next one to be refused.
	fillAppPasswords(t, alice, 99)
	script.goOn()
	refused := script.next("refused")
	if status, _ := refused["status"].(float64); status != http.StatusInsufficientStorage || !strings.Contains(fmt.Sprint(refused["problem"]), "100") {
		t.Errorf("the 101st password: %v %q, want 507 and the cap in words", refused["status"], refused["problem"])
	}
	script.finish()
}

// TestWebUIDevicesCluster revokes in the page on one node of a cluster an
// app password that rclone, cadaver and a plain request use on the other:
// all three are refused there within a second.
func TestWebUIDevicesCluster(t *testing.T) {
	t.Parallel()
	chromium, dir := requireBrowser(t)
	rclone := requirePeer(t, "rclone")
	cadaver := requirePeer(t, "cadaver")
	ports := []int{freePort(t), freePort(t)}
	page := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	idp := testidp.Start(t, testidp.Options{WebClient: testidp.WebClient{ID: webClientID, RedirectURIs: []string{page + "/"}}})
	c := startCluster(t, clusterOptions{ports: ports, env: []string{"OIDC_ISSUER=" + idp.Issuer, "OIDC_WEB_CLIENT_ID=" + webClientID}})

	opts := devicesOptions{
		browserSession: newBrowserSession(t, chromium, page, "alice", "alice-password"),
		Label:          "rclone on laptop",
	}
	script := startBrowserScript(t, dir, "devices.mjs", opts)
	made := script.created()
	other := c.nodes[1].URL
	made.Rclone = strings.Replace(made.Rclone, page, other, 1)
	clients := useShownPassword(t, rclone, cadaver, other, made)
	script.goOn()
	clients.refusedWithin(t, script.revoked(), other, time.Second)
	script.finish()
}

// TestWebUIDevicesBasic is the view signed in with Basic, as a user of
// the Caddyfile: the password it makes signs rclone and cadaver in as
// that user, and its revocation in the page refuses them.
func TestWebUIDevicesBasic(t *testing.T) {
	t.Parallel()
	chromium, dir := requireBrowser(t)
	rclone := requirePeer(t, "rclone")
	cadaver := requirePeer(t, "cadaver")
	s := startServer(t, serverOptions{})
	opts := devicesOptions{
		browserSession: newBrowserSession(t, chromium, s.URL, "einstein", users["einstein"]),
		Basic:          true,
		Label:          "davfs2 on the desktop",
	}
	script := startBrowserScript(t, dir, "devices.mjs", opts)
	made := script.created()
	if made.User != "einstein" {
		t.Errorf("the page shows user %q, want einstein", made.User)
	}
	clients := useShownPassword(t, rclone, cadaver, s.URL, made)
	script.goOn()
	clients.refusedWithin(t, script.revoked(), s.URL, time.Second)
	script.finish()
}

// passwordClients are rclone, configured by the page's line, and
// cadaver, by a ~/.netrc, with one app password.
type passwordClients struct {
	rclone          *rcloneRunner
	cadaver         string
	home, work, url string
	raw             *appPasswordClient
}

// useShownPassword configures rclone and cadaver with the password the
// page showed and has them write and list on the server at base.
func useShownPassword(t *testing.T, rclone, cadaver, base string, made shownPassword) *passwordClients {
	t.Helper()
	c := &passwordClients{
		rclone:  rcloneFromLine(t, rclone, made.Rclone),
		cadaver: cadaver,
		work:    t.TempDir(),
		url:     base + "/webdav/",
		raw:     &appPasswordClient{t: t, base: base, user: made.User, password: made.Password},
	}
	local := filepath.Join(c.work, "from-rclone.txt")
	writeFile(t, local, "written by rclone with a password from the page")
	c.rclone.mustRun(t, "copyto", local, "davspaces:from-rclone.txt")
	if out := c.rclone.mustRunQuiet(t, "lsf", "davspaces:"); !strings.Contains(out, "from-rclone.txt") {
		t.Fatalf("rclone lsf:\n%s", out)
	}

	c.home = filepath.Join(c.work, "home")
	if err := os.Mkdir(c.home, 0o700); err != nil {
		t.Fatal(err)
	}
	netrc := "machine 127.0.0.1\nlogin " + made.User + "\npassword " + made.Password + "\n"
	if err := os.WriteFile(filepath.Join(c.home, ".netrc"), []byte(netrc), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(c.work, "upload.txt"), "written by cadaver")
	cadaverSession(t, cadaver, c.home, c.work, c.url, []cadaverStep{
		{cmd: "put upload.txt from-cadaver.txt", want: "succeeded."},
		{cmd: "ls", want: "from-rclone.txt"},
		{cmd: "quit", want: "Connection to `127.0.0.1' closed."},
	})
	return c
}

// rcloneFromLine runs the page's "rclone config create …" line in a shell
// with a fresh configuration file, and returns an rclone that uses it.
func rcloneFromLine(t *testing.T, bin, line string) *rcloneRunner {
	t.Helper()
	if !strings.HasPrefix(line, "rclone config create davspaces webdav ") {
		t.Fatalf("the page's rclone line: %q", line)
	}
	home := t.TempDir()
	r := &rcloneRunner{bin: bin}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RCLONE_") && !strings.HasPrefix(kv, "PATH=") {
			r.env = append(r.env, kv)
		}
	}
	r.env = append(r.env,
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"RCLONE_CONFIG="+filepath.Join(home, "rclone.conf"),
		"RCLONE_CACHE_DIR="+filepath.Join(home, "rclone-cache"),
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = r.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the page's rclone line: %v\n%s", err, out)
	}
	return r
}

// refusedWithin checks that, after the page's revocation was answered at
// revoked, a plain request, rclone and cadaver are refused on the server
// at base within limit, and logs how long after the answer each first
// was. Each tries again until then: another node learns of a revocation
// within apppass.DefaultRecheck.
func (c *passwordClients) refusedWithin(t *testing.T, revoked time.Time, base string, limit time.Duration) {
	t.Helper()
	type result struct {
		client string
		after  time.Duration // -1: not refused
		out    string
	}
	// Each try tells whether the client was refused, and when it saw
	// the refusal.
	tries := map[string]func() (bool, time.Time, string){
		"plain request": func() (bool, time.Time, string) {
			code, body := c.raw.do("PROPFIND", "/webdav/")
			return code == http.StatusUnauthorized, time.Now(), fmt.Sprint(code, " ", body)
		},
		"rclone": func() (bool, time.Time, string) {
			out, err := c.rclone.run(t, "lsf", "davspaces:", "--low-level-retries", "1", "--retries", "1")
			return err != nil && strings.Contains(out, "401"), time.Now(), out
		},
		"cadaver": func() (bool, time.Time, string) {
			return c.cadaverRefusal(base + "/webdav/")
		},
	}
	giveUp := limit + 5*time.Second
	results := make(chan result, len(tries))
	var wg sync.WaitGroup
	for name, try := range tries {
		wg.Go(func() {
			for {
				refused, at, out := try()
				if refused {
					results <- result{name, at.Sub(revoked), out}
					return
				}
				if time.Since(revoked) > giveUp {
					results <- result{name, -1, out}
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	close(results)
	for r := range results {
		switch {
		case r.after < 0:
			t.Errorf("%s was not refused within %s of the revocation:\n%s", r.client, giveUp, r.out)
		case r.after > limit:
			t.Errorf("%s was refused %s after the revocation, want within %s", r.client, r.after.Round(time.Millisecond), limit)
		default:
			t.Logf("%s refused %s after the page's DELETE was answered", r.client, r.after.Round(time.Millisecond))
		}
	}
}

// cadaverRefusal runs cadaver's ls and tells whether it was refused, and
// when it printed so: the time of its first 401, not of its exit, which
// its prompt for another user name delays.
func (c *passwordClients) cadaverRefusal(url string) (refused bool, at time.Time, out string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, c.cadaver, url)
	cmd.Env = append(os.Environ(), "HOME="+c.home, "LC_ALL=C.UTF-8", "TERM=dumb")
	cmd.Dir = c.work
	cmd.Stdin = strings.NewReader("ls\nquit\n")
	cmd.WaitDelay = 5 * time.Second
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return false, time.Now(), err.Error()
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return false, time.Now(), err.Error()
	}
	var b strings.Builder
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if !refused && strings.Contains(sc.Text(), "Authentication required") {
			refused, at = true, time.Now()
		}
	}
	cmd.Wait()
	return refused, at, b.String()
}

// listedPassword is an entry of GET /auth-app/tokens.
type listedPassword struct {
	Token    string `json:"token"`
	Label    string `json:"label"`
	Space    string `json:"space"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only"`
}

// listAppPasswords returns the user's app passwords by label.
func listAppPasswords(t *testing.T, c *client) map[string]listedPassword {
	t.Helper()
	_, body := c.expect(http.StatusOK, "GET", "/auth-app/tokens", "")
	var list []listedPassword
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("GET /auth-app/tokens answered %s", body)
	}
	byLabel := map[string]listedPassword{}
	for _, p := range list {
		byLabel[p.Label] = p
	}
	return byLabel
}

// fillAppPasswords makes n app passwords for c's user, a few at a time.
func fillAppPasswords(t *testing.T, c *client, n int) {
	t.Helper()
	start := time.Now()
	errs := make(chan error, n)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			req, _ := http.NewRequest("POST", fmt.Sprintf("%s/auth-app/tokens?label=filler-%d", c.base, i), nil)
			req.Header.Set("Authorization", "Bearer "+c.token)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("POST /auth-app/tokens: %d", resp.StatusCode)
				}
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d app passwords made in %s", n, time.Since(start).Round(time.Millisecond))
}

func queryOf(t *testing.T, raw any) url.Values {
	t.Helper()
	u, err := url.Parse(fmt.Sprint(raw))
	if err != nil {
		t.Fatalf("the page's request %v: %v", raw, err)
	}
	return u.Query()
}

// browserScript is a script of testdata/webui that runs beside the test:
// its events are read as they come, and a line on its stdin lets it go
// on where the test has done its part.
type browserScript struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
	events chan map[string]any
}

// startBrowserScript runs script with opts; it is killed at the test's end
// if still running.
func startBrowserScript(t *testing.T, dir, script string, opts any) *browserScript {
	t.Helper()
	arg, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	s := &browserScript{t: t, name: script, events: make(chan map[string]any, 16)}
	s.cmd = testpeer.CommandContext(ctx, "node", filepath.Join(dir, script), string(arg))
	s.cmd.Stderr = &s.stderr
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		s.cmd.Wait()
	})
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				ev = map[string]any{"event": "printed", "line": sc.Text()}
			}
			s.events <- ev
		}
	}()
	return s
}

// next returns the script's next event of kind, logging the others.
func (s *browserScript) next(kind string) map[string]any {
	s.t.Helper()
	for ev := range s.events {
		if ev["event"] == kind {
			return ev
		}
		s.t.Logf("%s: %v", s.name, ev)
	}
	err := s.cmd.Wait()
	s.t.Fatalf("%s ended (%v) before %q:\n%s", s.name, err, kind, tail(s.stderr.String(), 4000))
	return nil
}

// created is the password the page showed once.
func (s *browserScript) created() shownPassword {
	s.t.Helper()
	ev := s.next("created")
	str := func(k string) string { v, _ := ev[k].(string); return v }
	made := shownPassword{Password: str("password"), User: str("user"), Rclone: str("rclone"), DavURL: str("davURL"), Secrets: str("secrets"), URL: str("url")}
	if made.Password == "" {
		s.t.Fatalf("the page showed no password: %v", ev)
	}
	return made
}

// revoked is when the page's revocation was answered.
func (s *browserScript) revoked() time.Time {
	s.t.Helper()
	at, _ := s.next("revoked")["at"].(float64)
	return time.UnixMilli(int64(at))
}

func (s *browserScript) goOn() {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, "go\n"); err != nil {
		s.t.Fatalf("%s: %v", s.name, err)
	}
}

// finish waits for the script's end: its remaining events are logged.
func (s *browserScript) finish() {
	s.t.Helper()
	s.stdin.Close()
	for ev := range s.events {
		s.t.Logf("%s: %v", s.name, ev)
	}
	if err := s.cmd.Wait(); err != nil {
		s.t.Fatalf("%s: %v\n%s", s.name, err, tail(s.stderr.String(), 4000))
	}
}
