package integration

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Chunked uploads on the cluster: a node killed while it assembles a
// chunking NG upload leaves nothing that holds up the client's retry on
// the other node, and nothing in the bucket once the sweep has run.
const (
	// clusterNGSize is large enough that the assembly of its parts takes
	// a while, so that the kill can fall within it.
	clusterNGSize = 5*32<<20 + 4321
	clusterNGPath = "/webdav/ng.bin"
	clusterNGDest = "/remote.php/dav/files/einstein/ng.bin"
	clusterQuota  = 1 << 30
	// clusterUploadGrace is the nodes' upload_grace: the multipart upload
	// of the object the killed node was writing is aborted by the sweep
	// that long after it started. Longer than any upload of the test on
	// a loaded machine, which the sweep would otherwise take for a
	// crashed one.
	clusterUploadGrace = 25 * time.Second
)

// TestClusterKillNodeDuringChunkedUpload sends the parts of a chunking NG
// upload to node A and kills node A while its MOVE assembles them (or
// right after its answer when the assembly is quicker than the test can
// tell). The client then does what Nextcloud's desktop client does at its
// next sync, through node B: it lists the upload and retries the MOVE, or
// sends the file again once the upload is gone. That ends with the file
// whole, with its SHA1 as sent, counted once in the space's size and
// quota; and once the sweep has run, `caddy davspaces check` finds no
// problem, no object waits for the sweep, and the multipart upload the
// kill cut short is aborted: the bucket holds exactly what rows name.
func TestClusterKillNodeDuringChunkedUpload(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOptions{
		davspaces: []string{fmt.Sprintf("personal_quota %d", clusterQuota)},
		postgresStore: []string{
			"object_grace 1s",
			"upload_grace " + clusterUploadGrace.String(),
			"sweep_interval 1s",
		},
	})
	a, b := newDurabilityClient(t, c.nodes[0].URL), newDurabilityClient(t, c.nodes[1].URL)
	a.http.Timeout, b.http.Timeout = 2*time.Minute, 2*time.Minute
	content := newStream(t, clusterNGSize)
	want := digestsOf(t, content)
	checksum := "SHA1:" + want.content.sha1

	upload := putNGParts(t, a, content, c.nodes[0].URL+clusterNGDest)
	moved := make(chan string, 1)
	go func() { moved <- moveNGFile(a, upload, c.nodes[0].URL+clusterNGDest, content.size, checksum) }()
	claimed, answer := waitClaimed(t, a, upload, moved)
	c.nodes[0].kill()
	if claimed {
		answer = <-moved
	}
	t.Logf("node A killed with the upload claimed: %t; its MOVE's answer: %s", claimed, answer)
	pending := pendingObjects(t, c)
	t.Logf("after the kill, %d objects wait for the sweep; unfinished multipart uploads: %q", len(pending), unfinishedUploads(t, c, pending))

	if !strings.HasPrefix(answer, "201 ") {
		retryNGUpload(t, b, upload, c.nodes[1].URL+clusterNGDest, content, checksum)
	}
	b.wantGone(upload)
	wantContent(t, b, clusterNGPath, want.content)
	if got := b.prop(clusterNGPath, ocNS, "checksums"); !strings.Contains(got, checksum) {
		t.Errorf("oc:checksums of %s = %q, want the %s sent", clusterNGPath, got, checksum)
	}
	if got := b.prop("/webdav/", ocNS, "size"); got != strconv.FormatInt(content.size, 10) {
		t.Errorf("/webdav/ oc:size %s, want the file's %d bytes once", got, content.size)
	}
	if got := b.prop("/webdav/", "DAV:", "quota-available-bytes"); got != strconv.FormatInt(clusterQuota-content.size, 10) {
		t.Errorf("quota-available-bytes %s, want the quota less the file once, %d", got, clusterQuota-content.size)
	}

	waitSweptClean(t, c)
	if left := unfinishedUploads(t, c, pending); len(left) > 0 {
		t.Errorf("multipart uploads left unfinished after the sweep: %q", left)
	}
	out, code := runCaddyDavspaces(t, c.nodes[1].run, "check", "--config", filepath.Join(c.nodes[1].run.dir, "Caddyfile"))
	if code != 0 || !strings.Contains(out, "0 problems") {
		t.Errorf("check after the kill: exit %d\n%s", code, out)
	}
}

