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
// chunked upload leaves nothing that holds up the client's retry on the
// other node, and nothing in the bucket once the sweep has run.
const (
	// clusterChunkedSize is large enough that the assembly of its parts
	// takes a while, so that the kill can fall within it.
	clusterChunkedSize = 5*clusterChunkSize + 4321
	clusterChunkSize   = 32 << 20
	clusterQuota       = 1 << 30
	// clusterUploadGrace is the nodes' upload_grace: the multipart upload
	// of the object the killed node was writing is aborted by the sweep
	// that long after it started. Longer than any upload of the test on
	// a loaded machine, which the sweep would otherwise take for a
	// crashed one.
	clusterUploadGrace = 25 * time.Second
)

// chunkedClient is a client's way of uploading a file in parts: send
// them, then the request that has the server assemble them, and after
// that request failed, what the client does at its next sync.
type chunkedClient interface {
	// path is where the file lands, below /webdav/.
	path() string
	// sendParts sends all but the request that assembles the file.
	sendParts(t *testing.T, c *client, content stream)
	// assemble sends that request and returns its status and the start of
	// its body, or the error that ended it; it runs on a goroutine of its
	// own.
	assemble(c *client, content stream) string
	// assembled reports whether an answer of assemble ends the upload.
	assembled(answer string) bool
	// retry is the client's next sync after assemble failed: it ends when
	// the file is assembled.
	retry(t *testing.T, c *client, content stream)
}

// TestClusterKillNodeDuringChunkedUpload sends the parts of a chunked
// upload to node A and kills node A while it assembles them (or right
// after its answer when the assembly is quicker than the test can tell),
// for chunking NG as Nextcloud's desktop client sends it and for v1
// chunks as older ownCloud clients do. The client then does at its next
// sync, through node B, what it does after a failed assembly. That ends
// with the file whole, with its SHA1 as sent, counted once in the space's
// size and quota, and no chunked upload left; and once the sweep has run,
// `caddy davspaces check` finds no problem, no object waits for the
// sweep, and the multipart upload the kill cut short is aborted: the
// bucket holds exactly what rows name.
func TestClusterKillNodeDuringChunkedUpload(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		up   chunkedClient
	}{{"NG", &ngClient{}}, {"v1", &v1Client{}}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			killDuringAssembly(t, tt.up)
		})
	}
}

