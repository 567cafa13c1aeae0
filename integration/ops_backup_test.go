package integration

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// The administrator's commands `caddy davspaces backup`, `restore` and
// `usage`, run as the real binary against the configuration a real Caddy
// serves.

// opsConfig writes the Caddyfile of a server on port with data directory
// root, as startServer makes it, for the commands to read, and returns its
// path.
func opsConfig(t *testing.T, port int, root string, opts serverOptions) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(path, []byte(exampleCaddyfile(t, port, root, opts)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// davspacesCommand runs `caddy davspaces args…` and returns its standard
// output, its standard error and its exit status.
func davspacesCommand(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	cmd := testpeer.Command(caddyBinary, append([]string{"davspaces"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	dir := t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(dir, "xdg-data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg-config"))
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("caddy davspaces %v did not end", args)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		status = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), status
}

// mustCommand runs `caddy davspaces args…`, which must succeed, and
// returns its standard output.
func mustCommand(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, status := davspacesCommand(t, args...)
	if status != 0 {
		t.Fatalf("caddy davspaces %v: exit status %d\n%s\n%s", args, status, out, tail(errOut, 4000))
	}
	return out
}

func serverPort(t *testing.T, s *server) int {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// opsContent is the content of file i, big enough for a content file of
// its own (small files live in the database) and different for every i.
func opsContent(tag string, i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%s %d\n", tag, i)), 16<<10/len(tag))
}

// churn is what 8 clients do while a backup runs: upload, replace, move
// and delete files of their own, each in a folder of its own, a bounded
// number of times or until stopped.
type churn struct {
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
	ops  int
}

const (
	churnClients = 8
	churnOps     = 200 // per client, at most
)

func startChurn(t *testing.T, s *server) *churn {
	t.Helper()
	c := &churn{stop: make(chan struct{})}
	setup := newClient(t, s.URL, "einstein")
	for w := range churnClients {
		setup.expect(http.StatusCreated, "MKCOL", fmt.Sprintf("/webdav/churn%d/", w), "")
	}
	for w := range churnClients {
		c.wg.Add(1)
		go c.run(t, s, w)
	}
	return c
}

func (c *churn) run(t *testing.T, s *server, w int) {
	defer c.wg.Done()
	cl := newClient(t, s.URL, "einstein")
	rng := rand.New(rand.NewPCG(uint64(w), 7))
	dir := fmt.Sprintf("/webdav/churn%d/", w)
	var names []string
	for i := range churnOps {
		select {
		case <-c.stop:
			return
		default:
		}
		var err error
		switch op := rng.IntN(4); {
		case op == 0 || len(names) < 2: // a new file
			name := fmt.Sprintf("f%d", i)
			err = c.expect(cl, http.StatusCreated, "PUT", dir+name, opsContent(name, w), nil)
			names = append(names, name)
		case op == 1: // a replacement: the old content goes
			err = c.expect(cl, http.StatusNoContent, "PUT", dir+names[rng.IntN(len(names))], opsContent("again", i), nil)
		case op == 2: // a move
			k := rng.IntN(len(names))
			to := names[k] + "m"
			err = c.expect(cl, http.StatusCreated, "MOVE", dir+names[k], nil, map[string]string{"Destination": s.URL + dir + to})
			names[k] = to
		default: // a delete
			k := rng.IntN(len(names))
			err = c.expect(cl, http.StatusNoContent, "DELETE", dir+names[k], nil, nil)
			names = append(names[:k], names[k+1:]...)
		}
		if err != nil {
			c.mu.Lock()
			c.errs = append(c.errs, err)
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		c.ops++
		c.mu.Unlock()
	}
}

func (c *churn) expect(cl *client, status int, method, path string, body []byte, header map[string]string) error {
	resp, b, err := cl.try(method, path, header, body)
	if err != nil {
		return err
	}
	if resp.StatusCode != status {
		return fmt.Errorf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, status, b)
	}
	return nil
}

// end stops the clients and returns how many operations they did.
func (c *churn) end(t *testing.T) int {
	t.Helper()
	close(c.stop)
	c.wg.Wait()
	if len(c.errs) > 0 {
		t.Fatalf("the clients failed: %v", c.errs)
	}
	return c.ops
}

// A backup taken while 8 clients upload, replace, move and delete (their
// content files removed at once, as without trash and versions) holds
// every file acknowledged before it began, with its SHA1, once restored
// into a fresh directory and served from there; a second backup into the
// same directory adds only the new content files; a restore refuses a
// store without --force.
func TestOpsBackupWhileServing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Caddy")
	}
	admin := adminSocket(t)
	// No trash and no versions: deletes and replacements remove content
	// files at once, while the backup links them.
	opts := serverOptions{admin: admin, davspaces: []string{"trash_retention 0", "versions off"}}
	s := startServer(t, opts)
	config := opsConfig(t, serverPort(t, s), s.Root, opts)

	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/before/", "")
	acknowledged := map[string][20]byte{}
	for i := range 40 {
		p := fmt.Sprintf("/webdav/before/file%02d.bin", i)
		body := opsContent("before", i)
		if resp, b := c.send("PUT", p, nil, body); resp.StatusCode != http.StatusCreated {
			t.Fatalf("PUT %s: %d %s", p, resp.StatusCode, b)
		}
		acknowledged[p] = sha1.Sum(body)
	}
	small := "/webdav/before/small.txt" // kept in the database
	c.expect(http.StatusCreated, "PUT", small, "small")
	acknowledged[small] = sha1.Sum([]byte("small"))

	load := startChurn(t, s)
	// Let the clients get going before the backup starts, without a
	// timing the test depends on: wait for some of their operations.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		load.mu.Lock()
		n := load.ops
		load.mu.Unlock()
		if n >= churnClients*4 {
			break
		}
	}
	dest := filepath.Join(t.TempDir(), "backup")
	out := mustCommand(t, "backup", "--config", config, "--adapter", "caddyfile", dest)
	ops := load.end(t)
	t.Logf("backup during %d client operations: %s", ops, strings.TrimSpace(out))
	if !strings.Contains(out, "from the running server") {
		t.Fatalf("the backup did not come from the running server: %s", out)
	}

	// Restored into a fresh directory and served from there.
	fresh := filepath.Join(t.TempDir(), "restored")
	restoreOpts := serverOptions{root: fresh}
	restoreConfig := opsConfig(t, freePort(t), fresh, restoreOpts)
	out = mustCommand(t, "restore", "--config", restoreConfig, dest)
	t.Logf("restore: %s", strings.TrimSpace(out))
	checkRestored(t, restoreConfig)
	restoredServer := startServer(t, restoreOpts)
	rc := newClient(t, restoredServer.URL, "einstein")
	for p, sum := range acknowledged {
		resp, body := rc.send("GET", p, nil, nil)
		if resp.StatusCode != http.StatusOK || sha1.Sum(body) != sum {
			t.Errorf("restored %s: status %d, SHA1 %x, want %x", p, resp.StatusCode, sha1.Sum(body), sum)
		}
	}

	// Restore refuses a store without --force, and a store a running
	// server holds even with it.
	restoredServer.stop()
	_, errOut, status := davspacesCommand(t, "restore", "--config", restoreConfig, dest)
	if status != 1 || !strings.Contains(errOut, "--force") {
		t.Fatalf("restore into a store without --force: status %d\n%s", status, tail(errOut, 2000))
	}
	_, errOut, status = davspacesCommand(t, "restore", "--config", config, "--force", dest)
	if status != 1 || !strings.Contains(errOut, "running server") {
		t.Fatalf("restore --force into a served store: status %d\n%s", status, tail(errOut, 2000))
	}
	mustCommand(t, "restore", "--config", restoreConfig, "--force", dest)

	// Incremental: after a backup of the quiet store, three new files
	// are all the next one links.
	mustCommand(t, "backup", "--config", config, dest)
	for i := range 3 {
		p := fmt.Sprintf("/webdav/after%d.bin", i)
		if resp, b := c.send("PUT", p, nil, opsContent("after", i)); resp.StatusCode != http.StatusCreated {
			t.Fatalf("PUT %s: %d %s", p, resp.StatusCode, b)
		}
	}
	out = mustCommand(t, "backup", "--config", config, dest)
	t.Logf("incremental backup: %s", strings.TrimSpace(out))
	if !regexp.MustCompile(`: 3 linked \([^)]*\), 0 copied \(0 B\), \d+ already there`).MatchString(out) {
		t.Fatalf("the incremental backup did not link just the 3 new files: %s", out)
	}
}

// usage prints one line per space: the personal spaces and the project
// space of the example, with their files and bytes.
func TestOpsUsage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts Caddy")
	}
	s := startServer(t, serverOptions{})
	einstein := newClient(t, s.URL, "einstein")
	einstein.expect(http.StatusCreated, "PUT", "/webdav/a.txt", "12345")
	einstein.expect(http.StatusCreated, "MKCOL", "/webdav/sub/", "")
	einstein.expect(http.StatusCreated, "PUT", "/webdav/sub/b.txt", "1234567890")
	einstein.expect(http.StatusCreated, "PUT", "/webdav/gone.txt", "123")
	einstein.expect(http.StatusNoContent, "DELETE", "/webdav/gone.txt", "")
	newClient(t, s.URL, "marie").expect(http.StatusCreated, "PUT", "/webdav/m.txt", "m")
	einsteinSpace := spaceOf(personalSpaceRef(t, s, "einstein"))
	marieSpace := spaceOf(personalSpaceRef(t, s, "marie"))
	physics := spaceOf(projectSpaceRef(personalSpaceRef(t, s, "einstein"), "Physics"))
	s.stop()

	out := mustCommand(t, "usage", "--config", opsConfig(t, serverPort(t, s), s.Root, serverOptions{}))
	t.Logf("usage:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !regexp.MustCompile(`^SPACE\s+NAME\s+TYPE\s+MEMBERS\s+FILES\s+BYTES\s+TRASH\s+VERSIONS\s+QUOTA$`).MatchString(lines[0]) {
		t.Fatalf("usage printed:\n%s", out)
	}
	for _, want := range []string{
		einsteinSpace + `\s+einstein\s+personal\s+1\s+2\s+15\s+3\s+0\s+none`,
		marieSpace + `\s+marie\s+personal\s+1\s+1\s+1\s+0\s+0\s+none`,
		physics + `\s+Physics\s+project\s+3\s+0\s+0\s+0\s+0\s+none`,
	} {
		if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(out) {
			t.Errorf("usage has no line matching %s", want)
		}
	}
}

// spaceOf is the space id of a resource id <storage>$<space>.
func spaceOf(ref string) string {
	_, space, _ := strings.Cut(ref, "$")
	return space
}

// checkRestored runs `caddy davspaces check` on a restored store, which
// must find nothing, in a build that has the check (restore also checks
// a store that can check itself).
func checkRestored(t *testing.T, config string) {
	t.Helper()
	out, errOut, status := davspacesCommand(t, "check", "--config", config)
	if strings.Contains(errOut, "unknown command") {
		t.Log("this build has no check command")
		return
	}
	if status != 0 {
		t.Fatalf("check of the restored store: status %d\n%s\n%s", status, out, tail(errOut, 2000))
	}
	t.Logf("check: %s", strings.TrimSpace(out))
}
