package integration

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"testing"
)

// The resumable uploads in flight when Caddy is killed, TUS and chunking
// NG, send their content in chunks of this size; they are never finished
// before the kill.
const (
	resumableChunks = 8
	resumableChunk  = 512 << 10
)

// pace sends the middle chunks of a resumable upload while the PUTs run
// (the first went before them, the last goes after the restart), in
// halves released evenly over the bytes the PUTs send before the kill.
// The last half never is: the last of these requests is cut off in the
// middle of its body when Caddy dies. send sends chunk k with the body
// given and says whether it was acknowledged.
func (cr *crash) pace(content stream, send func(k int, body io.Reader) bool) {
	const halves = 2 * (resumableChunks - 2)
	release := func(h int) int64 {
		if h == halves-1 {
			return neverReached
		}
		return cr.at * int64(h) / (halves - 1)
	}
	for k := 1; k < resumableChunks-1; k++ {
		h := 2 * (k - 1)
		if !cr.await(release(h)) {
			return
		}
		off, half := int64(k)*resumableChunk, int64(resumableChunk/2)
		body := io.MultiReader(content.section(off, half), gate{cr, release(h + 1)}, content.section(off+half, resumableChunk-half))
		if !send(k, body) {
			return
		}
	}
}

// tusRun is a TUS upload in flight when Caddy is killed.
type tusRun struct {
	content stream
	path    string // the upload URL's path

	mu     sync.Mutex
	acked  int64 // the Upload-Offset of the last PATCH acknowledged
	failed error // a failure the crash does not explain
}

// startTusRun creates a TUS upload of name in collection (escaped) and
// sends its first chunk.
func startTusRun(t testing.TB, c *client, collection, name string) *tusRun {
	t.Helper()
	content := newStream(t, resumableChunks*resumableChunk)
	resp, body, err := c.tusCreate(collection, name, content.size, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s: %d, want 201\n%s", collection, resp.StatusCode, body)
	}
	u := &tusRun{content: content, path: uploadPath(t, c.base, resp.Header.Get("Location"))}
	if err := u.patch(c, 0, resumableChunk, content.section(0, resumableChunk)); err != nil {
		t.Fatal(err)
	}
	return u
}

// patch sends n bytes at off and records the offset acknowledged.
func (u *tusRun) patch(c *client, off, n int64, body io.Reader) error {
	resp, err := c.sendStream(http.MethodPatch, u.path, map[string]string{
		"Tus-Resumable": tusResumable,
		"Upload-Offset": strconv.FormatInt(off, 10),
		"Content-Type":  "application/offset+octet-stream",
	}, body, n)
	if err != nil {
		return err
	}
	b := drainAnswer(resp)
	want := strconv.FormatInt(off+n, 10)
	if got := resp.Header.Get("Upload-Offset"); resp.StatusCode != http.StatusNoContent || got != want {
		return fmt.Errorf("PATCH %s at %d: %d, Upload-Offset %q, want 204 and %s\n%s", u.path, off, resp.StatusCode, got, want, b)
	}
	u.mu.Lock()
	u.acked = off + n
	u.mu.Unlock()
	return nil
}

// duringCrash sends more chunks while the PUTs run, until Caddy is
// killed; the channel is closed when it has stopped.
func (u *tusRun) duringCrash(c *client, cr *crash) <-chan struct{} {
	return cr.sendUntilKilled(u.content, &u.mu, &u.failed, func(k int, body io.Reader) error {
		return u.patch(c, int64(k)*resumableChunk, resumableChunk, body)
	})
}

// resume checks the upload on the restarted server: HEAD reports the
// bytes acknowledged, and at most the chunk in flight more, and the file
// is not there yet; then it finishes the upload from that offset and
// checks the file, target (escaped).
func (u *tusRun) resume(t testing.TB, c *client, target string) {
	t.Helper()
	u.mu.Lock()
	acked, failed := u.acked, u.failed
	u.mu.Unlock()
	if failed != nil {
		t.Errorf("TUS upload before the kill: %v", failed)
	}
	off := wantOffset(t, c, u.path, u.content.size)
	t.Logf("TUS: %d bytes acknowledged before the kill, HEAD reports %d after the restart", acked, off)
	if off < acked || off > acked+resumableChunk || off >= u.content.size {
		t.Fatalf("HEAD %s after the restart: Upload-Offset %d, want from the %d bytes acknowledged to one chunk more", u.path, off, acked)
	}
	wantAbsent(t, c, target, "the unfinished TUS upload's file")
	for off < u.content.size {
		n := min(resumableChunk, u.content.size-off)
		if err := u.patch(c, off, n, u.content.section(off, n)); err != nil {
			t.Fatalf("finishing the TUS upload after the restart: %v", err)
		}
		off += n
	}
	wantContent(t, c, target, u.content.digest())
}

