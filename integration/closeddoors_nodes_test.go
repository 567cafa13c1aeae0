package integration

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Issue 31, finding 3, through the real Caddy: a member with a small quota
// makes, for ten seconds, the records that take no bytes of it, all with
// 240-byte names: empty files by bulk upload, folders, trash entries and
// versions of empty files. The space's node cap stops them with 507 and
// the WebDAV error body, and meta.db grows by at most what the cap lets
// the space keep (nodeCapQuota/4 KiB nodes of at most maxNodeMetadata).
func TestNodeCapStopsEmptyRecords(t *testing.T) {
	const quota = 16 << 20
	opts := serverOptions{davspaces: []string{fmt.Sprintf("personal_quota %d", quota)}}
	s := startServer(t, opts)
	newClient(t, s.URL, "einstein").expect(http.StatusMultiStatus, "PROPFIND", "/remote.php/dav/files/einstein/", "", "Depth", "0")
	s.stop()
	db := filepath.Join(s.Root, "meta.db")
	before := boltPagesInUse(t, db)

	opts.root = s.Root
	s = startServer(t, opts)
	w := emptyRecordsWorkload{c: newClient(t, s.URL, "einstein"), name240: strings.Repeat("n", 236)}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); w.round++ {
		w.bulk(200)
		w.folders(20)
		w.trashAndVersions(10)
	}
	s.stop()
	after := boltPagesInUse(t, db)

	const nodeCap = quota / 4096
	grown := after - before
	t.Logf("%d rounds: %d files and folders made (and versions), %d refused (507 or a bulk error); meta.db's pages %d -> %d bytes (+%d, %d bytes a node of the cap of %d), file %d bytes",
		w.round, w.made, w.refused, before, after, grown, grown/nodeCap, nodeCap, fileSize(t, db))
	if w.refused == 0 || !w.sawErrorBody {
		t.Fatalf("the node cap never refused with 507 and the WebDAV error body: %d made", w.made)
	}
	if w.made > nodeCap {
		t.Fatalf("%d nodes made in a space whose cap is %d", w.made, nodeCap)
	}
	if grown > nodeCap*maxNodeMetadata {
		t.Fatalf("meta.db grew by %d bytes, more than %d nodes of %d bytes", grown, nodeCap, maxNodeMetadata)
	}
}

// boltPagesInUse is how far into meta.db its pages reach: bbolt never
// gives the file back, so this is what the store has taken of the disk
// for good (the file itself is allocated ahead, in steps).
func boltPagesInUse(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int64
	if err := db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	return size
}

// maxNodeMetadata is the most meta.db grows by for a node with a long
// name, trash entry and version included, with bbolt's page slack: the
// docs/limits.md states it.
const maxNodeMetadata = 4 << 10

// emptyRecordsWorkload makes records that take no quota, counting what the
// server took and what it refused.
type emptyRecordsWorkload struct {
	c            *client
	name240      string
	round        int
	made         int
	refused      int
	sawErrorBody bool
}

// bulk uploads n empty files in one request.
func (w *emptyRecordsWorkload) bulk(n int) {
	w.c.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	sum := md5.Sum(nil)
	for i := range n {
		h := textproto.MIMEHeader{}
		h.Set("X-File-Path", fmt.Sprintf("/b%04d%s-%d", w.round, w.name240, i))
		h.Set("Content-Length", "0")
		h.Set("X-File-MD5", hex.EncodeToString(sum[:]))
		h.Set("X-File-Mtime", "1700000000")
		if _, err := mw.CreatePart(h); err != nil {
			w.c.t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		w.c.t.Fatal(err)
	}
	resp, b := w.c.send(http.MethodPost, "/remote.php/dav/bulk",
		map[string]string{"Content-Type": "multipart/related; boundary=" + mw.Boundary()}, body.Bytes())
	if resp.StatusCode != http.StatusOK {
		w.c.t.Fatalf("bulk upload: %d\n%s", resp.StatusCode, b)
	}
	var answers map[string]struct {
		Error   bool   `json:"error"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(b, &answers); err != nil {
		w.c.t.Fatalf("bulk answer: %v\n%s", err, b)
	}
	for _, a := range answers {
		if a.Error {
			w.refused++
		} else {
			w.made++
		}
	}
}

// folders makes n folders with 240-byte names.
func (w *emptyRecordsWorkload) folders(n int) {
	for i := range n {
		w.count(w.c.do("MKCOL", fmt.Sprintf("/remote.php/dav/files/einstein/%04d%s-%d", w.round, w.name240, i), ""))
	}
}

// trashAndVersions puts n empty files, deletes them into the trash and
// puts them again, which revives each with a version of its empty content
// where the node cap has room for one (not counted as made: at the cap
// the version is not kept).
func (w *emptyRecordsWorkload) trashAndVersions(n int) {
	for i := range n {
		p := fmt.Sprintf("/remote.php/dav/files/einstein/t%04d%s-%d", w.round, w.name240, i)
		resp, body := w.c.do(http.MethodPut, p, "")
		if !w.count(resp, body) {
			continue
		}
		w.c.do(http.MethodDelete, p, "")
		if resp, body := w.c.do(http.MethodPut, p, ""); resp.StatusCode != http.StatusCreated {
			w.c.t.Fatalf("PUT reviving %s: %d\n%s", p, resp.StatusCode, body)
		}
	}
}

// count records the answer to a request that makes a node, and reports
// whether it was made.
func (w *emptyRecordsWorkload) count(resp *http.Response, body string) bool {
	w.c.t.Helper()
	switch resp.StatusCode {
	case http.StatusCreated:
		w.made++
		return true
	case http.StatusInsufficientStorage:
		w.refused++
		w.sawErrorBody = w.sawErrorBody || strings.Contains(body, "<d:error")
		return false
	}
	w.c.t.Fatalf("%d\n%s", resp.StatusCode, body)
	return false
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
