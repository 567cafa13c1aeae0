package integration

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash/adler32"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Crashes while the store is busy with a big content: kill -9 while the
// background digester hashes a file a PUT committed, and while a chunking
// NG assembly runs. Either way nothing acknowledged is lost, no half
// content is ever served, the digests end up right, and `caddy davspaces
// check --deep` finds nothing to repair.

// crashRun is a Caddy on Caddyfile.example that a test kills and starts
// again on the same data directory, and checks with its Caddyfile.
type crashRun struct {
	run caddyRun
	s   *server
}

func startCrashRun(t *testing.T, opts serverOptions) *crashRun {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	run := caddyRun{dir: dir, config: exampleCaddyfile(t, port, filepath.Join(dir, "data"), opts), url: fmt.Sprintf("http://127.0.0.1:%d", port)}
	return &crashRun{run: run, s: run.start(t)}
}

func (r *crashRun) client(t *testing.T) *client {
	c := newClient(t, r.s.URL, "einstein")
	c.http.Timeout = 2 * time.Minute
	return c
}

// restart kills Caddy as a crash would and starts it again.
func (r *crashRun) restart(t *testing.T) {
	t.Helper()
	r.s.kill()
	r.s = r.run.start(t)
}

// checkDeep stops Caddy and runs `caddy davspaces check --deep` on its
// Caddyfile, which must find no problem.
func (r *crashRun) checkDeep(t *testing.T) {
	t.Helper()
	r.s.stop()
	out, code := runCaddyDavspaces(t, r.run, "check", "--deep", "--config", filepath.Join(r.run.dir, "Caddyfile"))
	if code != 0 || !strings.Contains(out, "0 problems") {
		t.Errorf("check --deep after the crash: exit %d\n%s", code, out)
	}
}

// log is what Caddy logged so far, across restarts.
func (r *crashRun) log(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.run.dir, "caddy.log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// allDigests are the digests oc:checksums promises, of a stream, computed
// by the test with the standard library's hashes in one pass.
type allDigests struct {
	content      digest // size and SHA1, as GET gives them back
	md5, adler32 string
}

func digestsOf(t *testing.T, s stream) allDigests {
	t.Helper()
	s1, m5, a32 := sha1.New(), md5.New(), adler32.New()
	n, err := io.Copy(io.MultiWriter(s1, m5, a32), s.section(0, s.size))
	if err != nil {
		t.Fatal(err)
	}
	return allDigests{content: digest{size: n, sha1: hex.EncodeToString(s1.Sum(nil))}, md5: hex.EncodeToString(m5.Sum(nil)), adler32: hex.EncodeToString(a32.Sum(nil))}
}

// ocChecksums is the oc:checksums value of d.
func (d allDigests) ocChecksums() string {
	return "SHA1:" + d.content.sha1 + " MD5:" + d.md5 + " ADLER32:" + d.adler32
}

// waitDigests waits until oc:checksums of path gives every digest of d:
// each PROPFIND waits up to 5 s for the digester, a big file after a
// restart may take longer.
func waitDigests(t *testing.T, c *client, path string, d allDigests) {
	t.Helper()
	want := "<oc:checksum>" + d.ocChecksums() + "</oc:checksum>"
	var got string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if got = c.prop(path, ocNS, "checksums"); got == want {
			return
		}
		if strings.Count(got, ":") == 3 {
			break // all three known, and one wrong
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("oc:checksums of %s = %q, want %q", path, got, want)
}

// TestDigestsKill9WhileHashing: Caddy killed right after a 512 MiB PUT is
// answered, while the digester has the digests the PUT left for later
// still to compute (GET's OC-Checksum still names the announced MD5, not
// SHA1): after the restart the file reads back whole, the digester
// computes its digests again, each is the one Go's hashes give, and the
// deep check passes.
func TestDigestsKill9WhileHashing(t *testing.T) {
	t.Parallel()
	r := startCrashRun(t, serverOptions{boltStore: []string{"digest_workers 1"}})
	c := r.client(t)
	content := newStream(t, 512<<20)
	want := digestsOf(t, content)
	const path = "/webdav/big.bin"
	resp, err := c.sendStream(http.MethodPut, path, map[string]string{"OC-Checksum": "MD5:" + want.md5}, content.section(0, content.size), content.size)
	if err != nil {
		t.Fatal(err)
	}
	if body := drainAnswer(resp); resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT %s: %d\n%s", path, resp.StatusCode, body)
	}
	head, _ := c.do(http.MethodHead, path, "")
	if got := head.Header.Get("OC-Checksum"); got != "MD5:"+want.md5 {
		t.Fatalf("HEAD right after the PUT: OC-Checksum %q, want the announced MD5 only: the digester is done before the kill", got)
	}
	r.restart(t)
	c = r.client(t)

	wantContent(t, c, path, want.content)
	waitDigests(t, c, path, want)
	if !strings.Contains(r.log(t), "computing the digests a restart left missing") {
		t.Error("the restart did not compute digests the kill left missing")
	}
	r.checkDeep(t)
}

// TestChunkNGKill9DuringAssembly: Caddy killed while the MOVE of a
// chunking NG upload of 320 MiB assembles it over an older file (once the
// upload is claimed; right after the MOVE's answer when the assembly is
// quicker than the test can tell): after
// the restart the file is the old content or the new one, whole, never a
// part; its digests are right; a client that retries the MOVE, or the
// whole upload when the MOVE is gone, ends with the new content; and the
// deep check finds no orphaned or half-made content.
func TestChunkNGKill9DuringAssembly(t *testing.T) {
	t.Parallel()
	r := startCrashRun(t, serverOptions{})
	c := r.client(t)
	const path = "/webdav/ng.bin"
	old, content := newStream(t, 3<<20+17), newStream(t, 320<<20)
	oldWant, want := digestsOf(t, old), digestsOf(t, content)
	resp, err := c.sendStream(http.MethodPut, path, nil, old.section(0, old.size), old.size)
	if err != nil {
		t.Fatal(err)
	}
	if body := drainAnswer(resp); resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT the old content: %d\n%s", resp.StatusCode, body)
	}
	dest := r.s.URL + "/remote.php/dav/files/einstein/ng.bin"
	upload := putNGParts(t, c, content, dest)

	moved := make(chan string, 1)
	go func() { moved <- tryNGMove(c, upload, dest, content.size, "") }()
	claimed, answer := waitClaimed(t, c, upload, moved)
	r.restart(t)
	if claimed {
		answer = <-moved
	}
	t.Logf("killed with the upload claimed: %t; the MOVE's answer: %s", claimed, answer)
	c = r.client(t)

	got, ok, err := c.getDigest(path)
	committed := false
	switch {
	case err != nil:
		t.Fatal(err)
	case !ok:
		t.Fatalf("GET %s after the restart: 404, want the old content or the new one", path)
	case got == oldWant.content:
		t.Log("the kill came before the assembly's commit: the old content")
		waitDigests(t, c, path, oldWant)
	case got == want.content:
		t.Log("the kill came after the assembly's commit: the new content")
		committed = true
		waitDigests(t, c, path, want)
	default:
		t.Fatalf("GET %s after the restart: %v; want the old content (%v) or the new one (%v)", path, got, oldWant.content, want.content)
	}

	// The client retries the MOVE: an assembly the kill ended left its
	// parts, which the retry assembles; an upload already assembled is
	// gone, and the client sends it again.
	if answer := tryNGMove(c, upload, dest, content.size, ""); !strings.HasPrefix(answer, "204 ") {
		if !committed {
			t.Fatalf("the MOVE retried after an assembly the kill ended: %s, want 204", answer)
		}
		t.Logf("the MOVE retried after the restart: %s; the upload again", answer)
		upload = putNGParts(t, c, content, dest)
		if answer := tryNGMove(c, upload, dest, content.size, ""); !strings.HasPrefix(answer, "204 ") {
			t.Fatalf("the MOVE of the upload sent again: %s, want 204", answer)
		}
	}
	c.wantGone(upload)
	wantContent(t, c, path, want.content)
	waitDigests(t, c, path, want)
	r.checkDeep(t)
}

