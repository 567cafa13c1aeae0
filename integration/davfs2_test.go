package integration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// davfs2Files is how many files the copied folder holds: davfs2 locks
// each new file until its delayed upload, so a copy holds about as many
// locks at once (the old cap of 128 per user stopped it at the 129th).
const davfs2Files = 1000

// TestDavfs2CopiesAFolderInAndOut mounts the personal space with Debian's
// davfs2 (FUSE, use_locks 1 as by default) on the server's default
// settings, copies a folder of 1,000 small files in with cp -r and
// unmounts, which flushes davfs2's delayed uploads; every file is then
// on the server byte for byte. Mounted again with a fresh cache, the
// folder is copied out byte for byte.
func TestDavfs2CopiesAFolderInAndOut(t *testing.T) {
	t.Parallel()
	mountDavfs := requirePeer(t, "mount.davfs")
	requireRootAndFUSE(t)
	s := startServer(t, serverOptions{})
	work := davfs2WorkDir(t)
	src := filepath.Join(work, "src", "folder")
	want := writeSmallFiles(t, src, davfs2Files)

	mnt := mountDavfs2(t, mountDavfs, s.URL+"/webdav/", work, "in")
	start := time.Now()
	runTool(t, 10*time.Minute, "cp", "-r", src, mnt+"/")
	copied := time.Since(start)
	unmountDavfs2(t, mnt)
	t.Logf("cp -r of %d files into the mount: %v; unmounted (uploads flushed) after %v", davfs2Files, copied.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))

	c := newClient(t, s.URL, "einstein")
	for name, content := range want {
		resp, body := c.send("GET", "/webdav/folder/"+name, nil, nil)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, content) {
			t.Fatalf("GET /webdav/folder/%s: %d, %d bytes; want the %d bytes copied in", name, resp.StatusCode, len(body), len(content))
		}
	}

	mnt = mountDavfs2(t, mountDavfs, s.URL+"/webdav/", work, "out")
	copyOutAndCompare(t, mnt, filepath.Join(work, "out"), want)
}

// copyOutAndCompare copies folder out of the fresh mount mnt, unmounts it
// and fails the test unless the copy holds exactly want, byte for byte.
func copyOutAndCompare(t *testing.T, mnt, out string, want map[string][]byte) {
	t.Helper()
	runTool(t, 10*time.Minute, "cp", "-r", filepath.Join(mnt, "folder"), out)
	unmountDavfs2(t, mnt)
	got := readFiles(t, out)
	if len(got) != len(want) {
		t.Fatalf("copied out %d files, want %d", len(got), len(want))
	}
	for name, content := range want {
		if !bytes.Equal(got[name], content) {
			t.Fatalf("%s copied out as %d bytes, want the %d copied in", name, len(got[name]), len(content))
		}
	}
}

// requireRootAndFUSE skips the test, or fails it under CI=true, unless it
// can mount a FUSE file system: as root, with /dev/fuse.
func requireRootAndFUSE(t *testing.T) {
	t.Helper()
	var why string
	if os.Geteuid() != 0 {
		why = "mount.davfs mounts for root only here (davfs2 is installed without setuid)"
	} else if _, err := os.Stat("/dev/fuse"); err != nil {
		why = "no /dev/fuse: " + err.Error()
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// davfs2WorkDir is a folder for the mount points, caches and files of the
// test that davfs2's daemon, which drops root for its own user, can reach
// (a test's TempDir is root's alone).
func davfs2WorkDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "davspaces-davfs2-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// mountDavfs2 mounts url as einstein on a new mount point in work, with a
// configuration and cache of its own (name tells them apart), and returns
// the mount point. It is unmounted at the end of the test, before work is
// removed: a removal through the mount would delete on the server.
func mountDavfs2(t *testing.T, mountDavfs, url, work, name string) string {
	t.Helper()
	return mountDavfs2As(t, mountDavfs, url, work, name, davfs2Login{user: "einstein", password: users["einstein"]})
}

// davfs2Login is whom davfs2 mounts as, and the root certificate to trust
// for an https URL (a file in work: the daemon reads it as its own user).
type davfs2Login struct {
	user, password string
	caCert         string
}

// mountDavfs2As is mountDavfs2 with a login of its own.
func mountDavfs2As(t *testing.T, mountDavfs, url, work, name string, login davfs2Login) string {
	t.Helper()
	mnt := filepath.Join(work, "mnt-"+name)
	cache := filepath.Join(work, "cache-"+name)
	for _, d := range []string{mnt, cache} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The daemon checks and writes its cache without root's rights.
	if err := os.Chmod(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	secrets := filepath.Join(work, "secrets-"+name)
	writeFile(t, secrets, fmt.Sprintf("%s %s %s\n", url, login.user, login.password))
	if err := os.Chmod(secrets, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(work, "davfs2-"+name+".conf")
	settings := []string{
		"secrets " + secrets,
		"cache_dir " + cache,
		"ask_auth 0",
		"use_locks 1",
		// davfs2 1.6.1 answers the kernel's FUSE requests from a buffer
		// of 16 KiB by default, less than a recent kernel asks a folder's
		// listing for: every listing fails with EINVAL, whatever the
		// server (rclone's too).
		"buf_size 64",
	}
	if login.caCert != "" {
		settings = append(settings, "trust_ca_cert "+login.caCert)
	}
	writeFile(t, conf, strings.Join(settings, "\n")+"\n")
	runTool(t, time.Minute, mountDavfs, url, mnt, "-o", "conf="+conf)
	t.Cleanup(func() {
		if isMounted(mnt) {
			testpeer.Command("umount", mnt).Run()
		}
	})
	return mnt
}

// unmountDavfs2 unmounts mnt; umount.davfs waits for the daemon, which
// uploads what it has not yet before it ends.
func unmountDavfs2(t *testing.T, mnt string) {
	t.Helper()
	runTool(t, 10*time.Minute, "umount", mnt)
	if isMounted(mnt) {
		t.Fatalf("%s is still mounted", mnt)
	}
}

// isMounted reports whether a file system is mounted on dir.
func isMounted(dir string) bool {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == dir {
			return true
		}
	}
	return false
}

// runTool runs a command, which must succeed within timeout.
func runTool(t *testing.T, timeout time.Duration, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := testpeer.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, tail(string(out), 4000))
	}
}

// writeSmallFiles writes n files of up to 4 KiB of random bytes (some
// empty) into the new folder dir and returns their contents by name.
func writeSmallFiles(t *testing.T, dir string, n int) map[string][]byte {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(31, 6))
	files := make(map[string][]byte, n)
	for i := range n {
		content := make([]byte, rng.IntN(4<<10))
		for j := range content {
			content[j] = byte(rng.Uint32())
		}
		name := fmt.Sprintf("file %04d.bin", i)
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
		files[name] = content
	}
	return files
}

// readFiles returns the contents of the files in dir by name.
func readFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := make(map[string][]byte, len(entries))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}
