package integration

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// The migration path through the real binary: `caddy davspaces import` of
// the Go distribution's source tree (about 10k files) into a space, and
// `caddy davspaces export` of it into a fresh folder, which `diff -r` and
// the modification times find equal to the source. A second import finds
// everything there already. A symbolic link and a named pipe in the source
// are listed and left out.

func TestOpsImportExportEmbedded(t *testing.T) {
	t.Parallel()
	goSrc := goSourceTree(t, "")
	src := sourceWithSpecialFiles(t, goSrc)
	dir := t.TempDir()
	root := filepath.Join(dir, "data")
	config := writeImportConfig(t, dir, exampleCaddyfile(t, freePort(t), root, serverOptions{}))

	// The embedded store opens in one process at a time.
	s := startServer(t, serverOptions{root: root})
	refused := runImportCLI(t, "import", "--config", config, "--adapter", "caddyfile", "--space", "user:einstein", src)
	if refused.code == 0 || !strings.Contains(refused.stderr, "stop the server") {
		t.Fatalf("import while the server holds the store: exit %d, want an error saying to stop the server\n%s", refused.code, tail(refused.stderr, 2000))
	}
	s.stop()

	importExportRoundTrip(t, config, src, goSrc, time.Nanosecond, specialFilesSkipped)

	// The server serves what was imported.
	s = startServer(t, serverOptions{root: root})
	assertImportedServed(t, s, goSrc, "README.vendor")
}

func TestOpsImportExportCluster(t *testing.T) {
	t.Parallel()
	// A part of the tree: the cluster's store writes every file to
	// PostgreSQL and S3, and the embedded test has the whole tree.
	goSrc := goSourceTree(t, "net")
	src := sourceWithSpecialFiles(t, goSrc)
	// PostgreSQL text holds no invalid UTF-8: the store refuses the name.
	if err := os.WriteFile(filepath.Join(src, "latin1 caf\xe9"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, clusterOptions{})
	config := writeImportConfig(t, t.TempDir(), c.nodes[0].run.config)
	// The import runs while the cluster serves: PostgreSQL is no one
	// process's.
	importExportRoundTrip(t, config, src, goSrc, time.Microsecond,
		slices.Concat(specialFilesSkipped, []string{"skipped latin1 caf\xe9: name refused: "}))
	assertImportedServed(t, c.lb, goSrc, "http/server.go")
}

// specialFilesSkipped are the lines an import of a source with special
// files (sourceWithSpecialFiles) prints for them.
var specialFilesSkipped = []string{
	"skipped a link: not a regular file: a symbolic link",
	"skipped a fifo: not a regular file: a named pipe",
}

// importExportRoundTrip imports src into einstein's space with the store of
// config, exports it, compares the export with want (src without what the
// import leaves out, which it must list as skipped) to the modification
// times' precision, and imports src again, which must find everything
// there.
func importExportRoundTrip(t *testing.T, config, src, want string, precision time.Duration, skipped []string) {
	t.Helper()
	files := countRegularFiles(t, want)
	common := []string{"--config", config, "--adapter", "caddyfile", "--space", "user:einstein"}

	start := time.Now()
	first := runImportCLI(t, append([]string{"import"}, append(common, src, "/go/src")...)...)
	firstTook := time.Since(start)
	// Exit status 1: something was left out.
	leftOut := fmt.Sprintf(", %d skipped", len(skipped))
	if first.code != 1 || !strings.Contains(first.stdout, fmt.Sprintf("import: %d files (", files)) || !strings.Contains(first.stdout, leftOut) {
		t.Fatalf("first import: exit %d\nstdout: %s\nstderr: %s", first.code, first.stdout, tail(first.stderr, 3000))
	}
	for _, line := range skipped {
		if !strings.Contains(first.stderr, line) {
			t.Errorf("the first import's errors do not say %q", line)
		}
	}
	t.Logf("first import: %v: %s", firstTook.Round(time.Millisecond), strings.TrimSpace(first.stdout))

	out := filepath.Join(t.TempDir(), "export")
	exported := runImportCLI(t, append([]string{"export"}, append(common, "--path", "/go/src", out)...)...)
	if exported.code != 0 || !strings.Contains(exported.stdout, fmt.Sprintf("export: %d files (", files)) {
		t.Fatalf("export: exit %d\nstdout: %s\nstderr: %s", exported.code, exported.stdout, tail(exported.stderr, 3000))
	}
	if diff, err := testpeer.Command("diff", "-r", want, out).CombinedOutput(); err != nil {
		t.Fatalf("diff -r %s and the export: %v\n%s", want, err, tail(string(diff), 3000))
	}
	assertImportedModTimes(t, want, out, precision)

	start = time.Now()
	second := runImportCLI(t, append([]string{"import"}, append(common, src, "/go/src")...)...)
	secondTook := time.Since(start)
	skippedAll := fmt.Sprintf("import: 0 files (0 B) written, 0 folders created, %d files (", files)
	if second.code != 1 || !strings.Contains(second.stdout, skippedAll) || !strings.Contains(second.stdout, leftOut) {
		t.Fatalf("second import: exit %d, want %q\nstdout: %s\nstderr: %s", second.code, skippedAll, second.stdout, tail(second.stderr, 3000))
	}
	t.Logf("second import: %v: %s", secondTook.Round(time.Millisecond), strings.TrimSpace(second.stdout))
	if secondTook > firstTook/2 {
		t.Errorf("the second import took %v, the first %v: finding files there should be much faster than sending them", secondTook, firstTook)
	}
}

// goSourceTree returns the folder sub of the Go distribution's src.
func goSourceTree(t *testing.T, sub string) string {
	t.Helper()
	goroot, err := testpeer.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(goroot)), "src", sub)
}

