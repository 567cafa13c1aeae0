package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// openSweptStore opens a store whose background sweep never runs by
// itself and whose released objects are due at once: the test sweeps,
// so that what a pass does is decided, not raced.
func openSweptStore(t *testing.T) *Store {
	return openTestStore(t, Options{Sweep: time.Hour, ObjectGrace: time.Nanosecond})
}

// sweepNow runs one pass of the sweep.
func sweepNow(t *testing.T, s *Store) {
	t.Helper()
	if err := s.sweep(t.Context()); err != nil {
		t.Fatalf("sweep: %v", err)
	}
}

// objectKey is the one object of file id's content.
func objectKey(t *testing.T, s *Store, id string) string {
	t.Helper()
	segs := contentOf(t, s, id)
	if len(segs) != 1 {
		t.Fatalf("content of %s = %+v, want one object", id, segs)
	}
	return segs[0].Key
}

// wantObject fails unless object key is in the bucket and off the sweep's
// list.
func wantObject(t *testing.T, s *Store, key, why string) {
	t.Helper()
	if swept(t, s, key) {
		t.Fatalf("%s: object %s is on the sweep's list", why, key)
	}
	rc, err := s.objects.Get(t.Context(), key, 0, -1)
	if err != nil {
		t.Fatalf("%s: object %s: %v", why, key, err)
	}
	rc.Close()
}

// wantObjectSwept fails unless object key is on the sweep's list, and
// then gone from the bucket after one pass.
func wantObjectSwept(t *testing.T, s *Store, key, why string) {
	t.Helper()
	if !swept(t, s, key) {
		t.Fatalf("%s: object %s is not on the sweep's list", why, key)
	}
	// The row is due once the database's clock passed ObjectGrace.
	deadline := time.Now().Add(30 * time.Second)
	for swept(t, s, key) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: object %s still on the sweep's list", why, key)
		}
		sweepNow(t, s)
	}
	if _, err := s.objects.Get(t.Context(), key, 0, -1); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("%s: object %s after the sweep: %v", why, key, err)
	}
}

