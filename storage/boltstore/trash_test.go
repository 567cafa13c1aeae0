package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/davspaces/davspaces/storage"
)

// blobExists reports whether content file blob is on disk.
func (f *fixture) blobExists(t testing.TB, blob string) bool {
	t.Helper()
	_, err := os.Stat(f.s.blobPath(blob))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

// inlineExists reports whether inline value key is in the inline bucket.
func (f *fixture) inlineExists(t testing.TB, key uint64) bool {
	t.Helper()
	found := false
	if err := f.s.view(func(tx *txn) error { found = tx.inline().Get(inlineKey(key)) != nil; return nil }); err != nil {
		t.Fatal(err)
	}
	return found
}

// anyRec returns the record of node id wherever it is, live or in a trash.
func (f *fixture) anyRec(t testing.TB, id string) rec {
	t.Helper()
	var r rec
	err := f.s.view(func(tx *txn) error {
		var ok bool
		var err error
		if r, ok, err = tx.node(id); err == nil && !ok {
			t.Fatalf("node %s gone", id)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) onlyTrashItem(t testing.TB) storage.TrashItem {
	t.Helper()
	items, err := storage.AllTrashItems(ctx, f.s, f.space.ID)
	if err != nil || len(items) != 1 {
		t.Fatalf("TrashItems = %+v, %v; want one", items, err)
	}
	return items[0]
}

func (f *fixture) wantUndo(t testing.TB, trash, versions int64) {
	t.Helper()
	u, err := f.s.Usage(ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Trash != trash || u.Versions != versions {
		t.Fatalf("usage = %+v, want trash %d and versions %d", u, trash, versions)
	}
}

// A deleted folder keeps its content files and inline values, invisible to
// the live space, until it is purged; then they are gone from disk and
// bucket, and so is the quota they took.
func TestTrashKeepsContentUntilPurge(t *testing.T) {
	f := newInlineFixture(t, 100)
	dir := f.mkdir(t, f.root(), "dir")
	big := f.put(t, dir.ID, "big", strings.Repeat("B", 200))
	small := f.put(t, dir.ID, "small", "tiny")
	blob, inline := f.rec(t, big.ID).Blob, f.rec(t, small.ID).Inline
	if err := f.s.Remove(ctx, f.space.ID, dir.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{dir.ID, big.ID, small.ID} {
		if _, err := f.s.Node(ctx, f.space.ID, id); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("Node of trashed %s: %v", id, err)
		}
	}
	if _, _, err := f.s.Open(ctx, f.space.ID, big.ID); err == nil {
		t.Fatal("a trashed file opens in the live space")
	}
	if !f.blobExists(t, blob) || !f.inlineExists(t, inline) {
		t.Fatal("the trash lost content")
	}
	f.wantUndo(t, 204, 0)
	item := f.onlyTrashItem(t)
	if item.Node.ID != dir.ID || item.Node.Name != "dir" || item.Node.ParentID != f.root() || item.Location != "dir" {
		t.Fatalf("item = %+v", item)
	}
	if err := f.s.PurgeTrash(ctx, f.space.ID, item.Key); err != nil {
		t.Fatal(err)
	}
	if f.blobExists(t, blob) || f.inlineExists(t, inline) {
		t.Fatal("purged content still stored")
	}
	f.wantUndo(t, 0, 0)
	f.wantStorage(t, 0, 0)
}

// A restored subtree is the one deleted: same ids, properties, content.
func TestTrashRestoreKeepsIDsAndProps(t *testing.T) {
	f := newFixture(t)
	dir := f.mkdir(t, f.root(), "dir")
	sub := f.mkdir(t, dir.ID, "sub")
	file := f.put(t, sub.ID, "f", "content")
	color := storage.Property{Name: storage.PropName{Space: "urn:x", Local: "color"}, Value: "red"}
	if err := f.s.PatchProps(ctx, f.space.ID, file.ID, []storage.PropPatch{{Property: color}}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.Remove(ctx, f.space.ID, dir.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if got := f.node(t, f.root()).Size; got != 0 {
		t.Fatalf("root size after delete = %d", got)
	}
	item := f.onlyTrashItem(t)
	_, n, err := f.s.TrashNode(ctx, f.space.ID, item.Key, []string{"sub", "f"})
	if err != nil || n.ID != file.ID || n.SpaceID != f.space.ID {
		t.Fatalf("TrashNode = %+v, %v", n, err)
	}
	// Restore the file alone from below the item, then the rest.
	if _, _, err := f.s.RestoreTrash(ctx, f.space.ID, item.Key, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "back"}); err != nil {
		t.Fatal(err)
	}
	if got := f.anyRec(t, dir.ID).Size; got != 0 {
		t.Fatalf("trashed folder size after a restore from below it = %d", got)
	}
	f.wantUndo(t, 0, 0)
	if got := f.read(t, file.ID); got != "content" {
		t.Fatalf("restored content = %q", got)
	}
	props, err := f.s.Props(ctx, f.space.ID, file.ID, "")
	if err != nil || len(props) != 1 || props[0].Value != "red" {
		t.Fatalf("restored props = %+v, %v", props, err)
	}
	restored, replaced, err := f.s.RestoreTrash(ctx, f.space.ID, item.Key, storage.Transfer{NodeID: dir.ID, NewParentID: f.root(), NewName: "dir"})
	if err != nil || replaced || restored.ID != dir.ID {
		t.Fatalf("RestoreTrash = %+v, %v, %v", restored, replaced, err)
	}
	if got := f.node(t, sub.ID); got.SpaceID != f.space.ID {
		t.Fatalf("restored descendant = %+v", got)
	}
	if items, _ := storage.AllTrashItems(ctx, f.s, f.space.ID); len(items) != 0 {
		t.Fatalf("trash after restoring the item = %+v", items)
	}
	if got := f.node(t, f.root()).Size; got != 7 {
		t.Fatalf("root size = %d", got)
	}
}

// Replaced content stays as a version, its content file kept; pruning,
// restoring and purging handle the content files.
func TestVersionsKeepContentFiles(t *testing.T) {
	f := newFixture(t)
	first := f.put(t, f.root(), "f", "one")
	oldBlob := f.blob(t, first.ID)
	f.clk.Advance(time.Second)
	f.put(t, f.root(), "f", "two!")
	if !f.blobExists(t, oldBlob) {
		t.Fatal("the replaced content file is gone")
	}
	f.wantUndo(t, 0, 3)
	vs, err := f.s.FileVersions(ctx, f.space.ID, first.ID)
	if err != nil || len(vs) != 1 || vs[0].Node.Size != 3 || vs[0].Node.ETag != first.ETag {
		t.Fatalf("FileVersions = %+v, %v", vs, err)
	}
	_, c, err := f.s.OpenVersion(ctx, f.space.ID, first.ID, vs[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	c.Close()
	if string(b) != "one" {
		t.Fatalf("version content = %q", b)
	}
	curBlob := f.blob(t, first.ID)
	restored, err := f.s.RestoreVersion(ctx, f.space.ID, first.ID, vs[0].Key, storage.Conditions{})
	if err != nil || restored.Size != 3 || restored.ModTime != first.ModTime {
		t.Fatalf("RestoreVersion = %+v, %v", restored, err)
	}
	if f.read(t, first.ID) != "one" || f.blob(t, first.ID) != oldBlob || !f.blobExists(t, curBlob) {
		t.Fatal("restore did not swap the content files")
	}
	f.wantUndo(t, 0, 4)
	if got := f.node(t, f.root()).Size; got != 3 {
		t.Fatalf("root size = %d", got)
	}
	// Delete the file and purge it: the version's content file goes too.
	if err := f.s.Remove(ctx, f.space.ID, first.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	f.wantUndo(t, 3, 4)
	if err := f.s.EmptyTrash(ctx, f.space.ID); err != nil {
		t.Fatal(err)
	}
	if f.blobExists(t, oldBlob) || f.blobExists(t, curBlob) {
		t.Fatal("purged versions' content files remain")
	}
	f.wantUndo(t, 0, 0)
	if got := countFiles(t, filepath.Join(f.dir, "blobs")); got != 0 {
		t.Fatalf("%d content files left", got)
	}
}

// The retention bounds the versions of a file and expires trash items and
// versions; an expiry removes content files.
func TestRetentionPrunesAndExpires(t *testing.T) {
	f := newFixture(t)
	f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{Trash: time.Hour, VersionsFor: time.Hour, VersionsMax: 2}})
	var blobs []string
	var file storage.Node
	for i := range 4 {
		file = f.put(t, f.root(), "f", strings.Repeat("v", i+1))
		blobs = append(blobs, f.blob(t, file.ID))
	}
	if vs, _ := f.s.FileVersions(ctx, f.space.ID, file.ID); len(vs) != 2 {
		t.Fatalf("%d versions, want 2", len(vs))
	}
	if f.blobExists(t, blobs[0]) || !f.blobExists(t, blobs[1]) {
		t.Fatal("pruning kept the wrong content files")
	}
	gone := f.put(t, f.root(), "gone", "bye")
	goneBlob := f.blob(t, gone.ID)
	if err := f.s.Remove(ctx, f.space.ID, gone.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.s.ExpireUndo(ctx); err != nil || n != 0 {
		t.Fatalf("ExpireUndo before the retention ran out = %d, %v", n, err)
	}
	f.clk.Advance(time.Hour)
	if n, err := f.s.ExpireUndo(ctx); err != nil || n != 3 {
		t.Fatalf("ExpireUndo = %d, %v; want 3", n, err)
	}
	if f.blobExists(t, goneBlob) || f.blobExists(t, blobs[1]) || f.blobExists(t, blobs[2]) || !f.blobExists(t, blobs[3]) {
		t.Fatal("expiry left content files, or took the file's")
	}
	f.wantUndo(t, 0, 0)
}

// An upload that needs room evicts the oldest trash and versions first,
// content files included; one that would not fit anyway evicts nothing.
func TestQuotaEvictsOldestFirst(t *testing.T) {
	f := newFixture(t)
	f.s.SetPersonalQuota(100)
	old := f.put(t, f.root(), "old", strings.Repeat("o", 40))
	oldBlob := f.blob(t, old.ID)
	if err := f.s.Remove(ctx, f.space.ID, old.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Second)
	newer := f.put(t, f.root(), "newer", strings.Repeat("n", 40))
	if err := f.s.Remove(ctx, f.space.ID, newer.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Second)
	if _, _, err := f.commit(f.root(), "huge", strings.Repeat("h", 101), storage.Commit{}); err == nil {
		t.Fatal("an upload past the quota passed")
	}
	f.wantUndo(t, 80, 0)
	f.put(t, f.root(), "fits", strings.Repeat("f", 50))
	if f.blobExists(t, oldBlob) {
		t.Fatal("the evicted item's content file remains")
	}
	item := f.onlyTrashItem(t)
	if item.Node.ID != newer.ID {
		t.Fatalf("kept %+v, want the newer item", item)
	}
	f.wantUndo(t, 40, 0)
}

// A file created where one was deleted comes back with its id, and the
// deleted content is its newest version.
func TestRecreateRevivesHistory(t *testing.T) {
	f := newFixture(t)
	first := f.put(t, f.root(), "f", "one")
	f.clk.Advance(time.Second)
	f.put(t, f.root(), "f", "two")
	if err := f.s.Remove(ctx, f.space.ID, first.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(time.Second)
	again, created, err := f.commit(f.root(), "f", "three", storage.Commit{})
	if err != nil || !created || again.ID != first.ID {
		t.Fatalf("re-create = %+v, %v, %v; want the deleted file's id, created", again, created, err)
	}
	vs, err := f.s.FileVersions(ctx, f.space.ID, first.ID)
	if err != nil || len(vs) != 2 || vs[0].Node.Size != 3 {
		t.Fatalf("versions = %+v, %v", vs, err)
	}
	if items, _ := storage.AllTrashItems(ctx, f.s, f.space.ID); len(items) != 0 {
		t.Fatalf("trash = %+v", items)
	}
	f.wantUndo(t, 0, 6)
	if got := f.node(t, f.root()).Size; got != 5 {
		t.Fatalf("root size = %d", got)
	}
}

// Every rewrite the trash makes keeps the records consistent with a
// recount: sizes of trash items, the trash and versions counters.
func TestTrashMoveOverwriteGoesToTrash(t *testing.T) {
	f := newFixture(t)
	src := f.put(t, f.root(), "src", "source")
	dst := f.put(t, f.root(), "dst", "target!")
	dstBlob := f.blob(t, dst.ID)
	if _, replaced, err := f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: src.ID, NewParentID: f.root(), NewName: "dst", Overwrite: true}); err != nil || !replaced {
		t.Fatalf("Move = %v, %v", replaced, err)
	}
	item := f.onlyTrashItem(t)
	if item.Node.ID != dst.ID || !f.blobExists(t, dstBlob) {
		t.Fatalf("replaced target not in the trash: %+v", item)
	}
	// Restoring onto the moved file puts that one into the trash in turn.
	if _, replaced, err := f.s.RestoreTrash(ctx, f.space.ID, item.Key, storage.Transfer{NodeID: dst.ID, NewParentID: f.root(), NewName: "dst", Overwrite: true}); err != nil || !replaced {
		t.Fatalf("RestoreTrash = %v, %v", replaced, err)
	}
	if got := f.onlyTrashItem(t); got.Node.ID != src.ID {
		t.Fatalf("trash = %+v", got)
	}
	f.wantUndo(t, 6, 0)
	if got := f.read(t, dst.ID); got != "target!" {
		t.Fatalf("restored = %q", got)
	}
}

// Inline content of versions and trash items leaves the inline bucket when
// they expire or are evicted, and not before.
func TestInlineUndoLeavesWithIt(t *testing.T) {
	f := newInlineFixture(t, 100)
	f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{Trash: time.Hour, VersionsFor: time.Hour, VersionsMax: 10}})
	file := f.put(t, f.root(), "f", "one")
	f.put(t, f.root(), "f", "two")
	gone := f.put(t, f.root(), "gone", "bye")
	if err := f.s.Remove(ctx, f.space.ID, gone.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	f.wantStorage(t, 3, 0)
	f.clk.Advance(time.Hour)
	if n, err := f.s.ExpireUndo(ctx); err != nil || n != 2 {
		t.Fatalf("ExpireUndo = %d, %v; want 2", n, err)
	}
	f.wantStorage(t, 1, 0)

	f.s.SetPersonalQuota(10)
	f.put(t, f.root(), "f", "three")
	f.wantStorage(t, 2, 0) // "two" kept as a version
	f.put(t, f.root(), "g", "12345")
	f.wantStorage(t, 2, 0) // "two" evicted for g
	if vs, err := f.s.FileVersions(ctx, f.space.ID, file.ID); err != nil || len(vs) != 0 {
		t.Fatalf("versions = %+v, %v", vs, err)
	}
}

// A space's counters written before the trash (props and reserved only)
// read as no trash and no versions, and grow the two new ones in place.
func TestCountersFromBeforeTheTrash(t *testing.T) {
	f := newFixture(t)
	err := f.s.update(func(tx *txn) error {
		old := binary.AppendVarint(binary.AppendVarint(nil, 7), 3)
		return tx.usageBucket().Put(spaceUsageKey(f.space.ID), old)
	})
	if err != nil {
		t.Fatal(err)
	}
	u, err := f.s.Usage(ctx, f.space.ID)
	if err != nil || u != (storage.Usage{Props: 7, Reserved: 3}) {
		t.Fatalf("usage = %+v, %v", u, err)
	}
	file := f.put(t, f.root(), "f", "abc")
	if err := f.s.Remove(ctx, f.space.ID, file.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if u, _ := f.s.Usage(ctx, f.space.ID); u != (storage.Usage{Props: 7, Reserved: 3, Trash: 3, Nodes: 1}) {
		t.Fatalf("usage = %+v", u)
	}
}

// A trash item bigger than a purge's transaction goes in parts: between
// two the item is whole, every folder's size is what is left below it and
// the space's trash usage is the item's size; at the end nothing is left.
func TestPurgeInParts(t *testing.T) {
	const perPart = 7
	f := newFixture(t)
	big := f.mkdir(t, f.root(), "big")
	sub := f.mkdir(t, big.ID, "sub")
	deeper := f.mkdir(t, sub.ID, "deeper")
	f.put(t, big.ID, "a.txt", "0123456789")
	for i := range 4 * perPart {
		f.put(t, []string{sub.ID, deeper.ID}[i%2], uuid.NewString(), strings.Repeat("x", i))
	}
	if err := f.s.Remove(ctx, f.space.ID, big.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	items, err := storage.AllTrashItems(ctx, f.s, f.space.ID)
	if err != nil || len(items) != 1 {
		t.Fatalf("trash items %v, %v", items, err)
	}
	var gone bool
	err = f.s.update(func(tx *txn) error {
		item, err := tx.trashItem(f.space.ID, items[0].Key)
		if err != nil {
			return err
		}
		gone, err = tx.purgeTrashItemPart(f.space.ID, item, perPart)
		return err
	})
	if err != nil || gone {
		t.Fatalf("first part: gone %v, %v", gone, err)
	}
	var left int64
	err = f.s.view(func(tx *txn) error {
		top, ok, err := tx.node(big.ID)
		if err != nil || !ok {
			return fmt.Errorf("the item's folder after a part: %v, %w", ok, err)
		}
		left = top.Size
		return sizesAddUp(tx, top)
	})
	if err != nil {
		t.Fatal(err)
	}
	if u := f.usage(t); u.Trash != left || left == 0 {
		t.Errorf("after a part the trash usage is %d, the item's folder %d", u.Trash, left)
	}
	if problems, _ := runCheck(t, f.s, storage.CheckOptions{Deep: true}); len(problems) > 0 {
		t.Errorf("the check after a part: %v", problems)
	}

	commits := f.s.WriteCommits()
	if err := f.s.purgeInParts(ctx, trashPurge{spaceID: f.space.ID, key: items[0].Key}, perPart); err != nil {
		t.Fatal(err)
	}
	if parts := f.s.WriteCommits() - commits; parts < 3 {
		t.Errorf("the rest went in %d transactions, want several", parts)
	}
	if items, _ := storage.AllTrashItems(ctx, f.s, f.space.ID); len(items) != 0 {
		t.Fatalf("trash after the purge: %v", items)
	}
	if u := f.usage(t); u.Trash != 0 || u.Files != 0 {
		t.Errorf("usage after the purge: %+v", u)
	}
	if problems, _ := runCheck(t, f.s, storage.CheckOptions{Deep: true}); len(problems) > 0 {
		t.Errorf("the check after the purge: %v", problems)
	}
}

// sizesAddUp checks that the size of folder r and of every folder below it
// is the sum of its children's.
func sizesAddUp(tx *txn, r rec) error {
	var sum int64
	err := tx.scanChildren(r.ID, "", 0, func(child rec) error {
		sum += child.Size
		if child.IsFolder() {
			return sizesAddUp(tx, child)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if sum != r.Size {
		return fmt.Errorf("folder %s has size %d, its children %d", r.Name, r.Size, sum)
	}
	return nil
}

func (f *fixture) usage(t *testing.T) storage.Usage {
	t.Helper()
	u, err := f.s.Usage(ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestPurgeBoundsChangedPages checks that a purge of a big trash item
// sizes its transactions by the pages they change, which bound the
// memory of their commits, rather than by the nodes they destroy: in a
// database whose buckets span many pages, each node destroyed changes
// pages of its own in several of them.
func TestPurgeBoundsChangedPages(t *testing.T) {
	f := newInlineFixture(t, 0)
	keep := f.mkdir(t, f.root(), "keep")
	big := f.mkdir(t, f.root(), "big")
	f.seedInlineFiles(t, keep.ID, 12000)
	f.seedInlineFiles(t, big.ID, 12000)
	if err := f.s.Remove(ctx, f.space.ID, big.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	dirtyNodes := func() int64 {
		st := f.s.db.Stats()
		return st.TxStats.GetNodeCount()
	}
	before, commits := dirtyNodes(), f.s.WriteCommits()
	if err := f.s.EmptyTrash(ctx, f.space.ID); err != nil {
		t.Fatal(err)
	}
	dirty, parts := dirtyNodes()-before, int64(f.s.WriteCommits()-commits)
	perPart := dirty / max(parts, 1)
	t.Logf("%d transactions changed %d nodes of bbolt's, %d each on average", parts, dirty, perPart)
	if perPart > purgeDirtyPerTxn*5/4 {
		t.Errorf("the purge's transactions changed %d of bbolt's nodes each on average, want about %d at most", perPart, purgeDirtyPerTxn)
	}
	if items, _ := storage.AllTrashItems(ctx, f.s, f.space.ID); len(items) != 0 {
		t.Fatalf("trash after emptying: %v", items)
	}
	if problems, _ := runCheck(t, f.s, storage.CheckOptions{}); len(problems) > 0 {
		t.Errorf("the check after emptying: %d problems, the first %v", len(problems), problems[0])
	}
}