func killDuringAssembly(t *testing.T, up chunkedClient) {
	c := startCluster(t, clusterOptions{
		davspaces: []string{fmt.Sprintf("personal_quota %d", clusterQuota)},
		postgresStore: []string{
			"object_grace 1s",
			"upload_grace " + clusterUploadGrace.String(),
			"sweep_interval 1s",
		},
	})
	db := connectClusterDB(t, c)
	a, b := newDurabilityClient(t, c.nodes[0].URL), newDurabilityClient(t, c.nodes[1].URL)
	a.http.Timeout, b.http.Timeout = 2*time.Minute, 2*time.Minute
	content := newStream(t, clusterChunkedSize)
	want := digestsOf(t, content)

	up.sendParts(t, a, content)
	answered := make(chan string, 1)
	go func() { answered <- up.assemble(a, content) }()
	claimed, answer := waitAssembling(t, c, answered)
	c.nodes[0].kill()
	if claimed {
		answer = <-answered
	}
	t.Logf("node A killed with the upload claimed: %t; the answer: %.60s", claimed, answer)
	pending := pendingObjects(t, c)
	t.Logf("after the kill, %d objects wait for the sweep; unfinished multipart uploads: %q", len(pending), unfinishedUploads(t, c, pending))

	if !up.assembled(answer) {
		up.retry(t, b, content)
	}
	if n := sqlString(t, db, `SELECT count(*)::text FROM chunked_uploads WHERE claimed`); n != "0" {
		t.Errorf("%s chunked uploads are left claimed", n)
	}
	path := up.path()
	wantContent(t, b, path, want.content)
	if got, sum := b.prop(path, ocNS, "checksums"), "SHA1:"+want.content.sha1; !strings.Contains(got, sum) {
		t.Errorf("oc:checksums of %s = %q, want the %s sent", path, got, sum)
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

// waitAssembling waits until a node assembles the cluster's chunked
// upload (it has claimed the upload and started writing the file's
// object) and then a little longer, so that the object's multipart upload
// is under way; or until the assembling request answers on answered
// first. claimed says which, answer is the answer in the second case.
func waitAssembling(t *testing.T, c *cluster, answered <-chan string) (claimed bool, answer string) {
	t.Helper()
	const (
		assembling = `SELECT (EXISTS (SELECT 1 FROM chunked_uploads WHERE claimed)
			AND EXISTS (SELECT 1 FROM object_sweep WHERE written))::text`
		intoTheCopy = 300 * time.Millisecond
	)
	db := connectClusterDB(t, c)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		select {
		case answer := <-answered:
			return false, answer
		default:
		}
		if sqlString(t, db, assembling) == "true" {
			select {
			case answer := <-answered:
				return false, answer
			case <-time.After(intoTheCopy):
				return true, ""
			}
		}
	}
	t.Fatal("the upload was neither assembled nor answered within a minute")
	return false, ""
}

// ngClient is Nextcloud's desktop client (chunking NG).
type ngClient struct {
	upload, checksum string
}

const ngDest = "/remote.php/dav/files/einstein/ng.bin"

func (*ngClient) path() string { return "/webdav/ng.bin" }

func (n *ngClient) sendParts(t *testing.T, c *client, content stream) {
	n.upload, n.checksum = putNGParts(t, c, content, c.base+ngDest), "SHA1:"+content.digest().sha1
}

func (n *ngClient) assemble(c *client, content stream) string {
	return tryNGMove(c, n.upload, c.base+ngDest, content.size, n.checksum)
}

func (*ngClient) assembled(answer string) bool { return strings.HasPrefix(answer, "201 ") }

// chunkedRetryFor bounds how long the client's syncs retry an assembly the
// server refuses as still being assembled: a claim of a dead node must
// lapse well within it.
const chunkedRetryFor = 40 * time.Second

// retry is what Nextcloud's desktop client does at its next sync after a
// MOVE that failed (propagateuploadng.cpp): it lists the upload; when the
// upload still has its parts it sends the MOVE again (each sync anew,
// while the server answers 409), and when the upload is gone it sends the
// file again under a new transfer id.
func (n *ngClient) retry(t *testing.T, c *client, content stream) {
	t.Helper()
	start := time.Now()
	for {
		resp, body := c.do("PROPFIND", n.upload+"/", "", "Depth", "1")
		if resp.StatusCode == http.StatusNotFound {
			t.Logf("the upload is gone after %v: the client sends the file again", time.Since(start).Round(time.Millisecond))
			n.sendParts(t, c, content)
		} else if resp.StatusCode != http.StatusMultiStatus {
			t.Fatalf("PROPFIND of the upload %s: %d, want 207 or 404\n%s", n.upload, resp.StatusCode, tail(body, 500))
		}
		answer := n.assemble(c, content)
		switch {
		case strings.HasPrefix(answer, "201 "), strings.HasPrefix(answer, "204 "):
			t.Logf("the retried MOVE succeeded after %v: %s", time.Since(start).Round(time.Millisecond), answer[:3])
			return
		case !strings.HasPrefix(answer, "409 "):
			t.Fatalf("the retried MOVE: %s, want 201, 204 or 409 while being assembled", answer)
		case time.Since(start) > chunkedRetryFor:
			t.Fatalf("the retried MOVE is still refused after %v: %s", chunkedRetryFor, answer)
		}
		time.Sleep(time.Second)
	}
}

// v1Client is an older ownCloud client (v1 chunks, OC-Chunked): the
// request that sends the last chunk assembles the file.
type v1Client struct {
	transfer int
	checksum string
}

func (*v1Client) path() string { return "/webdav/v1.bin" }

func (v *v1Client) count(content stream) int {
	return int((content.size + clusterChunkSize - 1) / clusterChunkSize)
}

// putChunk sends chunk i and returns the answer's status, ETag and the
// start of its body, or the error that ended it.
func (v *v1Client) putChunk(c *client, content stream, i int) string {
	n := v.count(content)
	off := int64(i) * clusterChunkSize
	size := min(clusterChunkSize, content.size-off)
	header := map[string]string{"OC-Chunked": "1", "OC-Total-Length": strconv.FormatInt(content.size, 10)}
	if i == n-1 {
		header["OC-Checksum"] = v.checksum
	}
	path := fmt.Sprintf("/remote.php/webdav/v1.bin-chunking-%d-%d-%d", v.transfer, n, i)
	resp, err := c.sendStream(http.MethodPut, path, header, content.section(off, size), size)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d ETag %q %s", resp.StatusCode, resp.Header.Get("ETag"), strings.TrimSpace(drainAnswer(resp)))
}

func (v *v1Client) sendParts(t *testing.T, c *client, content stream) {
	t.Helper()
	v.transfer++
	v.checksum = "SHA1:" + content.digest().sha1
	for i := range v.count(content) - 1 {
		if answer := v.putChunk(c, content, i); !strings.HasPrefix(answer, "201 ") {
			t.Fatalf("chunk %d: %s, want 201", i, answer)
		}
	}
}

func (v *v1Client) assemble(c *client, content stream) string {
	return v.putChunk(c, content, v.count(content)-1)
}

func (*v1Client) assembled(answer string) bool {
	return strings.HasPrefix(answer, "201 ") && !strings.HasPrefix(answer, `201 ETag ""`)
}

// retry is what an ownCloud client does after the last chunk failed
// (propagateuploadv1.cpp): its next sync sends that chunk again (while
// the server answers 409); an answer without the ETag of the file means
// the chunks are gone, and the sync after sends them all again.
func (v *v1Client) retry(t *testing.T, c *client, content stream) {
	t.Helper()
	start := time.Now()
	for {
		answer := v.assemble(c, content)
		switch {
		case v.assembled(answer):
			t.Logf("the last chunk sent again succeeded after %v", time.Since(start).Round(time.Millisecond))
			return
		case strings.HasPrefix(answer, "201 "):
			t.Logf("the chunks are gone after %v: the client sends them again", time.Since(start).Round(time.Millisecond))
			v.sendParts(t, c, content)
			continue
		case !strings.HasPrefix(answer, "409 "):
			t.Fatalf("the last chunk sent again: %s, want 201 or 409 while being assembled", answer)
		case time.Since(start) > chunkedRetryFor:
			t.Fatalf("the last chunk is still refused after %v: %s", chunkedRetryFor, answer)
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