// sourceWithSpecialFiles returns a copy of tree (hard links where the file
// system allows: the import only reads) with a symbolic link and a named
// pipe added at its top.
func sourceWithSpecialFiles(t *testing.T, tree string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	if err := testpeer.Command("cp", "-al", tree, src).Run(); err != nil {
		os.RemoveAll(src)
		if out, err := testpeer.Command("cp", "-a", tree, src).CombinedOutput(); err != nil {
			t.Fatalf("copying %s: %v\n%s", tree, err, out)
		}
	}
	if err := os.Symlink(tree, filepath.Join(src, "a link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(src, "a fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	return src
}

func writeImportConfig(t *testing.T, dir, caddyfile string) string {
	t.Helper()
	p := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(p, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// cliRun is what one run of the binary printed, and its exit status.
type cliRun struct {
	stdout, stderr string
	code           int
}

// runImportCLI runs `caddy davspaces args…` with Caddy's own directories
// in the test's.
func runImportCLI(t *testing.T, args ...string) cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cmd := testpeer.CommandContext(ctx, caddyBinary, append([]string{"davspaces"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(dir, "xdg-data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg-config"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := cliRun{stdout: stdout.String(), stderr: stderr.String()}
	if exit, ok := err.(*exec.ExitError); ok {
		run.code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("caddy davspaces %s: %v", strings.Join(args, " "), err)
	}
	return run
}

// countRegularFiles counts the regular files below dir.
func countRegularFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// assertImportedModTimes checks that every file below want has a file below
// got with its modification time, give or take what the store keeps of it
// (precision).
func assertImportedModTimes(t *testing.T, want, got string, precision time.Duration) {
	t.Helper()
	differ := 0
	err := filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		wi, err := d.Info()
		if err != nil {
			return err
		}
		gi, err := os.Stat(filepath.Join(got, rel))
		if err != nil {
			return err
		}
		if gi.ModTime().Sub(wi.ModTime()).Abs() >= precision {
			if differ++; differ <= 5 {
				t.Errorf("%s: exported mtime %v, source %v", rel, gi.ModTime(), wi.ModTime())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if differ > 0 {
		t.Errorf("%d files have another mtime", differ)
	}
}

// assertImportedServed checks that s serves the imported file rel of the source
// tree to einstein, byte for byte.
func assertImportedServed(t *testing.T, s *server, tree, rel string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(tree, rel))
	if err != nil {
		t.Fatal(err)
	}
	resp := sendAs(t, s, "einstein", http.MethodGet, "/dav/files/einstein/go/src/"+rel, nil, nil)
	if resp.code != http.StatusOK || string(resp.body) != string(want) {
		t.Errorf("GET the imported %s: %d, %d bytes, want the %d of the source", rel, resp.code, len(resp.body), len(want))
	}
}
