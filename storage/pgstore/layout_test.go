package pgstore

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// sharedOpts are options that open stores on one fresh database and
// bucket, as TestLayoutMigration opens the same data twice.
func sharedOpts(t *testing.T) Options {
	t.Helper()
	b := testpeer.S3Bucket(t)
	return Options{
		DSN:         testpeer.PostgreSQL(t),
		S3:          s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey},
		ObjectGrace: time.Nanosecond,
	}
}

// fillFolder makes folders sub0…sub(folders-1) in parent, each with files
// files, and returns the SHA1 of each file's content by its id.
func fillFolder(t *testing.T, s *Store, spaceID, parent string, folders, files int) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for i := range folders {
		sub, err := s.Mkdir(t.Context(), spaceID, parent, fmt.Sprintf("sub%d", i))
		if err != nil {
			t.Fatalf("Mkdir: %v", err)
		}
		for j := range files {
			content := fmt.Sprintf("file %d of folder %d", j, i)
			f := put(t, s, spaceID, sub.ID, fmt.Sprintf("f%03d.txt", j), content)
			sum := sha1.Sum([]byte(content))
			sums[f.ID] = hex.EncodeToString(sum[:])
		}
	}
	return sums
}

// toLayout1 rewrites the database as the code before layout 2 kept it:
// every node in a trash holds the trash's pseudo space id.
func toLayout1(t *testing.T, s *Store) {
	t.Helper()
	execSQL(t, s, `UPDATE nodes SET space_id = node_root(id)
		WHERE parent_id IS NOT NULL AND node_root(id) LIKE '%/trash'`)
}

// TestLayoutMigration: a database of layout 1, with trash, versions,
// shares and a trashed folder of nested folders, opens under layout 2 in
// several batches; check is clean, the trash lists and reads as before,
// and the trashed folder restores with every file reading back with its
// SHA1 and its id.
func TestLayoutMigration(t *testing.T) {
	opts := sharedOpts(t)
	old := openTestStore(t, opts)
	sp, nodes := checkWorkload(t, old)
	ctx := t.Context()
	big, err := old.Mkdir(ctx, sp.ID, sp.ID, "big")
	if err != nil {
		t.Fatal(err)
	}
	sums := fillFolder(t, old, sp.ID, big.ID, 3, 12)
	if err := old.Remove(ctx, sp.ID, big.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	before, err := storage.AllTrashItems(ctx, old, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	toLayout1(t, old)
	old.Close()

	opts.layoutBatch = 7
	s := openTestStore(t, opts)
	var left int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE parent_id IS NOT NULL AND space_id LIKE '%/%'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d nodes still hold a trash's id (%v)", left, err)
	}
	requireClean(t, s)
	after, err := storage.AllTrashItems(ctx, s, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("trash after the migration:\n%v\nbefore:\n%v", after, before)
	}
	for id := range sums {
		if _, err := s.Node(ctx, sp.ID, id); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("Node of trashed file %s: %v", id, err)
		}
	}
	var key string
	for _, it := range after {
		if it.Node.ID == big.ID {
			key = it.Key
		}
	}
	restored, _, err := s.RestoreTrash(ctx, sp.ID, key, storage.Transfer{NodeID: big.ID, NewParentID: sp.ID, NewName: "big"})
	if err != nil || restored.ID != big.ID {
		t.Fatalf("RestoreTrash: %v, %v", restored, err)
	}
	for id, want := range sums {
		if got := readSHA1(t, s, sp.ID, id); got != want {
			t.Errorf("file %s reads back with SHA1 %s, want %s", id, got, want)
		}
	}
	if vs, err := s.FileVersions(ctx, sp.ID, nodes["docs/a.txt"].ID); err != nil || len(vs) != 1 {
		t.Errorf("versions of a live file after the migration: %v, %v", vs, err)
	}
	requireClean(t, s)
}