// ngRun is a chunking NG upload in flight when Caddy is killed.
type ngRun struct {
	content stream
	upload  string // the upload's folder

	mu     sync.Mutex
	acked  map[string]bool // the parts acknowledged, by name
	failed error           // a failure the crash does not explain
}

// ngPartName is the name of part k as Nextcloud names it.
func ngPartName(k int) string { return fmt.Sprintf("%05d", k+1) }

// startNGRun creates the NG upload transfer of user and sends its first
// part.
func startNGRun(t testing.TB, c *client, transfer string) *ngRun {
	t.Helper()
	u := &ngRun{content: newStream(t, resumableChunks*resumableChunk), upload: ngUpload(c.user, transfer), acked: map[string]bool{}}
	c.expect(http.StatusCreated, "MKCOL", u.upload, "")
	if err := u.putPart(c, 0, u.content.section(0, resumableChunk)); err != nil {
		t.Fatal(err)
	}
	return u
}

// putPart sends part k and records it once acknowledged.
func (u *ngRun) putPart(c *client, k int, body io.Reader) error {
	path := u.upload + "/" + ngPartName(k)
	resp, err := c.sendStream(http.MethodPut, path, nil, body, resumableChunk)
	if err != nil {
		return err
	}
	if b := drainAnswer(resp); resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("PUT %s: %d, want 201\n%s", path, resp.StatusCode, b)
	}
	u.mu.Lock()
	u.acked[ngPartName(k)] = true
	u.mu.Unlock()
	return nil
}

// duringCrash sends more parts while the PUTs run, until Caddy is killed;
// the channel is closed when it has stopped.
func (u *ngRun) duringCrash(c *client, cr *crash) <-chan struct{} {
	return cr.sendUntilKilled(u.content, &u.mu, &u.failed, func(k int, body io.Reader) error {
		return u.putPart(c, k, body)
	})
}

// sendUntilKilled paces send over the chunks of content on a goroutine
// until Caddy is killed, keeping in *failed (under mu) an error the kill
// does not explain; the channel is closed when it has stopped.
func (cr *crash) sendUntilKilled(content stream, mu *sync.Mutex, failed *error, send func(k int, body io.Reader) error) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		cr.pace(content, func(k int, body io.Reader) bool {
			err := send(k, body)
			if err != nil && !cr.expected(err) {
				mu.Lock()
				*failed = err
				mu.Unlock()
			}
			return err == nil
		})
	}()
	return done
}

// resume checks the upload on the restarted server: PROPFIND lists every
// part acknowledged, and no part but whole ones, and the file is not there
// yet; then it sends the parts not acknowledged, assembles the file at
// target (escaped, below /remote.php/dav/files/{user}/) and checks it
// through alias, its path below /webdav/.
func (u *ngRun) resume(t testing.TB, c *client, target, alias string) {
	t.Helper()
	u.mu.Lock()
	acked, failed := maps.Clone(u.acked), u.failed
	u.mu.Unlock()
	if failed != nil {
		t.Errorf("NG upload before the kill: %v", failed)
	}
	listed := u.listParts(c)
	t.Logf("NG: %d parts acknowledged before the kill, %d listed after the restart", len(acked), len(listed))
	for name, size := range listed {
		if size != strconv.Itoa(resumableChunk) {
			t.Errorf("PROPFIND %s after the restart lists part %s with %s bytes, want only whole parts (%d bytes)", u.upload, name, size, resumableChunk)
		}
	}
	for name := range acked {
		if _, ok := listed[name]; !ok {
			t.Errorf("part %s of %s was acknowledged before the kill, PROPFIND does not list it after the restart", name, u.upload)
		}
	}
	wantAbsent(t, c, alias, "the unfinished NG upload's file")
	for k := range resumableChunks {
		if acked[ngPartName(k)] {
			continue
		}
		off := int64(k) * resumableChunk
		if err := u.putPart(c, k, u.content.section(off, resumableChunk)); err != nil {
			t.Fatalf("finishing the NG upload after the restart: %v", err)
		}
	}
	d := u.content.digest()
	c.expect(http.StatusCreated, "MOVE", u.upload+"/.file", "",
		"Destination", c.base+target, "OC-Total-Length", strconv.FormatInt(d.size, 10), "OC-Checksum", "SHA1:"+d.sha1)
	wantContent(t, c, alias, d)
}

// listParts is the size of every part the upload lists, by name.
func (u *ngRun) listParts(c *client) map[string]string {
	c.t.Helper()
	parts := map[string]string{}
	for _, r := range c.propfind(u.upload+"/", "1", "") {
		// The folder's own href ends in /.
		if name := pathBase(r.href); name != "" {
			parts[name] = r.props["DAV: getcontentlength"]
		}
	}
	return parts
}
