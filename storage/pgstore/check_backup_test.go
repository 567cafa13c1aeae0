package pgstore

import (
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// A backup of the PostgreSQL + S3 store is a pg_dump of the database and
// a copy of the bucket taken after it (docs/operations.md). These tests
// take one while the store serves, restore it into a fresh database and
// bucket, and check the restored pair.

// backupPeer is a database and bucket a store runs on, and the bucket
// opened for copying.
type backupPeer struct {
	dsn    string
	s3     s3content.Config
	bucket *s3content.Bucket
}

func newBackupPeer(t *testing.T) backupPeer {
	t.Helper()
	b := testpeer.S3Bucket(t)
	cfg := s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey}
	bucket, err := s3content.Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("opening bucket %s: %v", b.Bucket, err)
	}
	return backupPeer{dsn: testpeer.PostgreSQL(t), s3: cfg, bucket: bucket}
}

// open opens a store on the peer, as a node configured for it would.
func (p backupPeer) open(t *testing.T) *Store {
	opts := checkOpts
	opts.DSN, opts.S3 = p.dsn, p.s3
	return openTestStore(t, opts)
}

// pgTool finds a PostgreSQL client program, or skips t.
func pgTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
	return p
}

// dump writes a pg_dump of the peer's database to a file and returns it.
func (p backupPeer) dump(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "davspaces.dump")
	out, err := testpeer.CommandContext(t.Context(), pgTool(t, "pg_dump"), "--format=custom", "--no-owner",
		"--file="+file, "--dbname="+p.dsn).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_dump: %v: %s", err, out)
	}
	return file
}

// restore loads dump into the peer's (empty) database.
func (p backupPeer) restore(t *testing.T, dump string) {
	t.Helper()
	out, err := testpeer.CommandContext(t.Context(), pgTool(t, "pg_restore"), "--no-owner", "--exit-on-error",
		"--dbname="+p.dsn, dump).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_restore: %v: %s", err, out)
	}
}

// copyBucket copies every object of from into to, as a bucket replica or
// an `mc mirror` would.
func copyBucket(t *testing.T, from, to *s3content.Bucket) {
	t.Helper()
	ctx := t.Context()
	after := ""
	for {
		page, err := from.List(ctx, "", after, 100)
		if err != nil {
			t.Fatalf("listing the bucket: %v", err)
		}
		if len(page) == 0 {
			return
		}
		for _, o := range page {
			body, err := from.Get(ctx, o.Key, 0, -1)
			if err != nil {
				t.Fatalf("reading %s: %v", o.Key, err)
			}
			_, err = to.Put(ctx, o.Key, body, o.Size)
			body.Close()
			if err != nil {
				t.Fatalf("copying %s: %v", o.Key, err)
			}
		}
		after = page[len(page)-1].Key
	}
}

// TestCheckVerifiesARestoredBackup: a pg_dump taken while the store
// serves, then a copy of its bucket, restored into a fresh database and
// bucket, is a store that opens, checks clean, and serves the files. A
// file written between the dump and the copy leaves only an orphan, which
// a repair hands to the sweep; the other order (the bucket first) loses
// the content of a file written in between, which the check finds.
func TestCheckVerifiesARestoredBackup(t *testing.T) {
	live := newBackupPeer(t)
	s := live.open(t)
	sp, nodes := checkWorkload(t, s)

	dump := live.dump(t)
	afterDump := put(t, s, sp.ID, sp.ID, "after the dump", "not in the dump")
	// Each restore gets a copy of its own: a restored store's sweep
	// removes objects from it.
	copies := [2]backupPeer{newBackupPeer(t), newBackupPeer(t)}
	for _, c := range copies {
		copyBucket(t, live.bucket, c.bucket)
	}
	put(t, s, sp.ID, sp.ID, "after the copy", "in neither")

	t.Run("dump then bucket", func(t *testing.T) {
		restored := copies[0]
		restored.restore(t, dump)
		r := restored.open(t)
		if r.StorageID() != s.StorageID() {
			t.Errorf("restored storage id %q, want %q", r.StorageID(), s.StorageID())
		}
		problems, _ := runCheck(t, r, storage.CheckOptions{Deep: true, Repair: true})
		afterKey := contentOf(t, s, afterDump.ID)[0].Key
		if len(problems) != 1 || problems[0].Kind != storage.ProblemOrphanContent || !problems[0].Repaired ||
			!strings.Contains(problems[0].Detail, afterKey) {
			t.Fatalf("the restored pair's check found %v, want the orphan %s of the file written after the dump", problems, afterKey)
		}
		requireClean(t, r)
		_, content, err := r.Open(t.Context(), sp.ID, nodes["docs/a.txt"].ID)
		if err != nil {
			t.Fatalf("Open on the restored store: %v", err)
		}
		defer content.Close()
		if b, err := io.ReadAll(content); err != nil || string(b) != "second, longer" {
			t.Fatalf("restored content %q, %v", b, err)
		}
	})

	t.Run("bucket then dump", func(t *testing.T) {
		restored := copies[1]
		restored.restore(t, live.dump(t)) // names "after the copy", whose object the copy lacks
		problems, _ := runCheck(t, restored.open(t), storage.CheckOptions{})
		var missing int
		for _, p := range problems {
			if p.Kind == storage.ProblemMissingContent && p.Path == "after the copy" {
				missing++
			}
		}
		if missing != 1 {
			t.Fatalf("the check found %v, want the missing content of the file written after the copy", problems)
		}
	})
}