// readSHA1 returns the SHA1 of the content of file id, read through the
// store.
func readSHA1(t *testing.T, s *Store, spaceID, id string) string {
	t.Helper()
	_, c, err := s.Open(t.Context(), spaceID, id)
	if err != nil {
		t.Fatalf("Open %s: %v", id, err)
	}
	defer c.Close()
	h := sha1.New()
	if _, err := io.Copy(h, c); err != nil {
		t.Fatalf("reading %s: %v", id, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestTrashedSubtreeIsNotLive: a node below a trashed folder, whose row
// the delete did not touch, is missing to every lookup of the live space
// by id, by name below its folder and by search, and found again once the
// folder is restored.
func TestTrashedSubtreeIsNotLive(t *testing.T) {
	s := openTestStore(t, Options{})
	sp := personal(t, s)
	ctx := t.Context()
	dir, err := s.Mkdir(ctx, sp.ID, sp.ID, "dir")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Mkdir(ctx, sp.ID, dir.ID, "sub")
	if err != nil {
		t.Fatal(err)
	}
	f := put(t, s, sp.ID, sub.ID, "needle.txt", "one")
	put(t, s, sp.ID, sub.ID, "needle.txt", "two") // a version
	if err := s.Remove(ctx, sp.ID, dir.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	lookups := map[string]func() error{
		"Node": func() error { _, err := s.Node(ctx, sp.ID, f.ID); return err },
		"Child": func() error {
			_, err := s.Child(ctx, sp.ID, sub.ID, "needle.txt")
			return err
		},
		"ReadDir": func() error { _, err := s.ReadDir(ctx, sp.ID, sub.ID, "", 0); return err },
		"Walk":    func() error { _, err := s.Walk(ctx, sp.ID, sub.ID, nil); return err },
		"FileVersions": func() error {
			_, err := s.FileVersions(ctx, sp.ID, f.ID)
			return err
		},
		"CreateShare": func() error {
			_, err := s.CreateShare(ctx, storage.Share{Kind: storage.ShareLink, SpaceID: sp.ID, NodeID: f.ID,
				Role: storage.ShareViewer, Creator: "einstein"})
			return err
		},
		"CreateLock": func() error {
			_, err := s.CreateLock(ctx, storage.Lock{SpaceID: sp.ID, NodeID: f.ID, Root: "/x",
				Scope: storage.LockExclusive, User: "einstein", Timeout: time.Hour}, storage.LockLimits{})
			return err
		},
		"Search": func() error {
			found, err := s.SearchNames(ctx, storage.SearchScope{SpaceID: sp.ID}, "needle")
			if err == nil && (found.Total != 0 || len(found.Nodes) != 0) {
				return fmt.Errorf("found %+v", found)
			}
			if err == nil {
				return storage.ErrNotFound
			}
			return err
		},
	}
	for name, lookup := range lookups {
		if err := lookup(); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s of a node below a trashed folder: %v, want ErrNotFound", name, err)
		}
	}
	items, err := storage.AllTrashItems(ctx, s, sp.ID)
	if err != nil || len(items) != 1 {
		t.Fatalf("TrashItems: %v, %v", items, err)
	}
	if _, _, err := s.RestoreTrash(ctx, sp.ID, items[0].Key, storage.Transfer{NodeID: dir.ID, NewParentID: sp.ID, NewName: "dir"}); err != nil {
		t.Fatal(err)
	}
	delete(lookups, "Search")
	for name, lookup := range lookups {
		if err := lookup(); err != nil {
			t.Errorf("%s once restored: %v", name, err)
		}
	}
	found, err := s.SearchNames(ctx, storage.SearchScope{SpaceID: sp.ID}, "needle")
	if err != nil || found.Total != 1 || len(found.Nodes) != 1 || found.Nodes[0].ID != f.ID {
		t.Errorf("search once restored: %+v, %v", found, err)
	}
}

// TestTrashWritesConstant: moving a folder into the trash and back writes
// as many rows for a folder of 4 files as for one of 4 folders of 30
// files, both at the same depth.
func TestTrashWritesConstant(t *testing.T) {
	s := openTestStore(t, Options{CountWrites: true})
	sp := personal(t, s)
	ctx := t.Context()
	warm := put(t, s, sp.ID, sp.ID, "warm", "x")
	// The space's first delete makes its trash's root.
	if err := s.Remove(ctx, sp.ID, warm.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	type counts struct{ remove, restore int64 }
	measure := func(name string, folders, files int) counts {
		dir, err := s.Mkdir(ctx, sp.ID, sp.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		fillFolder(t, s, sp.ID, dir.ID, folders, files)
		var c counts
		start := s.RecordsWritten()
		if err := s.Remove(ctx, sp.ID, dir.ID, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
		c.remove = s.RecordsWritten() - start
		items, err := storage.AllTrashItems(ctx, s, sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		start = s.RecordsWritten()
		for _, it := range items {
			if it.Node.ID == dir.ID {
				_, _, err = s.RestoreTrash(ctx, sp.ID, it.Key, storage.Transfer{NodeID: dir.ID, NewParentID: sp.ID, NewName: name})
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		c.restore = s.RecordsWritten() - start
		return c
	}
	small, large := measure("small", 1, 4), measure("large", 4, 30)
	if small != large || small.remove == 0 {
		t.Fatalf("rows written (remove, restore): %d files %+v, %d files %+v", 4, small, 120, large)
	}
	t.Logf("rows written: remove %d, restore %d", small.remove, small.restore)
}

// TestEmptyTrashInParts: a transaction of EmptyTrash that has spent its
// budget commits and leaves the other items to the next; EmptyTrash goes
// on until none is left, with the space's counters exact.
func TestEmptyTrashInParts(t *testing.T) {
	s := openTestStore(t, Options{emptyBudget: time.Nanosecond})
	sp := personal(t, s)
	ctx := t.Context()
	const items = 5
	for i := range items {
		f := put(t, s, sp.ID, sp.ID, fmt.Sprintf("f%d", i), "x")
		if err := s.Remove(ctx, sp.ID, f.ID, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
	}
	more, err := s.purgeSome(ctx, sp.ID)
	if err != nil || !more {
		t.Fatalf("purgeSome = %v, %v; want a part done and more to do", more, err)
	}
	if left, err := storage.AllTrashItems(ctx, s, sp.ID); err != nil || len(left) != items-1 {
		t.Fatalf("after one part: %d items (%v), want %d", len(left), err, items-1)
	}
	if err := s.EmptyTrash(ctx, sp.ID); err != nil {
		t.Fatal(err)
	}
	if left, err := storage.AllTrashItems(ctx, s, sp.ID); err != nil || len(left) != 0 {
		t.Fatalf("after EmptyTrash: %d items (%v)", len(left), err)
	}
	requireClean(t, s)
}