// putNGParts creates a chunking NG upload for dest and sends content in
// parts of 32 MiB, as Nextcloud's desktop client names them.
func putNGParts(t *testing.T, c *client, content stream, dest string) string {
	t.Helper()
	const part = 32 << 20
	upload := ngUpload(c.user, "crash-"+uuid.NewString())
	header := map[string]string{"Destination": dest, "OC-Total-Length": strconv.FormatInt(content.size, 10)}
	if resp, body := c.send("MKCOL", upload, header, nil); resp.StatusCode != http.StatusCreated {
		t.Fatalf("MKCOL %s: %d, want 201\n%s", upload, resp.StatusCode, body)
	}
	for k, off := 0, int64(0); off < content.size; k, off = k+1, off+part {
		n := min(part, content.size-off)
		resp, err := c.sendStream(http.MethodPut, upload+"/"+ngPartName(k), header, content.section(off, n), n)
		if err != nil {
			t.Fatal(err)
		}
		if body := drainAnswer(resp); resp.StatusCode != http.StatusCreated {
			t.Fatalf("PUT part %d: %d\n%s", k, resp.StatusCode, body)
		}
	}
	return upload
}

// waitClaimed waits until the assembly of upload has claimed it, as a
// DELETE of a part it does not have tells (409 once claimed, 404 before
// and after), or until the MOVE answers on moved first: claimed says
// which, answer is the MOVE's answer in the second case.
func waitClaimed(t *testing.T, c *client, upload string, moved <-chan string) (claimed bool, answer string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case answer := <-moved:
			return false, answer
		default:
		}
		resp, body, err := c.try(http.MethodDelete, upload+"/99999", nil, nil)
		switch {
		case err != nil:
			t.Fatal(err)
		case resp.StatusCode == http.StatusConflict:
			return true, ""
		case resp.StatusCode != http.StatusNotFound:
			t.Fatalf("DELETE of a part the upload lacks: %d\n%s", resp.StatusCode, body)
		}
	}
	t.Fatal("the MOVE neither claimed the upload nor answered within 30 s")
	return false, ""
}

// tryNGMove sends the MOVE of upload's .file to dest, with checksum as
// its OC-Checksum as Nextcloud sends it (none when ""), and returns its
// status and the start of its body, or the error that ended it. It may
// run on a goroutine of its own.
func tryNGMove(c *client, upload, dest string, size int64, checksum string) string {
	req, err := http.NewRequest("MOVE", c.base+upload+"/.file", nil)
	if err != nil {
		return err.Error()
	}
	req.SetBasicAuth(c.user, users[c.user])
	req.Header.Set("Destination", dest)
	req.Header.Set("OC-Total-Length", strconv.FormatInt(size, 10))
	if checksum != "" {
		req.Header.Set("OC-Checksum", checksum)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(drainAnswer(resp)))
}
