package boltstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// evictedFolderFiles is the size of the trash item the eviction tests
// evict: more than a part of a purge.
const evictedFolderFiles = 3 * purgeNodesPerTxn

// bigTrashItem makes a folder of files files (seedFiles, their sizes,
// nodes and content references recorded as commits would, their content
// files not written) and moves it into the trash. It returns the folder
// as it was.
func (f *fixture) bigTrashItem(t *testing.T, files int) storage.Node {
	t.Helper()
	dir := f.mkdir(t, f.root(), "big")
	f.seedFiles(t, dir.ID, files)
	size := int64(files*1000 + files*(files-1)/2)
	err := f.s.update(func(t *txn) error {
		err := t.scanChildren(dir.ID, "", 0, func(r rec) error {
			return t.blobs().Put([]byte(r.Blob), []byte(r.ID))
		})
		if err != nil {
			return err
		}
		if err := t.countNodes(f.space.ID, int64(files)); err != nil {
			return err
		}
		return t.propagate(dir.ID, size)
	})
	if err != nil {
		t.Fatal(err)
	}
	dir.Size = size
	if err := f.s.Remove(ctx, f.space.ID, dir.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wantCheckClean fails on any problem a check finds but missing content:
// seedFiles writes no content files.
func wantCheckClean(t *testing.T, s *Store, when string) {
	t.Helper()
	problems, _ := runCheck(t, s, storage.CheckOptions{})
	for _, p := range problems {
		if p.Kind != storage.ProblemMissingContent {
			t.Errorf("check %s: %s", when, p)
		}
	}
}

// wantEvicted fails unless the trash item of folder dir is gone for
// good: not listed, not found, none of its nodes left, no item hidden.
func (f *fixture) wantEvicted(t *testing.T, dir storage.Node, when string) {
	t.Helper()
	if items, err := storage.AllTrashItems(ctx, f.s, f.space.ID); err != nil || len(items) != 0 {
		t.Errorf("%s: trash = %d items, %v; want none", when, len(items), err)
	}
	var (
		nodes, hidden int
		folderLeft    bool
	)
	err := f.s.view(func(t *txn) (err error) {
		nodes = t.nodes().Stats().KeyN
		hidden = t.purging().Stats().KeyN
		_, folderLeft, err = t.node(dir.ID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if nodes != 2 || hidden != 0 || folderLeft { // the root and the upload
		t.Errorf("%s: %d nodes (the folder's among them: %v) and %d hidden items left; want the root and the upload, none hidden",
			when, nodes, folderLeft, hidden)
	}
}

// An upload that needs the room of a trash item of many files hides the
// item in its own transaction and purges it in parts, each a transaction
// of its own, before it returns: the item is gone, its room the upload's,
// and the store checks clean.
func TestEvictionHidesThenPurgesInParts(t *testing.T) {
	f := newFixture(t)
	dir := f.bigTrashItem(t, evictedFolderFiles)
	f.s.SetPersonalQuota(dir.Size + 100)
	before := f.s.WriteCommits()
	start := time.Now()
	f.put(t, f.root(), "new", strings.Repeat("x", 1000)) // needs the item's room
	t.Logf("the upload evicting %d files took %v", evictedFolderFiles, time.Since(start))
	if commits := f.s.WriteCommits() - before; commits < 4 {
		t.Errorf("the upload evicting %d files committed %d transactions; want its own and the parts of a purge",
			evictedFolderFiles, commits)
	}
	f.wantEvicted(t, dir, "after the upload")
	if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u.Trash != 0 || u.Files != 1000 || u.Nodes != 1 {
		t.Errorf("after the upload: Usage = %+v, %v; want the upload alone", u, err)
	}
	wantCheckClean(t, f.s, "after the upload")
}

// The eviction in an upload's transaction writes a few records whatever
// the item holds, and the item is gone from the trash in it, its room
// free; a store that stops before the parts leaves the item hidden, a
// restore or a purge of it not found and a store that checks clean, and
// the next expiry pass after it opens again purges it in parts.
func TestEvictionStoppedBeforeThePartsFinishesAtTheSweep(t *testing.T) {
	f := newFixture(t)
	dir := f.bigTrashItem(t, evictedFolderFiles)
	item := f.onlyTrashItem(t)
	f.s.SetPersonalQuota(dir.Size + 100)
	var written int64
	err := f.s.update(func(t *txn) error {
		before := t.written
		if err := t.makeRoom(f.space.ID, 1000); err != nil {
			return err
		}
		written = t.written - before
		u, err := t.usage(f.space.ID)
		if err != nil {
			return err
		}
		if u.Trash != 0 {
			return fmt.Errorf("in the upload's transaction: Usage = %+v; want the item's room free", u)
		}
		if items, err := t.trashItems(f.space.ID); err != nil || len(items) != 0 {
			return fmt.Errorf("in the upload's transaction: trash = %d items, %v; want none", len(items), err)
		}
		t.purges = nil // the store stops before the parts
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the eviction of %d files wrote %d records in the upload's transaction", evictedFolderFiles, written)
	if written > 8 {
		t.Errorf("the eviction wrote %d records in the upload's transaction; want a few", written)
	}
	if items, err := storage.AllTrashItems(ctx, f.s, f.space.ID); err != nil || len(items) != 0 {
		t.Errorf("hidden: trash = %d items, %v; want none", len(items), err)
	}
	if _, _, err := f.s.TrashNode(ctx, f.space.ID, item.Key, nil); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("TrashNode of the hidden item: %v; want ErrNotFound", err)
	}
	_, _, err = f.s.RestoreTrash(ctx, f.space.ID, item.Key, storage.Transfer{NewParentID: f.root(), NewName: "back"})
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("restore of the hidden item: %v; want ErrNotFound", err)
	}
	if err := f.s.PurgeTrash(ctx, f.space.ID, item.Key); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("purge of the hidden item: %v; want ErrNotFound", err)
	}
	if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u.Trash != 0 {
		t.Errorf("hidden: Usage = %+v, %v; want no trash", u, err)
	}
	wantCheckClean(t, f.s, "with the item hidden")

	f.reopen(t)
	before := f.s.WriteCommits()
	if n, err := f.s.ExpireUndo(ctx); err != nil || n != 1 {
		t.Errorf("ExpireUndo = %d, %v; want the hidden item", n, err)
	}
	if commits := f.s.WriteCommits() - before; commits < 3 {
		t.Errorf("the expiry purged the hidden item in %d transactions; want parts", commits)
	}
	f.put(t, f.root(), "new", strings.Repeat("x", 1000))
	f.wantEvicted(t, dir, "after the expiry")
	if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u.Trash != 0 || u.Nodes != 1 {
		t.Errorf("after the expiry: Usage = %+v, %v; want the upload alone", u, err)
	}
	wantCheckClean(t, f.s, "after the expiry")
}

// stopAfterOnePart runs purge, a purge in parts of a trash item, the
// folder of files files, with a context it cancels as the transaction
// after purge's first write commit starts: that transaction commits,
// and purge stops before the next. It fails unless purge stopped so, a
// part of the folder destroyed and not all of it.
func (f *fixture) stopAfterOnePart(t *testing.T, m *txnMeter, files int, purge func(context.Context) error) {
	t.Helper()
	stopped, stop := context.WithCancel(ctx)
	defer stop()
	first := f.s.WriteCommits() + 1
	m.start(f.s, func() {
		if f.s.WriteCommits() >= first {
			stop()
		}
	})
	err := purge(stopped)
	m.stop()
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("the purge stopped after one part: %v", err)
	}
	var nodes int
	err = f.s.view(func(t *txn) error {
		nodes = t.nodes().Stats().KeyN
		return nil
	})
	if err != nil || nodes >= files+2 || nodes <= 2 { // the root, the folder, its files
		t.Fatalf("the stopped purge left %d nodes of %d, %v; want a part gone", nodes, files+2, err)
	}
}

// purgedFolderFiles is the size of the trash item the tests of a purge
// stopped after one part purge: more than the first two parts of a purge
// destroy, whatever the pace.
const purgedFolderFiles = purgeNodesPerTxn + 4*purgeFirstPart

// A restore that comes between two parts of a purge of a trash item, or
// of an emptying of the trash, finds nothing: the purge's first
// transaction hid the item, whole. Meanwhile the trash lists nothing,
// its room is free and the store checks clean; the next expiry pass
// finishes the purge, and nothing of the item is left.
func TestRestoreBetweenTwoPartsOfAPurgeFindsNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		// also is how many other items the trash holds, deleted after
		// the folder, that purge takes too.
		also  int
		purge func(ctx context.Context, f *fixture, key string) error
	}{{
		name: "PurgeTrash",
		purge: func(ctx context.Context, f *fixture, key string) error {
			return f.s.PurgeTrash(ctx, f.space.ID, key)
		},
	}, {
		name: "EmptyTrash",
		also: 2,
		purge: func(ctx context.Context, f *fixture, _ string) error {
			return f.s.EmptyTrash(ctx, f.space.ID)
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f, m := newMeteredFixture(t)
			dir := f.bigTrashItem(t, purgedFolderFiles)
			item := f.onlyTrashItem(t)
			keys := []string{item.Key}
			for i := range tc.also {
				f.clk.Advance(time.Second) // purged after the folder
				n := f.put(t, f.root(), fmt.Sprint("also", i), "content")
				if err := f.s.Remove(ctx, f.space.ID, n.ID, storage.Conditions{}); err != nil {
					t.Fatal(err)
				}
				keys = append(keys, storage.TrashKey(f.clk.Now(), n.ID))
			}
			f.stopAfterOnePart(t, m, purgedFolderFiles+tc.also, func(stopped context.Context) error {
				return tc.purge(stopped, f, item.Key)
			})
			for _, key := range keys {
				back, _, err := f.s.RestoreTrash(ctx, f.space.ID, key, storage.Transfer{NewParentID: f.root(), NewName: "back"})
				if !errors.Is(err, storage.ErrNotFound) {
					t.Fatalf("restore of %s between two parts = %+v, %v; want ErrNotFound", key, back, err)
				}
			}
			if items, err := storage.AllTrashItems(ctx, f.s, f.space.ID); err != nil || len(items) != 0 {
				t.Errorf("between two parts: trash = %d items, %v; want none", len(items), err)
			}
			if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u.Trash != 0 {
				t.Errorf("between two parts: Usage = %+v, %v; want no trash", u, err)
			}
			wantCheckClean(t, f.s, "between two parts")
			if n, err := f.s.ExpireUndo(ctx); err != nil || n != len(keys) {
				t.Errorf("ExpireUndo = %d, %v; want the %d hidden items", n, err, len(keys))
			}
			f.wantExpired(t, dir, "after the expiry finished the purge")
			wantCheckClean(t, f.s, "after the expiry finished the purge")
		})
	}
}

// Emptying a trash of many items takes every one of them out of the
// trash, a bounded batch a transaction, before it destroys any: stopped
// once its first part has committed, it leaves no item in the trash, the
// trash's room free and a store that checks clean, and the next expiry
// passes purge what it hid.
func TestEmptyTrashHidesEveryItemBeforeItPurges(t *testing.T) {
	const items = 3*emptyHidePerTxn + 1
	f, m := newMeteredFixture(t)
	for i := range items {
		n := f.put(t, f.root(), fmt.Sprint("f", i), "content")
		if err := f.s.Remove(ctx, f.space.ID, n.ID, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The transaction after the hiding ones, the first part of a purge,
	// commits; the emptying stops before the next.
	stopped, stop := context.WithCancel(ctx)
	defer stop()
	hidden := f.s.WriteCommits() + items/emptyHidePerTxn + 1
	m.start(f.s, func() {
		if f.s.WriteCommits() >= hidden {
			stop()
		}
	})
	err := f.s.EmptyTrash(stopped, f.space.ID)
	most := m.stop()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("EmptyTrash stopped after a part = %v; want it stopped", err)
	}
	t.Logf("emptying a trash of %d items, the biggest transaction wrote %d records", items, most)
	if most > 6*emptyHidePerTxn {
		t.Errorf("a transaction of the emptying wrote %d records; want a batch of items hidden, %d at most", most, 6*emptyHidePerTxn)
	}
	if got, err := storage.AllTrashItems(ctx, f.s, f.space.ID); err != nil || len(got) != 0 {
		t.Errorf("stopped: trash = %d items, %v; want none", len(got), err)
	}
	if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u.Trash != 0 {
		t.Errorf("stopped: Usage = %+v, %v; want no trash", u, err)
	}
	wantCheckClean(t, f.s, "with the items hidden")
	finished := 0
	for pass := 0; pass < 4; pass++ { // expireBatch a pass
		n, err := f.s.ExpireUndo(ctx)
		if err != nil {
			t.Fatalf("ExpireUndo: %v", err)
		}
		finished += n
	}
	if finished != items-1 {
		t.Errorf("the expiry passes purged %d items; want the %d still hidden", finished, items-1)
	}
	var nodes, left int
	err = f.s.view(func(t *txn) error {
		nodes, left = t.nodes().Stats().KeyN, t.purging().Stats().KeyN
		return nil
	})
	if err != nil || nodes != 1 || left != 0 {
		t.Errorf("after the expiry: %d nodes, %d hidden items, %v; want the root alone", nodes, left, err)
	}
	wantCheckClean(t, f.s, "after the expiry")
}
