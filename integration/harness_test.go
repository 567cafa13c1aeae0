// Package integration starts the real Caddy binary (built from ./cmd/caddy)
// with the project's Caddyfile.example and drives it with real WebDAV
// clients.
package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// Tests call t.Parallel(): most of their time goes to waiting for a
// server or a client program. Those that hold the server to a latency,
// deadline or throughput figure (a bystander's p99 during a burst, a
// revocation within 1.5 s, a request beside stalled uploads, the node cap
// reached within ten seconds) or set the environment
// (t.Setenv) do not: Go runs them first, one at a time, before any
// parallel test starts, so the suite's own load does not skew them.

// caddyBinary is built once by TestMain.
var caddyBinary string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "davspaces-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	caddyBinary = filepath.Join(dir, "caddy")
	build := testpeer.Command("go", "build", "-o", caddyBinary, "./cmd/caddy")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building caddy:", err)
		return 1
	}
	// testpeer stops the PostgreSQL and MinIO servers of the cluster tests.
	return testpeer.Main(m)
}

// The demo users of Caddyfile.example.
var users = map[string]string{
	"einstein": "relativity",
	"marie":    "radioactivity",
	"richard":  "superfluidity",
}

// server is a running Caddy.
type server struct {
	URL  string // http://127.0.0.1:port, or https://localhost:port with tls
	Root string // the davspaces data directory
	// CACert is the PEM file of the root of Caddy's local CA, which signs
	// the certificate of a server started with tls; empty otherwise.
	CACert string
	cmd    *exec.Cmd
	log    *os.File
}

// serverOptions adjust Caddyfile.example for a test.
type serverOptions struct {
	// extra lines for the davspaces block
	davspaces []string
	// postgresStore are extra lines for the store block of a cluster's
	// nodes (the postgres store), boltStore those of the embedded store's
	// (store bolt { root … })
	postgresStore, boltStore []string
	// extra lines for the webfinger block
	webfinger []string
	// root reuses a data directory (restart tests); empty means a new one
	root string
	// issuer is the OpenID Connect issuer (OIDC_ISSUER); empty means the
	// example's default
	issuer string
	// admin is the admin endpoint's address (reload tests); empty turns it
	// off
	admin string
	// env is extra environment for Caddy (NAME=value)
	env []string
	// port is the port to listen on; 0 picks a free one
	port int
	// tls keeps the example's HTTPS with Caddy's local CA, on
	// https://localhost:port (desktop sync clients want a host name and
	// TLS), without the HTTP redirect listener.
	tls bool
}

// startServer runs Caddy on Caddyfile.example, moved to plain HTTP on a free
// loopback port with a private data directory.
func startServer(t testing.TB, opts serverOptions) *server {
	t.Helper()
	dir := t.TempDir()
	root := opts.root
	if root == "" {
		root = filepath.Join(dir, "data")
	}
	port := opts.port
	if port == 0 {
		port = freePort(t)
	}
	run := caddyRun{dir: dir, config: exampleCaddyfile(t, port, root, opts), url: fmt.Sprintf("http://127.0.0.1:%d", port), env: opts.env}
	if opts.issuer != "" {
		run.env = append(run.env, "OIDC_ISSUER="+opts.issuer)
	}
	if opts.tls {
		run.url = fmt.Sprintf("https://localhost:%d", port)
	}
	s := run.start(t)
	s.Root = root
	return s
}

// caddyRun is how to run one Caddy: its directory (Caddyfile, log, Caddy's
// own data), its configuration, the URL it answers on and extra environment.
// A run can be started again after its server stopped (a node's restart).
type caddyRun struct {
	dir, config, url string
	env              []string
}

// start runs Caddy and waits until it answers on r.url.
func (r caddyRun) start(t testing.TB) *server {
	t.Helper()
	s := r.launch(t)
	s.waitReady(t)
	return s
}

