package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// desktopSyncTimeout bounds one sync pass: a client that hangs (as
// owncloudcmd did on 404s to its chunk uploads) fails the step.
const desktopSyncTimeout = 3 * time.Minute

// desktopUser is the demo user the clients sign in as (Basic).
const desktopUser = "einstein"

// desktopClient is one command-line sync client and the folder of the
// user's personal space it syncs.
type desktopClient struct {
	program string
	// folder is the folder of the personal space the client syncs, ""
	// for the whole space: owncloudcmd syncs the WebDAV root the
	// capabilities name, nextcloudcmd the folder given with --path (which
	// must exist).
	folder string
	// bigUploader is the client's uploader (its log names the class) for
	// files larger than its chunk size, picked from the capabilities: TUS
	// for the ownCloud client, chunking NG for the Nextcloud client, so
	// that the big files cannot pass as single PUTs or v1 chunks.
	bigUploader string
}

var desktopClients = []desktopClient{
	{program: "owncloudcmd", bigUploader: "PropagateUploadFileTUS"},
	{program: "nextcloudcmd", folder: "Documents", bigUploader: "PropagateUploadFileNG"},
}

// args are the command-line arguments of one sync pass of local against
// serverURL.
func (c desktopClient) args(local, serverURL, exclude string) []string {
	args := []string{
		"--non-interactive",
		"--trust", // Caddy's local CA is in no trust store
		"--max-sync-retries", "2",
		"--exclude", exclude,
		"--user", desktopUser,
		"--password", users[desktopUser],
		"--logdebug",
	}
	if c.folder != "" {
		args = append(args, "--path", "/"+c.folder)
	}
	return append(args, local, serverURL+"/")
}

// desktopSession drives one client against one server and reads the
// server's side with the user's own WebDAV requests.
type desktopSession struct {
	t      *testing.T
	client desktopClient
	binary string
	server *server
	dav    *client // the user, over HTTPS trusting Caddy's local CA
	// home holds the client's exclude list and its settings: nothing of
	// the machine's own configuration is read.
	home    string
	exclude string
	logDir  string
	runs    int
	lastLog string
	// broken is set by fail: the steps after this one cannot run.
	broken bool
}

func newDesktopSession(t *testing.T, s *server, c desktopClient, binary string) *desktopSession {
	t.Helper()
	home := t.TempDir()
	d := &desktopSession{
		t:       t,
		client:  c,
		binary:  binary,
		server:  s,
		dav:     &client{t: t, base: s.URL, user: desktopUser, http: caddyCAClient(t, s)},
		home:    home,
		exclude: filepath.Join(home, "sync-exclude.lst"),
		logDir:  t.TempDir(),
	}
	// owncloudcmd stops with "Cannot load system exclude list" without
	// one; nothing of the test tree matches these.
	if err := os.WriteFile(d.exclude, []byte("# davspaces desktop client test\n.DS_Store\nThumbs.db\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.folder != "" {
		d.dav.expectOneOf("MKCOL", d.davPath(""), nil, http.StatusCreated)
	}
	return d
}

// caddyCAClient is an HTTP client that trusts only the root of the local
// CA of s, a server started with tls.
func caddyCAClient(t *testing.T, s *server) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(s.CACert)
	if err != nil {
		t.Fatalf("reading Caddy's local CA: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("no certificate in %s", s.CACert)
	}
	return &http.Client{
		Timeout:   2 * time.Minute, // whole 50 MB bodies
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
}

// davPath is the escaped WebDAV path of name (slash-separated, relative
// to the synced folder) in the user's personal space.
func (d *desktopSession) davPath(name string) string {
	return (&url.URL{Path: path.Join("/remote.php/webdav", d.client.folder, name)}).EscapedPath()
}

// syncAndCheck runs one sync pass of local and checks what it left behind,
// and that it uploaded bigUploads with the client's bigUploader; a failed
// step ends the test with an excerpt of the client's log, since the later
// steps build on it.
func (d *desktopSession) syncAndCheck(step, local string, bigUploads ...string) {
	d.t.Helper()
	d.sync(step, local)
	d.checkBigUploads(step, bigUploads...)
	d.checkConverged(step, local)
	d.stopIfBroken(step)
}

// desktopPropagation is what both clients log for each action of a sync
// pass (an upload, a download, a folder made, a rename, a deletion, new
// metadata): a pass with nothing to do logs none.
var desktopPropagation = regexp.MustCompile(`Starting \S+ propagation of "[^"]*"`)

// syncExpectingNothing runs a sync pass of local, already in step with the
// server, and checks that the client found nothing to do: etags, file ids
// and permissions it recorded are stable, and it does not take its own
// uploads or downloads for changes.
func (d *desktopSession) syncExpectingNothing(step, local string) {
	d.t.Helper()
	d.sync(step, local)
	err := scanLog(d.lastLog, func(line string) {
		if action := desktopPropagation.FindString(line); action != "" {
			d.t.Errorf("%s: a pass with nothing to do did: %s", step, action)
		}
	})
	if err != nil {
		d.t.Error(err)
	}
	d.checkConverged(step, local)
	d.stopIfBroken(step)
}

// checkBigUploads checks that the last pass uploaded each of names with
// the client's bigUploader.
func (d *desktopSession) checkBigUploads(step string, names ...string) {
	d.t.Helper()
	uploaders := map[string]string{}
	err := scanLog(d.lastLog, func(line string) {
		if m := desktopUploader.FindStringSubmatch(line); m != nil {
			uploaders[m[1]] = m[2]
		}
	})
	if err != nil {
		d.t.Error(err)
	}
	for _, name := range names {
		if got := uploaders[name]; got != d.client.bigUploader {
			d.t.Errorf("%s: %s uploaded %q with %q, want %s", step, d.client.program, name, got, d.client.bigUploader)
		}
	}
}

// desktopUploader is the line both clients log when they start to upload
// a file, with the file and the uploader's class.
var desktopUploader = regexp.MustCompile(`Starting \S+ propagation of "([^"]*)" by OCC::(PropagateUploadFile\w*)\(`)

// sync runs one sync pass of the client over local within
// desktopSyncTimeout, its debug log saved in the test's log folder, and
// fails the test when the pass fails.
func (d *desktopSession) sync(step, local string) {
	d.t.Helper()
	start := time.Now()
	timedOut, err := d.run(step, local)
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case timedOut:
		d.fail("%s: %s did not finish within %v", step, d.client.program, desktopSyncTimeout)
	case err != nil:
		d.fail("%s: %s failed after %v: %v", step, d.client.program, took, err)
	default:
		d.t.Logf("%s: %s synced in %v", step, d.client.program, took)
	}
}

// run runs one pass of the client over local within desktopSyncTimeout,
// its debug log kept in the test's log folder, and tells how it ended.
func (d *desktopSession) run(step, local string) (timedOut bool, err error) {
	d.t.Helper()
	d.runs++
	d.lastLog = filepath.Join(d.logDir, fmt.Sprintf("%02d-%s.log", d.runs, strings.ReplaceAll(step, " ", "-")))
	logFile, err := os.Create(d.lastLog)
	if err != nil {
		d.t.Fatal(err)
	}
	defer logFile.Close()
	ctx, cancel := context.WithTimeout(context.Background(), desktopSyncTimeout)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, d.binary, d.client.args(local, d.server.URL, d.exclude)...)
	cmd.Env, cmd.Dir = d.environment(), d.home
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	return ctx.Err() != nil, err
}

