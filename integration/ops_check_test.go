package integration

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

// TestOpsCheckFindsAndRepairs damages a store the server wrote, with the
// server stopped, in the four ways the issue names (a missing content
// file, an orphan one, a wrong folder size, an upload session without its
// bytes), and runs `caddy davspaces check` on the same Caddyfile: it
// names each with its space and path and exits 1; --repair fixes all but
// the missing content (exit 1 still); once that is back, a check exits 0
// and the server serves the store again.
func TestOpsCheckFindsAndRepairs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "data")
	port := freePort(t)
	run := caddyRun{dir: dir, config: exampleCaddyfile(t, port, root, serverOptions{}), url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	s := run.start(t)
	config := filepath.Join(dir, "Caddyfile")

	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/docs", "")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/docs/sub", "")
	// Beyond the inline limit: content files.
	a, b, d := randomBytes(t, 40<<10), randomBytes(t, 50<<10), randomBytes(t, 30<<10)
	c.expect(http.StatusCreated, "PUT", "/webdav/docs/a.bin", string(a))
	c.expect(http.StatusCreated, "PUT", "/webdav/docs/sub/b.bin", string(b))
	c.expect(http.StatusNoContent, "PUT", "/webdav/docs/sub/b.bin", string(d)) // a version of b.bin
	c.expect(http.StatusNoContent, "DELETE", "/webdav/docs/sub/b.bin", "")     // into the trash
	c.expect(http.StatusCreated, "PUT", "/webdav/docs/sub/c.bin", string(b))
	resp, body, err := c.tusCreate("/webdav/docs/", "tus.bin", 100, []byte("0123456789"))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("TUS POST: %v %v %s", resp, err, body)
	}

	out, code := runCaddyDavspaces(t, run, "check", "--config", config)
	if code != 1 || !strings.Contains(out, "admin endpoint off") {
		t.Fatalf("check of a store a server without admin endpoint holds: exit %d\n%s", code, out)
	}
	s.stop()
	for _, args := range [][]string{{"check"}, {"check", "--deep"}} {
		out, code := runCaddyDavspaces(t, run, append(args, "--config", config)...)
		if code != 0 || !strings.Contains(out, "0 problems") {
			t.Fatalf("%v of a sound store: exit %d\n%s", args, code, out)
		}
	}

	blobA := storeContentFile(t, root, a)
	if err := os.Remove(blobA); err != nil {
		t.Fatal(err)
	}
	orphan := strings.ReplaceAll(uuid.NewString(), "-", "")
	writeStoreFile(t, filepath.Join(root, "blobs", orphan[:2], orphan), []byte("nobody's"))
	damageFolderSize(t, filepath.Join(root, "meta.db"), "sub", 1000)
	sessions, err := os.ReadDir(filepath.Join(root, "sessions"))
	if err != nil || len(sessions) != 1 {
		t.Fatalf("session files: %v, %v", sessions, err)
	}
	if err := os.Remove(filepath.Join(root, "sessions", sessions[0].Name())); err != nil {
		t.Fatal(err)
	}

	space := checkFindsTheDamage(t, run, config)
	if _, err := os.Stat(filepath.Join(root, "blobs", orphan[:2], orphan)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the orphan content file is still there: %v", err)
	}

	writeStoreFile(t, blobA, a) // back from a backup
	out, code = runCaddyDavspaces(t, run, "check", "--deep", "--config", config)
	if code != 0 || !strings.Contains(out, "0 problems") {
		t.Fatalf("check after the repair: exit %d\n%s", code, out)
	}

	s = run.start(t)
	c = newClient(t, s.URL, "einstein")
	if _, got := c.expect(http.StatusOK, "GET", "/webdav/docs/a.bin", ""); got != string(a) {
		t.Error("docs/a.bin changed")
	}
	if got := c.prop("/webdav/docs/sub", ocNS, "size"); got != fmt.Sprint(len(b)) {
		t.Errorf("docs/sub oc:size %s, want %d", got, len(b))
	}
	if space == "" {
		t.Error("no space named")
	}
}