// The trash and versions hold their objects: a removed file's and a
// replaced content's stay in the bucket through sweeps; purging the
// trash item, emptying the trash, the expiry pass and an eviction hand
// them to the sweep, which deletes them, except those a COPY or a
// version still references.
func TestUndoObjectLifecycle(t *testing.T) {
	s := openSweptStore(t)
	sp := personal(t, s)
	ctx := t.Context()

	f := put(t, s, sp.ID, sp.ID, "f", "one")
	first := objectKey(t, s, f.ID)
	put(t, s, sp.ID, sp.ID, "f", "two")
	second := objectKey(t, s, f.ID)
	c, _, err := s.Copy(ctx, sp.ID, storage.Transfer{NodeID: f.ID, NewParentID: sp.ID, NewName: "copy"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, sp.ID, f.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	sweepNow(t, s)
	wantObject(t, s, first, "a version of a trashed file")
	wantObject(t, s, second, "a trashed file")

	// Purging the item destroys the file and its version; the copy
	// still holds the second object.
	if err := s.PurgeTrash(ctx, sp.ID, storage.TrashKey(trashedAt(t, s, sp.ID, f.ID), f.ID)); err != nil {
		t.Fatal(err)
	}
	wantObjectSwept(t, s, first, "the version of a purged file")
	wantObject(t, s, second, "an object the copy shares with a purged file")

	// A version shares a copy's object: it survives the copy's purge
	// (through EmptyTrash) until the version goes too (through expiry).
	g := put(t, s, sp.ID, sp.ID, "g", "gg")
	shared := objectKey(t, s, g.ID)
	h, _, err := s.Copy(ctx, sp.ID, storage.Transfer{NodeID: g.ID, NewParentID: sp.ID, NewName: "h"})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, sp.ID, sp.ID, "g", "g2")
	if err := s.Remove(ctx, sp.ID, h.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.EmptyTrash(ctx, sp.ID); err != nil {
		t.Fatal(err)
	}
	sweepNow(t, s)
	wantObject(t, s, shared, "a version's object, after the copy that shared it was purged")
	s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{Trash: time.Hour, VersionsOff: true}})
	if n, err := s.ExpireUndo(ctx); err != nil || n != 1 {
		t.Fatalf("ExpireUndo = %d, %v; want the one version", n, err)
	}
	wantObjectSwept(t, s, shared, "a version the expiry pass removed")

	// Under quota pressure the trash gives its objects up to an upload.
	s.SetRetention(storage.RetentionPolicy{Default: storage.DefaultRetention})
	k := put(t, s, sp.ID, sp.ID, "k", "kk")
	kk := objectKey(t, s, k.ID)
	if err := s.Remove(ctx, sp.ID, k.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	sweepNow(t, s)
	wantObject(t, s, kk, "a trashed file")
	u, err := s.Usage(ctx, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	s.SetPersonalQuota(u.Used() + 1)
	put(t, s, sp.ID, sp.ID, "big", "xx")
	if u, _ := s.Usage(ctx, sp.ID); u.Trash != 0 {
		t.Fatalf("usage after an upload that needed the trash's room = %+v", u)
	}
	wantObjectSwept(t, s, kk, "the object of an evicted file")
	wantObject(t, s, second, "an object the copy still holds")
	if got := readAll(t, s, sp.ID, c.ID); got != "two" {
		t.Fatalf("the copy reads %q", got)
	}
}

// trashedAt returns when node id went to the trash of space spaceID.
func trashedAt(t *testing.T, s *Store, spaceID, id string) time.Time {
	t.Helper()
	items, err := storage.AllTrashItems(t.Context(), s, spaceID)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Node.ID == id {
			return it.Deleted
		}
	}
	t.Fatalf("node %s is not in the trash", id)
	return time.Time{}
}

// A removed node keeps its rows: only its parent changes, to its space's
// trash's root, whose id no space lookup returns and no space can be
// named (space ids hold no "/"); its space id stays its space's.
func TestTrashIsNoSpace(t *testing.T) {
	s := openTestStore(t, Options{})
	sp := personal(t, s)
	ctx := t.Context()
	f := put(t, s, sp.ID, sp.ID, "f", "x")
	if err := s.Remove(ctx, sp.ID, f.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	trash := trashSpaceID(sp.ID)
	var spaceID, root string
	err := s.pool.QueryRow(ctx, `SELECT space_id, node_root(id) FROM nodes WHERE id = $1`, f.ID).Scan(&spaceID, &root)
	if err != nil || spaceID != sp.ID || root != trash {
		t.Fatalf("the trashed file's space = %q, root %q, %v; want %q, %q", spaceID, root, err, sp.ID, trash)
	}
	if _, err := s.Space(ctx, trash); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Space of the trash: %v", err)
	}
	if _, err := s.Node(ctx, trash, f.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Node in the trash's pseudo space: %v", err)
	}
	if _, err := s.Mkdir(ctx, trash, trash, "x"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Mkdir in the trash's pseudo space: %v", err)
	}
	if _, err := s.PutSpace(ctx, storage.Space{ID: trash, Name: "taken"}); !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("PutSpace of the trash's id: %v", err)
	}
	if _, err := s.Usage(ctx, trash); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Usage of the trash: %v", err)
	}
}