// environment keeps the client away from the machine's own settings and
// accounts, and gives it a UTF-8 locale: Qt encodes file names with the
// locale's character set.
func (d *desktopSession) environment() []string {
	return desktopEnvironment(d.home)
}

// desktopEnvironment is the environment of a desktop client whose
// settings live in home.
func desktopEnvironment(home string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "LANG", "LC_ALL"}, name)
	})
	return append(env,
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
	)
}

// fail reports a failure that leaves the client's folder or the server in
// a state the later steps cannot build on.
func (d *desktopSession) fail(format string, args ...any) {
	d.t.Helper()
	d.t.Errorf(format, args...)
	d.broken = true
}

// stopIfBroken ends the test after a step that failed, with what the
// client did in its last pass.
func (d *desktopSession) stopIfBroken(step string) {
	d.t.Helper()
	if !d.broken {
		return
	}
	if d.lastLog != "" {
		d.t.Logf("%s: %s's requests and warnings of its last pass (%s):\n%s", step, d.client.program, filepath.Base(d.lastLog), desktopLogExcerpt(d.lastLog))
	}
	d.t.FailNow()
}

// desktopLogLine is a line of a client's debug log worth showing: a
// finished request (other than a successful listing) or a warning.
var desktopLogLine = regexp.MustCompile(`FINISHED WITH STATUS|\[ (warning|critical|fatal)`)

// desktopLogExcerpt is the tail of the interesting lines of a client's
// debug log, then the log's last lines.
func desktopLogExcerpt(logPath string) string {
	var picked, last []string
	err := scanLog(logPath, func(line string) {
		last = keepLast(append(last, line), 15)
		if desktopLogLine.MatchString(line) && !(strings.Contains(line, "LSCOL of") && strings.Contains(line, `STATUS "OK"`)) {
			picked = keepLast(append(picked, line), 80)
		}
	})
	if err != nil {
		return err.Error()
	}
	return strings.Join(picked, "\n") + "\n--- last lines ---\n" + strings.Join(last, "\n")
}

// scanLog calls fn with each line of a client's log, cut to 300 bytes.
func scanLog(logPath string, fn func(line string)) error {
	f, err := os.Open(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if len(line) > 300 {
			line = line[:300] + "…"
		}
		fn(line)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", logPath, err)
	}
	return nil
}

func keepLast(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

// expectOneOf sends a request (path already escaped) and checks that its
// status is one of want.
func (c *client) expectOneOf(method, path string, body []byte, want ...int) {
	c.t.Helper()
	resp, b := c.send(method, path, nil, body)
	if !slices.Contains(want, resp.StatusCode) {
		c.t.Fatalf("%s %s: status %d, want one of %v\n%s", method, path, resp.StatusCode, want, b)
	}
}