// TestOpsCheckWhileServing checks the store of a running server through
// its admin endpoint: an orphan content file is found and repaired, and a
// deep check while clients write finds nothing.
func TestOpsCheckWhileServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	root := filepath.Join(dir, "data")
	port := freePort(t)
	opts := serverOptions{admin: adminSocket(t)}
	run := caddyRun{dir: dir, config: exampleCaddyfile(t, port, root, opts), url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	s := run.start(t)
	config := filepath.Join(dir, "Caddyfile")
	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/docs", "")
	c.expect(http.StatusCreated, "PUT", "/webdav/docs/a.bin", string(randomBytes(t, 40<<10)))

	orphan := strings.ReplaceAll(uuid.NewString(), "-", "")
	writeStoreFile(t, filepath.Join(root, "blobs", orphan[:2], orphan), []byte("nobody's"))
	out, code := runCaddyDavspaces(t, run, "check", "--config", config)
	if code != 1 {
		t.Fatalf("check of a serving store with an orphan: exit %d\n%s", code, out)
	}
	wantCheckLines(t, out, []checkLine{{kind: "orphan-content"}})
	out, code = runCaddyDavspaces(t, run, "check", "--repair", "--config", config)
	if code != 0 {
		t.Fatalf("check --repair of a serving store: exit %d\n%s", code, out)
	}
	wantCheckLines(t, out, []checkLine{{kind: "orphan-content", repaired: true}})

	// Clients write while a deep check runs: bounded work, each client in
	// a folder of its own.
	const clients, rounds = 4, 15
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		go func() { errs <- writeWhileChecked(newClient(t, s.URL, "einstein"), i, rounds) }()
	}
	out, code = runCaddyDavspaces(t, run, "check", "--deep", "--config", config)
	for i := 0; i < clients; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if code != 0 || !strings.Contains(out, "0 problems") {
		t.Fatalf("deep check while clients write: exit %d\n%s", code, out)
	}
	out, code = runCaddyDavspaces(t, run, "check", "--deep", "--config", config)
	if code != 0 {
		t.Fatalf("deep check after the clients: exit %d\n%s", code, out)
	}
}

// writeWhileChecked makes rounds of changes in a folder of its own:
// uploads, replacements, moves and deletes.
func writeWhileChecked(c *client, i, rounds int) error {
	dir := fmt.Sprintf("/webdav/w%d", i)
	if resp, body, err := c.try("MKCOL", dir, nil, nil); err != nil || resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("MKCOL %s: %v %s", dir, err, body)
	}
	content := bytes.Repeat([]byte{byte('a' + i)}, 20<<10)
	for r := 0; r < rounds; r++ {
		file := fmt.Sprintf("%s/f%d", dir, r)
		steps := []struct {
			method, path string
			header       map[string]string
			body         []byte
		}{
			{"PUT", file, nil, content},
			{"PUT", file, nil, content[:r+1]},
			{"MOVE", file, map[string]string{"Destination": file + ".moved"}, nil},
			{"DELETE", file + ".moved", nil, nil},
		}
		for _, st := range steps {
			resp, body, err := c.try(st.method, st.path, st.header, st.body)
			if err != nil || resp.StatusCode >= 300 {
				return fmt.Errorf("%s %s: %v %s", st.method, st.path, err, body)
			}
		}
	}
	return nil
}