// readAll reads the content of node id.
func readAll(t *testing.T, s *Store, spaceID, id string) string {
	t.Helper()
	_, c, err := s.Open(context.WithoutCancel(t.Context()), spaceID, id)
	if err != nil {
		t.Fatalf("Open %s: %v", id, err)
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	return string(b)
}

// Two nodes removing, restoring, purging and re-creating the same files
// at once leave a consistent space: every trashed node belongs to exactly
// one item, the trash's size is what its items hold, and the usage what
// the rows say.
func TestUndoRacesAcrossNodes(t *testing.T) {
	nodes := openNodes(t, 2)
	sp := personal(t, nodes[0])
	ctx := t.Context()
	const files, rounds = 4, 15
	ids := make([]string, files)
	for i := range ids {
		ids[i] = put(t, nodes[0], sp.ID, sp.ID, fmt.Sprintf("f%d", i), strings.Repeat("x", i+1)).ID
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*rounds*files)
	for w, s := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for i, id := range ids {
					if err := raceStep(ctx, s, sp.ID, id, fmt.Sprintf("f%d", i), (r+w+i)%4); err != nil {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wantConsistentUndo(t, nodes[1], sp.ID)
}

// raceStep does one of four things to file id: remove it, restore it
// from the trash, purge its trash item, or commit a file of its name.
// Refusals that a race explains (it is gone, it is back, the name is
// taken) are no errors.
func raceStep(ctx context.Context, s *Store, spaceID, id, name string, step int) error {
	var err error
	switch step {
	case 0:
		err = s.Remove(ctx, spaceID, id, storage.Conditions{})
	case 1, 2:
		var items []storage.TrashItem
		if items, err = storage.AllTrashItems(ctx, s, spaceID); err != nil {
			return err
		}
		for _, it := range items {
			if it.Node.ID != id {
				continue
			}
			if step == 1 {
				_, _, err = s.RestoreTrash(ctx, spaceID, it.Key, storage.Transfer{NodeID: id, NewParentID: spaceID, NewName: name})
			} else {
				err = s.PurgeTrash(ctx, spaceID, it.Key)
			}
			break
		}
	case 3:
		var u storage.Upload
		if u, err = s.NewUpload(ctx, spaceID); err != nil {
			return err
		}
		defer u.Discard()
		u.Write([]byte("new"))
		_, _, err = u.Commit(ctx, storage.Commit{ParentID: spaceID, Name: name})
	}
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrExists) {
		return nil
	}
	return err
}

// wantConsistentUndo checks the trash and the counters of a space against
// its rows.
func wantConsistentUndo(t *testing.T, s *Store, spaceID string) {
	t.Helper()
	ctx := t.Context()
	var orphans, itemsSize, trashRoot, files, versions, counted int64
	err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM nodes n WHERE n.parent_id = $2
			AND NOT EXISTS (SELECT 1 FROM trash_items t WHERE t.node_id = n.id)),
		(SELECT coalesce(sum(n.size), 0) FROM trash_items t JOIN nodes n ON n.id = t.node_id WHERE t.space_id = $1),
		(SELECT coalesce((SELECT size FROM nodes WHERE id = $2), 0)),
		(SELECT coalesce(sum(size), 0) FROM nodes WHERE space_id = $1 AND kind = $3 AND node_root(id) = $1),
		(SELECT coalesce(sum(size), 0) FROM versions WHERE space_id = $1),
		(SELECT versions_bytes FROM spaces WHERE id = $1)`,
		spaceID, trashSpaceID(spaceID), storage.KindFile).Scan(&orphans, &itemsSize, &trashRoot, &files, &versions, &counted)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Usage(ctx, spaceID)
	if err != nil {
		t.Fatal(err)
	}
	if orphans != 0 || itemsSize != trashRoot || u.Trash != itemsSize || u.Files != files || versions != counted || u.Versions != versions {
		t.Fatalf("usage %+v; %d trashed nodes of no item, items hold %d, trash root %d, files %d, versions %d counted %d",
			u, orphans, itemsSize, trashRoot, files, versions, counted)
	}
}

// One expiry pass removes at most expireBatch things, each in a change of
// its own; the next pass goes on where it stopped.
func TestExpireUndoIsBounded(t *testing.T) {
	clk := &testClock{}
	s := openTestStore(t, Options{Now: clk.Now, Sweep: time.Hour})
	sp := personal(t, s)
	ctx := t.Context()
	const items = expireBatch + 10
	for i := range items {
		d, err := s.Mkdir(ctx, sp.ID, sp.ID, fmt.Sprintf("d%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Remove(ctx, sp.ID, d.ID, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Advance(storage.DefaultTrashRetention)
	for _, want := range []int{expireBatch, 10, 0} {
		if n, err := s.ExpireUndo(ctx); err != nil || n != want {
			t.Fatalf("ExpireUndo = %d, %v; want %d", n, err, want)
		}
	}
	if left, err := storage.AllTrashItems(ctx, s, sp.ID); err != nil || len(left) != 0 {
		t.Fatalf("trash after the passes: %d items, %v", len(left), err)
	}
}