// moveNGFile is tryNGMove with the OC-Checksum Nextcloud sends.
func moveNGFile(c *client, upload, dest string, size int64, checksum string) string {
	req, err := http.NewRequest("MOVE", c.base+upload+"/.file", nil)
	if err != nil {
		return err.Error()
	}
	req.SetBasicAuth(c.user, users[c.user])
	req.Header.Set("Destination", dest)
	req.Header.Set("OC-Total-Length", strconv.FormatInt(size, 10))
	req.Header.Set("OC-Checksum", checksum)
	resp, err := c.http.Do(req)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(drainAnswer(resp)))
}

// ngRetryFor bounds how long the client's syncs retry a MOVE the server
// refuses as still being assembled: a claim of a dead node must lapse
// well within it.
const ngRetryFor = 30 * time.Second

// retryNGUpload is what Nextcloud's desktop client does at its next sync
// after a MOVE that failed (propagateuploadng.cpp): it lists the upload;
// when the upload still has its parts it sends the MOVE again (each sync
// anew, while the server answers 409), and when the upload is gone it
// sends the file again under a new transfer id.
func retryNGUpload(t *testing.T, c *client, upload, dest string, content stream, checksum string) {
	t.Helper()
	start := time.Now()
	for {
		resp, body := c.do("PROPFIND", upload+"/", "", "Depth", "1")
		if resp.StatusCode == http.StatusNotFound {
			t.Logf("the upload is gone after %v: the client sends the file again", time.Since(start).Round(time.Millisecond))
			upload = putNGParts(t, c, content, dest)
		} else if resp.StatusCode != http.StatusMultiStatus {
			t.Fatalf("PROPFIND of the upload %s: %d, want 207 or 404\n%s", upload, resp.StatusCode, tail(body, 500))
		}
		answer := moveNGFile(c, upload, dest, content.size, checksum)
		switch {
		case strings.HasPrefix(answer, "201 "), strings.HasPrefix(answer, "204 "):
			t.Logf("the retried MOVE succeeded after %v: %s", time.Since(start).Round(time.Millisecond), answer[:3])
			return
		case !strings.HasPrefix(answer, "409 "):
			t.Fatalf("the retried MOVE: %s, want 201, 204 or 409 while being assembled", answer)
		case time.Since(start) > ngRetryFor:
			t.Fatalf("the retried MOVE is still refused after %v: %s", ngRetryFor, answer)
		}
		time.Sleep(time.Second)
	}
}

// pendingObjects are the keys of the objects that wait for the sweep:
// written by a node, or released by one.
func pendingObjects(t *testing.T, c *cluster) []string {
	t.Helper()
	db := connectClusterDB(t, c)
	rows, err := db.Query(t.Context(), `SELECT key FROM object_sweep ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// waitSweptClean waits until no object waits for the sweep any more: the
// objects the nodes released are deleted, and the object node A was
// writing when it died is taken for the orphan it is.
func waitSweptClean(t *testing.T, c *cluster) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(clusterUploadGrace + 20*time.Second); time.Now().Before(deadline); {
		if left = pendingObjects(t, c); len(left) == 0 {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("objects still wait for the sweep: %q", left)
}

// unfinishedUploads describes the multipart uploads of keys left
// unfinished in the bucket, where their parts take room unseen. MinIO
// lists the uploads of one exact key only, so each key is asked for.
func unfinishedUploads(t *testing.T, c *cluster, keys []string) []string {
	t.Helper()
	bucket := openClusterBucket(t, c)
	var found []string
	for _, key := range keys {
		for u := range bucket.ListIncompleteUploads(t.Context(), c.bucket.Bucket, key, false) {
			if u.Err != nil {
				t.Fatalf("listing the multipart uploads of %s: %v", key, u.Err)
			}
			if u.Key == key {
				found = append(found, fmt.Sprintf("%s (started %v)", key, u.Initiated))
			}
		}
	}
	return found
}