// launch runs Caddy without waiting for it. Its log is appended to, so
// that a restarted server's log follows the previous one's.
func (r caddyRun) launch(t testing.TB) *server {
	t.Helper()
	cfgPath := filepath.Join(r.dir, "Caddyfile")
	if err := os.WriteFile(cfgPath, []byte(r.config), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.OpenFile(filepath.Join(r.dir, "caddy.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	// Caddy listens with SO_REUSEPORT: one left serving after a test
	// binary died would take part of a later run's connections, so it
	// dies with the binary (testpeer.Command).
	cmd := testpeer.Command(caddyBinary, "run", "--config", cfgPath, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(r.dir, "xdg-data"), "XDG_CONFIG_HOME="+filepath.Join(r.dir, "xdg-config"))
	cmd.Env = append(cmd.Env, r.env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{URL: r.url, cmd: cmd, log: logFile}
	if strings.HasPrefix(r.url, "https:") {
		s.CACert = filepath.Join(r.dir, "xdg-data", "caddy", "pki", "authorities", "local", "root.crt")
	}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			out, _ := os.ReadFile(logFile.Name())
			t.Logf("caddy log (%s):\n%s", r.url, tail(string(out), 4000))
		}
	})
	return s
}

// stop ends Caddy gracefully.
func (s *server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// kill ends Caddy abruptly, as a crash would.
func (s *server) kill() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

func (s *server) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodOptions, s.URL+"/webdav/", nil)
		resp, err := readinessClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return
			}
		}
		if s.cmd.ProcessState != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("caddy did not become ready on %s", s.URL)
}

// readinessClient only asks whether Caddy answers yet: the certificate of a
// tls server is checked by the tests that use it (server.CACert).
var readinessClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
}

// exampleAdmin is the admin line of Caddyfile.example, which a test's
// replaces (serverOptions.admin).
const exampleAdmin = "\tadmin unix/{$XDG_RUNTIME_DIR:/tmp}/davspaces-admin.sock|0600\n"

// exampleCaddyfile rewrites Caddyfile.example for a test: plain HTTP on port
// (or HTTPS with opts.tls), no admin endpoint, the given data directory and
// extra lines.
func exampleCaddyfile(t testing.TB, port int, root string, opts serverOptions) string {
	t.Helper()
	b, err := os.ReadFile("../Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	admin := "off"
	if opts.admin != "" {
		admin = opts.admin
	}
	site, tlsLine, global := fmt.Sprintf("http://127.0.0.1:%d {", port), "", "\tadmin "+admin+"\n"
	if opts.tls {
		// Without the redirect listener Caddy leaves port 80 alone.
		site, tlsLine, global = fmt.Sprintf("https://localhost:%d {", port), "\ttls internal\n", global+"\tauto_https disable_redirects\n"
	}
	store := "\t\t\troot " + root + "\n"
	if len(opts.boltStore) > 0 {
		store = indent(slices.Concat([]string{"store bolt {", "\troot " + root}, opts.boltStore, []string{"}"}), "\t\t\t")
	}
	for old, repl := range map[string]string{
		"https://localhost:9200 {":                  site,
		"\ttls internal\n":                          tlsLine,
		exampleAdmin:                                global,
		"\t\t\t# root /var/lib/davspaces\n":         store + indent(opts.davspaces, "\t\t\t"),
		"\t\tplatform_url https://localhost:9200\n": "\t\tplatform_url https://localhost:9200\n" + indent(opts.webfinger, "\t\t"),
	} {
		if !strings.Contains(cfg, old) {
			t.Fatalf("Caddyfile.example no longer contains %q", old)
		}
		cfg = strings.Replace(cfg, old, repl, 1)
	}
	return cfg
}

func indent(lines []string, prefix string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}

// freePort is a loopback port nobody listens on, claimed for t until it
// ends (testpeer.FreePort), so that no other test, of this binary or of a
// second copy of the suite, starts a server on it meanwhile.
func freePort(t testing.TB) int {
	t.Helper()
	return testpeer.FreePort(t)
}

// requirePeer finds a client program. Missing peers fail the test in CI
// (CI=true), where the test command installs them, and skip it elsewhere.
func requirePeer(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed: the test command must install it", name)
	}
	t.Skipf("%s is not installed (run the README's test command to install it)", name)
	return ""
}

// runPeer runs a client program with a deadline and returns its output.
func runPeer(t testing.TB, timeout time.Duration, stdin string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, name, args...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