// runCaddyDavspaces runs `caddy davspaces args...` in the environment of run, and
// returns its output and exit status.
func runCaddyDavspaces(t *testing.T, run caddyRun, args ...string) (string, int) {
	t.Helper()
	cmd := testpeer.Command(caddyBinary, append([]string{"davspaces"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(run.dir, "xdg-data"), "XDG_CONFIG_HOME="+filepath.Join(run.dir, "xdg-config"))
	cmd.Env = append(cmd.Env, run.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return out.String(), exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), 0
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("caddy davspaces %v did not end\n%s", args, out.String())
		return "", 0
	}
}

// checkLine is a problem line a check is expected to print.
type checkLine struct {
	kind, path string
	repaired   bool
}

// problemLine is a line of a check's report: kind, space, path, repaired.
var problemLine = regexp.MustCompile(`^([a-z]+(?:-[a-z]+)*)(?: ([^:\s]+)(?::/(\S*))?)?: .*?( \(repaired\))?$`)

// wantCheckLines fails unless the problem lines of out are want, in any
// order, all in one space (or none, for an orphan), and returns that
// space.
func wantCheckLines(t *testing.T, out string, want []checkLine) string {
	t.Helper()
	var got []checkLine
	space := ""
	for _, line := range strings.Split(out, "\n") {
		m := problemLine.FindStringSubmatch(line)
		if m == nil || m[1] == "check" { // the summary
			continue
		}
		got = append(got, checkLine{kind: m[1], path: m[3], repaired: m[4] != ""})
		switch {
		case m[2] == "" && m[3] == "":
		case space == "":
			space = m[2]
		case m[2] != space:
			t.Errorf("problems in two spaces: %s and %s", space, m[2])
		}
	}
	for _, w := range want {
		found := false
		for i, g := range got {
			if g == w {
				got = append(got[:i], got[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no line %+v in:\n%s", w, out)
		}
	}
	for _, g := range got {
		t.Errorf("unexpected problem %+v in:\n%s", g, out)
	}
	return space
}

func writeStoreFile(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
}

// storeContentFile finds the content file holding content in the store's
// blobs directory.
func storeContentFile(t *testing.T, root string, content []byte) string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(filepath.Join(root, "blobs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, content) {
			found = append(found, path)
		}
		return nil
	})
	if err != nil || len(found) != 1 {
		t.Fatalf("content files holding the %d bytes: %v (%v)", len(content), found, err)
	}
	return found[0]
}

// damageFolderSize adds delta to the size in the record of the folder
// called name, writing the database file directly as damage would: a
// node record is a format and a kind byte, three length-prefixed strings
// (id, parent, name; format 2 had the space after the id), then the size
// as a varint.
func damageFolderSize(t *testing.T, dbPath, name string, delta int64) {
	t.Helper()
	db, err := bolt.Open(dbPath, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		tree := tx.Bucket([]byte("tree"))
		var key, value []byte
		tree.ForEach(func(k, v []byte) error {
			if bytes.HasSuffix(k, []byte("/"+name)) {
				key, value = bytes.Clone(k), bytes.Clone(v)
			}
			return nil
		})
		if key == nil {
			return fmt.Errorf("no record of %q", name)
		}
		off, fields := 2, 3
		if value[0] == 2 {
			fields = 4
		}
		for i := 0; i < fields; i++ {
			n, w := binary.Uvarint(value[off:])
			off += w + int(n)
		}
		size, w := binary.Varint(value[off:])
		changed := binary.AppendVarint(bytes.Clone(value[:off]), size+delta)
		return tree.Put(key, append(changed, value[off+w:]...))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkFindsTheDamage runs check, then check --repair, on the store of
// config, damaged as both deployments' tests damage it: a missing content,
// an orphan, a wrong folder size and a session without its bytes. Both
// exit 1 (the missing content cannot be repaired); it returns the space
// the problems name.
func checkFindsTheDamage(t *testing.T, run caddyRun, config string) string {
	t.Helper()
	out, code := runCaddyDavspaces(t, run, "check", "--config", config)
	if code != 1 {
		t.Fatalf("check of a damaged store: exit %d\n%s", code, out)
	}
	space := wantCheckLines(t, out, []checkLine{
		{kind: "missing-content", path: "docs/a.bin"},
		{kind: "orphan-content", path: ""},
		{kind: "folder-size", path: "docs/sub"},
		{kind: "dangling", path: "docs/tus.bin"},
	})
	t.Logf("check of the damaged store:\n%s", out)
	if !strings.Contains(out, "4 problems, 0 repaired") {
		t.Errorf("summary of the check:\n%s", out)
	}

	out, code = runCaddyDavspaces(t, run, "check", "--repair", "--config", config)
	if code != 1 {
		t.Fatalf("check --repair with missing content: exit %d, want 1\n%s", code, out)
	}
	wantCheckLines(t, out, []checkLine{
		{kind: "missing-content", path: "docs/a.bin"},
		{kind: "orphan-content", path: "", repaired: true},
		{kind: "folder-size", path: "docs/sub", repaired: true},
		{kind: "dangling", path: "docs/tus.bin", repaired: true},
	})
	t.Logf("check --repair:\n%s", out)
	return space
}
