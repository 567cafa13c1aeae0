package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// trashTests are the conformance tests of storage.Trash: what a remove,
// and the target a move or copy replaces, leaves to restore or purge.
var trashTests = []conformanceTest{
	{"TrashFileRoundTrip", testTrashFileRoundTrip},
	{"TrashFolderRoundTrip", testTrashFolderRoundTrip},
	{"TrashReadInsideItem", testTrashReadInsideItem},
	{"TrashRestoreFromBelow", testTrashRestoreFromBelow},
	{"TrashRestoreElsewhere", testTrashRestoreElsewhere},
	{"TrashRestoreOverExisting", testTrashRestoreOverExisting},
	{"TrashRestoreRefusals", testTrashRestoreRefusals},
	{"TrashRestoreHonoursLocks", testTrashRestoreHonoursLocks},
	{"TrashTransferOverwrite", testTrashTransferOverwrite},
	{"TrashPurge", testTrashPurge},
	{"TrashEmpty", testTrashEmpty},
	{"TrashOrderAndKeys", testTrashOrderAndKeys},
	{"TrashOfOtherSpaces", testTrashOfOtherSpaces},
	{"TrashOff", testTrashOff},
	{"TrashDropsLocks", testTrashDropsLocks},
	{"TrashRetentionPerSpace", testTrashRetentionPerSpace},
}

// A removed file leaves the live space with its size, and waits in the
// trash with its id, content and properties until it is restored.
func testTrashFileRoundTrip(t *testing.T, f *fixture) {
	a := f.mkdir(t, f.root(), "a")
	file := f.put(t, a.ID, "f.txt", "hello")
	color := prop("urn:x", "color", "", "blue")
	fav := prop("http://owncloud.org/ns", "favorite", user.ID, "1")
	f.patch(t, file.ID, set(color), set(fav))
	props := propBytes(color, fav)
	before := f.node(t, a.ID)

	f.remove(t, file.ID)
	f.wantGone(t, file)
	if got := f.node(t, a.ID); got.Size != before.Size-5 || got.ETag == before.ETag {
		t.Fatalf("folder after the remove = %+v, before %+v", got, before)
	}
	f.wantUsage(t, storage.Usage{Trash: 5, Props: props})
	it := f.trashed(t, file.ID)
	if err := storage.ValidTrashKey(it.Key); err != nil {
		t.Fatalf("trash key %q: %v", it.Key, err)
	}
	n := it.Node
	if it.Location != "a/f.txt" || n.Name != "f.txt" || n.ParentID != a.ID || n.Kind != storage.KindFile ||
		n.Size != 5 || n.Checksums != file.Checksums || it.Deleted.Before(file.ModTime) {
		t.Fatalf("trash item = %+v, of the file %+v", it, file)
	}
	item, top, err := f.s.TrashNode(f.ctx, f.space.ID, it.Key, nil)
	if err != nil || item.Key != it.Key || top.ID != file.ID || top.Size != 5 {
		t.Fatalf("TrashNode of the item = %+v, %+v, %v", item, top, err)
	}

	restored := f.restoreItem(t, it)
	if restored.ID != file.ID || restored.ParentID != a.ID || restored.Name != "f.txt" || restored.Size != 5 {
		t.Fatalf("restored %+v, was %+v", restored, file)
	}
	if got := f.read(t, file.ID); got != "hello" {
		t.Fatalf("restored content %q", got)
	}
	if got, err := f.s.Child(f.ctx, f.space.ID, a.ID, "f.txt"); err != nil || got.ID != file.ID {
		t.Fatalf("Child after the restore = %+v, %v", got, err)
	}
	f.wantProps(t, file.ID, color, fav)
	if got := f.node(t, a.ID); got.Size != before.Size {
		t.Fatalf("folder size after the restore %d, want %d", got.Size, before.Size)
	}
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{Files: 5, Props: props})
}

// deepTree is a folder with files and folders five levels down:
//
//	a/ a/h a/empty/ a/b/ a/b/g a/b/c/ a/b/c/d/ a/b/c/d/e/ a/b/c/d/e/f1
type deepTree struct {
	a, b, c, d, e, empty, h, g, f1 storage.Node
}

// deepTreeSize is the size of a deepTree's files.
const deepTreeSize = 3 + 2 + 1

func (f *fixture) deepTree(t *testing.T, parent string) deepTree {
	t.Helper()
	var d deepTree
	d.a = f.mkdir(t, parent, "a")
	d.h = f.put(t, d.a.ID, "h", "hhh")
	d.empty = f.mkdir(t, d.a.ID, "empty")
	d.b = f.mkdir(t, d.a.ID, "b")
	d.g = f.put(t, d.b.ID, "g", "gg")
	d.c = f.mkdir(t, d.b.ID, "c")
	d.d = f.mkdir(t, d.c.ID, "d")
	d.e = f.mkdir(t, d.d.ID, "e")
	d.f1 = f.put(t, d.e.ID, "f1", "1")
	return d
}

func (d deepTree) all() []storage.Node {
	return []storage.Node{d.a, d.b, d.c, d.d, d.e, d.empty, d.h, d.g, d.f1}
}

// A removed folder takes its whole subtree out of the live space, ids,
// properties and favourites kept, and a restore brings all of it back.
func testTrashFolderRoundTrip(t *testing.T, f *fixture) {
	d := f.deepTree(t, f.root())
	shared := prop("urn:x", "color", "", "red")
	fav := prop("http://owncloud.org/ns", "favorite", user.ID, "1")
	f.patch(t, d.b.ID, set(shared))
	f.patch(t, d.f1.ID, set(shared), set(fav))
	props := propBytes(shared, shared, fav)

	f.remove(t, d.a.ID)
	for _, n := range d.all() {
		f.wantGone(t, n)
	}
	if names := f.names(t, f.root()); len(names) != 0 {
		t.Fatalf("root after the remove holds %v", names)
	}
	if root := f.node(t, f.root()); root.Size != 0 {
		t.Fatalf("root size %d after the remove", root.Size)
	}
	f.wantUsage(t, storage.Usage{Trash: deepTreeSize, Props: props})
	it := f.trashed(t, d.a.ID)
	if it.Location != "a" || it.Node.Name != "a" || it.Node.ParentID != f.root() || !it.Node.IsFolder() ||
		it.Node.Size != deepTreeSize {
		t.Fatalf("trash item of the folder = %+v", it)
	}

	f.restoreItem(t, it)
	for _, n := range d.all() {
		got := f.node(t, n.ID)
		if got.ParentID != n.ParentID || got.Name != n.Name || got.Kind != n.Kind {
			t.Fatalf("restored %+v, was %+v", got, n)
		}
	}
	if got := f.node(t, d.a.ID).Size; got != deepTreeSize {
		t.Fatalf("restored folder size %d, want %d", got, deepTreeSize)
	}
	if got := f.node(t, d.c.ID).Size; got != 1 {
		t.Fatalf("restored folder size %d below it, want 1", got)
	}
	if got := f.read(t, d.f1.ID); got != "1" {
		t.Fatalf("restored content %q", got)
	}
	if names := f.names(t, d.a.ID); !slices.Equal(names, []string{"b", "empty", "h"}) {
		t.Fatalf("restored folder holds %v", names)
	}
	f.wantProps(t, d.b.ID, shared)
	f.wantProps(t, d.f1.ID, shared, fav)
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{Files: deepTreeSize, Props: props})
}

// TrashNode and ReadTrashDir read inside a removed folder, within that
// item only.
func testTrashReadInsideItem(t *testing.T, f *fixture) {
	d := f.deepTree(t, f.root())
	other := f.put(t, f.root(), "other", "o")
	f.remove(t, d.a.ID)
	f.remove(t, other.ID)
	it := f.trashed(t, d.a.ID)
	otherItem := f.trashed(t, other.ID)

	tests := []struct {
		names []string
		want  string // node id
		err   error
	}{
		{nil, d.a.ID, nil},
		{[]string{"b"}, d.b.ID, nil},
		{[]string{"b", "c", "d", "e", "f1"}, d.f1.ID, nil},
		{[]string{"h"}, d.h.ID, nil},
		{[]string{"b", "nope"}, "", storage.ErrNotFound},
		{[]string{"h", "below-a-file"}, "", storage.ErrNotFound},
		{[]string{"other"}, "", storage.ErrNotFound},
	}
	for _, tc := range tests {
		item, n, err := f.s.TrashNode(f.ctx, f.space.ID, it.Key, tc.names)
		wantErr(t, fmt.Sprintf("TrashNode %q", tc.names), err, tc.err)
		if err == nil && (n.ID != tc.want || item.Key != it.Key) {
			t.Fatalf("TrashNode %q = %+v in %+v, want node %s", tc.names, n, item, tc.want)
		}
	}
	n, err := f.trashNode(it.Key, "b", "c", "d", "e", "f1")
	if err != nil || n.Size != 1 || n.Kind != storage.KindFile || n.Checksums != d.f1.Checksums {
		t.Fatalf("TrashNode of a file deep in the item = %+v, %v; was %+v", n, err, d.f1)
	}
	for _, key := range []string{"", "nope", "1.", "x.y", "../" + it.Key, it.Key + "/b"} {
		_, _, err := f.s.TrashNode(f.ctx, f.space.ID, key, nil)
		wantErr(t, fmt.Sprintf("TrashNode of key %q", key), err, storage.ErrNotFound)
	}

	if names := f.trashNames(t, it.Key, d.a.ID); !slices.Equal(names, []string{"b", "empty", "h"}) {
		t.Fatalf("ReadTrashDir of the item = %v", names)
	}
	if names := f.trashNames(t, it.Key, d.e.ID); !slices.Equal(names, []string{"f1"}) {
		t.Fatalf("ReadTrashDir deep in the item = %v", names)
	}
	page, err := f.s.ReadTrashDir(f.ctx, f.space.ID, it.Key, d.a.ID, "b", 1)
	if err != nil || !slices.Equal(nodeNames(page), []string{"empty"}) {
		t.Fatalf("ReadTrashDir after %q, limit 1 = %v, %v", "b", nodeNames(page), err)
	}
	for what, folder := range map[string]string{
		"the live root":       f.root(),
		"another item's node": otherItem.Node.ID,
		"an unknown id":       "no-such-node",
	} {
		_, err := f.s.ReadTrashDir(f.ctx, f.space.ID, it.Key, folder, "", 0)
		wantErr(t, "ReadTrashDir of "+what, err, storage.ErrNotFound)
	}
	_, err = f.s.ReadTrashDir(f.ctx, f.space.ID, otherItem.Key, d.a.ID, "", 0)
	wantErr(t, "ReadTrashDir of a folder of another item", err, storage.ErrNotFound)
	_, err = f.s.ReadTrashDir(f.ctx, f.space.ID, "1.nope", d.a.ID, "", 0)
	wantErr(t, "ReadTrashDir of an unknown key", err, storage.ErrNotFound)
}

// trashNode walks names from the node of trash item key.
func (f *fixture) trashNode(key string, names ...string) (storage.Node, error) {
	_, n, err := f.s.TrashNode(f.ctx, f.space.ID, key, names)
	return n, err
}

// A node restored from below a removed folder comes back alone and leaves
// the item smaller; the rest comes back with the item.
func testTrashRestoreFromBelow(t *testing.T, f *fixture) {
	d := f.deepTree(t, f.root())
	fav := prop("http://owncloud.org/ns", "favorite", user.ID, "1")
	f.patch(t, d.g.ID, set(fav))
	f.remove(t, d.a.ID)
	it := f.trashed(t, d.a.ID)

	g := f.restore(t, it.Key, d.g.ID, f.root(), "g-back")
	if g.ID != d.g.ID || g.ParentID != f.root() || g.Name != "g-back" || g.Size != 2 {
		t.Fatalf("restored from below = %+v, was %+v", g, d.g)
	}
	if got := f.read(t, d.g.ID); got != "gg" {
		t.Fatalf("restored content %q", got)
	}
	f.wantProps(t, d.g.ID, fav)
	if got := f.trashed(t, d.a.ID); got.Key != it.Key || got.Node.Size != deepTreeSize-2 {
		t.Fatalf("item after a restore from below it = %+v, want %d bytes", got, deepTreeSize-2)
	}
	f.wantUsage(t, storage.Usage{Files: 2, Trash: deepTreeSize - 2, Props: propBytes(fav)})
	_, err := f.trashNode(it.Key, "b", "g")
	wantErr(t, "TrashNode of a restored node", err, storage.ErrNotFound)
	if names := f.trashNames(t, it.Key, d.b.ID); !slices.Equal(names, []string{"c"}) {
		t.Fatalf("folder in the trash after a restore from it holds %v", names)
	}
	if n, err := f.trashNode(it.Key, "b"); err != nil || n.Size != 1 {
		t.Fatalf("folder in the trash after a restore from it = %+v, %v; want 1 byte", n, err)
	}

	// A folder from below comes back with what is below it.
	c := f.restore(t, it.Key, d.c.ID, f.root(), "c")
	if c.ID != d.c.ID || c.Size != 1 || f.read(t, d.f1.ID) != "1" {
		t.Fatalf("folder restored from below = %+v", c)
	}
	f.wantUsage(t, storage.Usage{Files: 3, Trash: deepTreeSize - 3, Props: propBytes(fav)})

	a := f.restoreItem(t, f.trashed(t, d.a.ID))
	if a.Size != 3 {
		t.Fatalf("the rest restored = %+v, want 3 bytes", a)
	}
	if names := f.names(t, d.b.ID); len(names) != 0 {
		t.Fatalf("restored folder holds what came back before: %v", names)
	}
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{Files: deepTreeSize, Props: propBytes(fav)})
	if root := f.node(t, f.root()); root.Size != deepTreeSize {
		t.Fatalf("root size %d, want %d", root.Size, deepTreeSize)
	}
}

// A restore may put the node into another folder under another name.
func testTrashRestoreElsewhere(t *testing.T, f *fixture) {
	a := f.mkdir(t, f.root(), "a")
	dst := f.mkdir(t, f.root(), "dst")
	file := f.put(t, a.ID, "f", "abc")
	f.remove(t, file.ID)
	it := f.trashed(t, file.ID)
	n := f.restore(t, it.Key, file.ID, dst.ID, "renamed")
	if n.ID != file.ID || n.ParentID != dst.ID || n.Name != "renamed" {
		t.Fatalf("restored elsewhere = %+v", n)
	}
	if got, err := f.s.Child(f.ctx, f.space.ID, dst.ID, "renamed"); err != nil || got.ID != file.ID {
		t.Fatalf("Child at the new place = %+v, %v", got, err)
	}
	_, err := f.s.Child(f.ctx, f.space.ID, a.ID, "f")
	wantErr(t, "Child at the old place", err, storage.ErrNotFound)
	if got := f.node(t, dst.ID).Size; got != 3 {
		t.Fatalf("new folder size %d, want 3", got)
	}
	if got := f.node(t, a.ID).Size; got != 0 {
		t.Fatalf("old folder size %d, want 0", got)
	}
	f.wantUsage(t, storage.Usage{Files: 3})
}

// A restore onto an existing name replaces it only with Overwrite, and the
// replaced node goes to the trash in turn.
func testTrashRestoreOverExisting(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "ffff")
	taken := f.put(t, f.root(), "taken", "tt")
	f.remove(t, file.ID)
	it := f.trashed(t, file.ID)

	_, _, err := f.s.RestoreTrash(f.ctx, f.space.ID, it.Key, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "taken"})
	wantErr(t, "RestoreTrash onto an existing name", err, storage.ErrExists)
	f.wantTrashed(t, file.ID)
	if got := f.node(t, taken.ID); got.Name != "taken" || f.read(t, taken.ID) != "tt" {
		t.Fatalf("the existing file after a refused restore = %+v", got)
	}
	f.wantUsage(t, storage.Usage{Files: 2, Trash: 4})

	n, replaced, err := f.s.RestoreTrash(f.ctx, f.space.ID, it.Key, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "taken", Overwrite: true})
	if err != nil || !replaced || n.ID != file.ID || n.Name != "taken" {
		t.Fatalf("RestoreTrash with Overwrite = %+v, replaced %v, %v", n, replaced, err)
	}
	if got, err := f.s.Child(f.ctx, f.space.ID, f.root(), "taken"); err != nil || got.ID != file.ID || f.read(t, file.ID) != "ffff" {
		t.Fatalf("Child after the restore = %+v, %v", got, err)
	}
	f.wantGone(t, taken)
	if it := f.trashed(t, taken.ID); it.Location != "taken" || it.Node.Size != 2 {
		t.Fatalf("the replaced file's trash item = %+v", it)
	}
	f.wantTrashed(t, taken.ID)
	f.wantUsage(t, storage.Usage{Files: 4, Trash: 2})
}

// A restore that cannot be done changes nothing.
func testTrashRestoreRefusals(t *testing.T, f *fixture) {
	a := f.mkdir(t, f.root(), "a")
	file := f.put(t, a.ID, "f", "abc")
	live := f.put(t, f.root(), "live", "l")
	f.remove(t, file.ID)
	f.remove(t, a.ID)
	it := f.trashed(t, file.ID)
	folderItem := f.trashed(t, a.ID)
	usage := f.usage(t)

	tests := []struct {
		name string
		key  string
		tr   storage.Transfer
		want error
	}{
		{"an unknown key", "1.nope", storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "f"}, storage.ErrNotFound},
		{"a malformed key", "../" + it.Key, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "f"}, storage.ErrNotFound},
		{"a node of another item", folderItem.Key, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "f"}, storage.ErrNotFound},
		{"a live node", it.Key, storage.Transfer{NodeID: live.ID, NewParentID: f.root(), NewName: "f"}, storage.ErrNotFound},
		{"into its trashed folder", it.Key, storage.Transfer{NodeID: file.ID, NewParentID: a.ID, NewName: "f"}, storage.ErrConflict},
		{"into a missing folder", it.Key, storage.Transfer{NodeID: file.ID, NewParentID: "no-such-folder", NewName: "f"}, storage.ErrConflict},
		{"into a file", it.Key, storage.Transfer{NodeID: file.ID, NewParentID: live.ID, NewName: "f"}, storage.ErrConflict},
		{"under an invalid name", it.Key, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "x/y"}, storage.ErrInvalid},
		{"under no name", it.Key, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: ""}, storage.ErrInvalid},
	}
	for _, tc := range tests {
		_, _, err := f.s.RestoreTrash(f.ctx, f.space.ID, tc.key, tc.tr)
		wantErr(t, "RestoreTrash "+tc.name, err, tc.want)
	}
	f.wantTrashed(t, a.ID, file.ID)
	f.wantUsage(t, usage)
	if names := f.names(t, f.root()); !slices.Equal(names, []string{"live"}) {
		t.Fatalf("root after refused restores holds %v", names)
	}
}

// A restore changes its target folder, or the node it replaces, under the
// locks on them: without the lock's token it is refused.
func testTrashRestoreHonoursLocks(t *testing.T, f *fixture) {
	dst := f.mkdir(t, f.root(), "dst")
	file := f.put(t, f.root(), "f", "abc")
	f.remove(t, file.ID)
	it := f.trashed(t, file.ID)
	l := f.lock(t, dst.ID, false, storage.LockExclusive)

	into := storage.Transfer{NodeID: file.ID, NewParentID: dst.ID, NewName: "f",
		Conditions: storage.Conditions{Locks: &storage.LockTokens{User: user.ID}}}
	_, _, err := f.s.RestoreTrash(f.ctx, f.space.ID, it.Key, into)
	wantErr(t, "RestoreTrash into a locked folder without its token", err, storage.ErrLocked)
	f.wantTrashed(t, file.ID)
	into.Locks.Tokens = []string{l.Token}
	if _, _, err := f.s.RestoreTrash(f.ctx, f.space.ID, it.Key, into); err != nil {
		t.Fatalf("RestoreTrash into a locked folder with its token: %v", err)
	}
	wantTokens(t, "locks after the restore", f.spaceLocks(t), l)

	// A locked file the restore would replace.
	other := f.put(t, f.root(), "other", "o")
	f.remove(t, other.ID)
	taken := f.put(t, f.root(), "taken", "t")
	held := f.lock(t, taken.ID, false, storage.LockExclusive)
	onto := storage.Transfer{NodeID: other.ID, NewParentID: f.root(), NewName: "taken", Overwrite: true,
		Conditions: storage.Conditions{Locks: &storage.LockTokens{User: user.ID}}}
	_, _, err = f.s.RestoreTrash(f.ctx, f.space.ID, f.trashed(t, other.ID).Key, onto)
	wantErr(t, "RestoreTrash onto a locked file without its token", err, storage.ErrLocked)
	f.wantTrashed(t, other.ID)
	if got := f.node(t, taken.ID); got.Name != "taken" {
		t.Fatalf("the locked file after a refused restore = %+v", got)
	}
	onto.Locks.Tokens = []string{held.Token}
	if _, replaced, err := f.s.RestoreTrash(f.ctx, f.space.ID, f.trashed(t, other.ID).Key, onto); err != nil || !replaced {
		t.Fatalf("RestoreTrash onto a locked file with its token: replaced %v, %v", replaced, err)
	}
	f.wantTrashed(t, taken.ID)
	wantTokens(t, "locks after the replacing restore", f.spaceLocks(t), l)
}

// The target a move or a copy with Overwrite replaces goes to the trash.
func testTrashTransferOverwrite(t *testing.T, f *fixture) {
	color := prop("urn:x", "color", "", "green")
	for _, move := range []bool{true, false} {
		t.Run(fmt.Sprint("move ", move), func(t *testing.T) {
			f := f.projectSpace(t)
			src := f.put(t, f.root(), "src", "src")
			target := f.put(t, f.root(), "target", "target!")
			f.patch(t, target.ID, set(color))
			tr := storage.Transfer{NodeID: src.ID, NewParentID: f.root(), NewName: "target", Overwrite: true}
			transfer := f.s.Copy
			files := int64(6)
			if move {
				transfer = f.s.Move
				files = 3
			}
			n, replaced, err := transfer(f.ctx, f.space.ID, tr)
			if err != nil || !replaced {
				t.Fatalf("transfer onto an existing target = %+v, replaced %v, %v", n, replaced, err)
			}
			f.wantGone(t, target)
			it := f.trashed(t, target.ID)
			if it.Location != "target" || it.Node.Size != 7 {
				t.Fatalf("trash item of the replaced target = %+v", it)
			}
			f.wantUsage(t, storage.Usage{Files: files, Trash: 7, Props: propBytes(color)})
			back := f.restore(t, it.Key, target.ID, f.root(), "target-back")
			if back.ID != target.ID || f.read(t, target.ID) != "target!" {
				t.Fatalf("replaced target restored = %+v", back)
			}
			f.wantProps(t, target.ID, color)
		})
	}
	t.Run("a folder onto a folder", func(t *testing.T) {
		f := f.projectSpace(t)
		src := f.mkdir(t, f.root(), "src")
		f.put(t, src.ID, "in-src", "s")
		target := f.deepTree(t, f.root())
		tr := storage.Transfer{NodeID: src.ID, NewParentID: f.root(), NewName: "a", Overwrite: true}
		if _, replaced, err := f.s.Move(f.ctx, f.space.ID, tr); err != nil || !replaced {
			t.Fatalf("Move of a folder onto a folder: replaced %v, %v", replaced, err)
		}
		for _, n := range target.all() {
			f.wantGone(t, n)
		}
		it := f.trashed(t, target.a.ID)
		if it.Location != "a" || it.Node.Size != deepTreeSize || !it.Node.IsFolder() {
			t.Fatalf("trash item of the replaced folder = %+v", it)
		}
		if names := f.trashNames(t, it.Key, target.a.ID); !slices.Equal(names, []string{"b", "empty", "h"}) {
			t.Fatalf("the replaced folder in the trash holds %v", names)
		}
		f.wantUsage(t, storage.Usage{Files: 1, Trash: deepTreeSize})
	})
}

// Purging an item destroys it with its properties and gives its bytes
// back at once; the other items stay.
func testTrashPurge(t *testing.T, f *fixture) {
	color := prop("urn:x", "color", "", "violet")
	d := f.deepTree(t, f.root())
	f.patch(t, d.f1.ID, set(color))
	kept := f.put(t, f.root(), "kept", "kk")
	f.remove(t, d.a.ID)
	f.remove(t, kept.ID)
	f.wantUsage(t, storage.Usage{Trash: deepTreeSize + 2, Props: propBytes(color)})
	it := f.trashed(t, d.a.ID)

	if err := f.s.PurgeTrash(f.ctx, f.space.ID, it.Key); err != nil {
		t.Fatalf("PurgeTrash: %v", err)
	}
	f.wantUsage(t, storage.Usage{Trash: 2})
	f.wantTrashed(t, kept.ID)
	wantErr(t, "PurgeTrash again", f.s.PurgeTrash(f.ctx, f.space.ID, it.Key), storage.ErrNotFound)
	wantErr(t, "PurgeTrash of a malformed key", f.s.PurgeTrash(f.ctx, f.space.ID, "x/"+it.Key), storage.ErrNotFound)
	_, _, err := f.s.TrashNode(f.ctx, f.space.ID, it.Key, nil)
	wantErr(t, "TrashNode of a purged item", err, storage.ErrNotFound)
	_, _, err = f.s.RestoreTrash(f.ctx, f.space.ID, it.Key, storage.Transfer{NodeID: d.a.ID, NewParentID: f.root(), NewName: "a"})
	wantErr(t, "RestoreTrash of a purged item", err, storage.ErrNotFound)
	for _, n := range d.all() {
		f.wantGone(t, n)
	}
	f.restoreItem(t, f.trashed(t, kept.ID))
	f.wantUsage(t, storage.Usage{Files: 2})
}

// Emptying the trash purges every item of the space at once.
func testTrashEmpty(t *testing.T, f *fixture) {
	fav := prop("http://owncloud.org/ns", "favorite", user.ID, "1")
	d := f.deepTree(t, f.root())
	f.patch(t, d.g.ID, set(fav))
	file := f.put(t, f.root(), "file", "12345")
	f.replace(t, file.ID, "123")
	f.remove(t, d.a.ID)
	f.remove(t, file.ID)
	f.wantUsage(t, storage.Usage{Trash: deepTreeSize + 3, Versions: 5, Props: propBytes(fav)})

	if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
		t.Fatalf("EmptyTrash: %v", err)
	}
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{})
	if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
		t.Fatalf("EmptyTrash of an empty trash: %v", err)
	}
	// What was emptied does not come back with a new file of its name.
	n, created, err := f.commit(f.space.ID, "new", storage.Commit{ParentID: f.root(), Name: "file"})
	if err != nil || !created || n.ID == file.ID {
		t.Fatalf("a file where an emptied one was = %+v, created %v, %v", n, created, err)
	}
	f.wantVersions(t, n.ID)
}

// The trash lists newest first; every removal has its own key, a node
// removed again after its restore a new one.
func testTrashOrderAndKeys(t *testing.T, f *fixture) {
	x := f.put(t, f.root(), "x", "x")
	y := f.put(t, f.root(), "y", "y")
	z := f.put(t, f.root(), "z", "z")
	for _, n := range []storage.Node{x, y, z} {
		f.remove(t, n.ID)
		f.tick()
	}
	items := f.trash(t)
	f.wantTrashed(t, z.ID, y.ID, x.ID)
	for i := 1; i < len(items); i++ {
		if !items[i].Deleted.Before(items[i-1].Deleted) || items[i].Key == items[i-1].Key {
			t.Fatalf("trash items out of order: %+v", items)
		}
	}
	first := f.trashed(t, y.ID)
	f.restoreItem(t, first)
	f.tick()
	f.remove(t, y.ID)
	again := f.trashed(t, y.ID)
	if again.Key == first.Key || !again.Deleted.After(first.Deleted) {
		t.Fatalf("a node removed again: %+v, first %+v", again, first)
	}
	f.wantTrashed(t, y.ID, z.ID, x.ID)
	if !slices.IsSortedFunc(f.trash(t), func(a, b storage.TrashItem) int { return b.Deleted.Compare(a.Deleted) }) {
		t.Fatal("trash not newest first")
	}
}

// A space's trash and versions are no one else's: asked with another
// space's id, every item, node and version is ErrNotFound and stays as
// it was.
func testTrashOfOtherSpaces(t *testing.T, f *fixture) {
	folder := f.mkdir(t, f.root(), "folder")
	file := f.put(t, folder.ID, "f", "one")
	f.replace(t, file.ID, "two")
	kept := f.put(t, f.root(), "kept", "three")
	f.replace(t, kept.ID, "four")
	v := f.versions(t, kept.ID)[0]
	f.remove(t, folder.ID)
	it := f.trashed(t, folder.ID)
	usage := f.usage(t)

	other := f.projectSpace(t)
	into := storage.Transfer{NodeID: folder.ID, NewParentID: other.root(), NewName: "stolen"}
	if items := other.trash(t); len(items) != 0 {
		t.Fatalf("another space's trash lists %+v", items)
	}
	_, _, err := f.s.TrashNode(f.ctx, other.space.ID, it.Key, nil)
	wantErr(t, "TrashNode from another space", err, storage.ErrNotFound)
	_, err = f.s.ReadTrashDir(f.ctx, other.space.ID, it.Key, folder.ID, "", 0)
	wantErr(t, "ReadTrashDir from another space", err, storage.ErrNotFound)
	_, _, err = f.s.RestoreTrash(f.ctx, other.space.ID, it.Key, into)
	wantErr(t, "RestoreTrash from another space", err, storage.ErrNotFound)
	into.NewParentID = f.root()
	_, _, err = f.s.RestoreTrash(f.ctx, other.space.ID, it.Key, into)
	wantErr(t, "RestoreTrash from another space into this one", err, storage.ErrNotFound)
	wantErr(t, "PurgeTrash from another space", f.s.PurgeTrash(f.ctx, other.space.ID, it.Key), storage.ErrNotFound)
	if err := f.s.EmptyTrash(f.ctx, other.space.ID); err != nil {
		t.Fatalf("EmptyTrash of another space: %v", err)
	}
	_, err = f.s.FileVersions(f.ctx, other.space.ID, kept.ID)
	wantErr(t, "FileVersions from another space", err, storage.ErrNotFound)
	_, c, err := f.s.OpenVersion(f.ctx, other.space.ID, kept.ID, v.Key)
	if err == nil {
		c.Close()
	}
	wantErr(t, "OpenVersion from another space", err, storage.ErrNotFound)
	_, err = f.s.RestoreVersion(f.ctx, other.space.ID, kept.ID, v.Key, storage.Conditions{})
	wantErr(t, "RestoreVersion from another space", err, storage.ErrNotFound)
	_, err = f.s.TrashItems(f.ctx, "no-such-space", "", 10)
	wantErr(t, "TrashItems of a missing space", err, storage.ErrNotFound)

	f.wantTrashed(t, folder.ID)
	f.wantVersions(t, kept.ID, "three")
	f.wantUsage(t, usage)
	other.wantUsage(t, storage.Usage{})
	if names := other.names(t, other.root()); len(names) != 0 {
		t.Fatalf("another space holds %v", names)
	}
}

// A space whose retention keeps no trash destroys what is removed or
// replaced by a move, at once.
func testTrashOff(t *testing.T, f *fixture) {
	f.retain(storage.Retention{VersionsFor: storage.DefaultVersionsRetention, VersionsMax: storage.DefaultVersionsMax})
	color := prop("urn:x", "color", "", "black")
	d := f.deepTree(t, f.root())
	f.patch(t, d.h.ID, set(color))
	src := f.put(t, f.root(), "src", "s")
	target := f.put(t, f.root(), "target", "tt")
	f.remove(t, d.a.ID)
	if _, _, err := f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: src.ID, NewParentID: f.root(), NewName: "target", Overwrite: true}); err != nil {
		t.Fatalf("Move with Overwrite: %v", err)
	}
	f.wantTrashed(t)
	f.wantUsage(t, storage.Usage{Files: 1})
	for _, n := range append(d.all(), target) {
		f.wantGone(t, n)
	}
	// Nor does a file created in its place take anything back.
	n, created, err := f.commit(f.space.ID, "new", storage.Commit{ParentID: f.root(), Name: "a"})
	if err != nil || !created || n.ID == d.a.ID {
		t.Fatalf("a file where a destroyed folder was = %+v, created %v, %v", n, created, err)
	}
}

// Removing into the trash drops the locks on the removed nodes, as a
// remove always did; a restore brings none back.
func testTrashDropsLocks(t *testing.T, f *fixture) {
	d := f.deepTree(t, f.root())
	f.lock(t, d.f1.ID, false, storage.LockExclusive)
	f.lock(t, d.g.ID, false, storage.LockShared)
	f.lock(t, d.a.ID, false, storage.LockShared)
	f.remove(t, d.a.ID)
	wantTokens(t, "locks after the remove", f.spaceLocks(t))
	f.restoreItem(t, f.trashed(t, d.a.ID))
	wantTokens(t, "locks after the restore", f.spaceLocks(t))
	if _, err := f.tryLock(d.f1.ID, false, storage.LockExclusive); err != nil {
		t.Fatalf("CreateLock on a restored file: %v", err)
	}
}

// errorsAre reports whether err is one of targets.
func errorsAre(err error, targets ...error) bool {
	for _, target := range targets {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// A space the policy sets apart follows its own retention; the others the
// default.
func testTrashRetentionPerSpace(t *testing.T, f *fixture) {
	project := f.projectSpace(t)
	f.s.SetRetention(storage.RetentionPolicy{
		Default: storage.DefaultRetention,
		Spaces:  map[string]storage.Retention{project.space.ID: {VersionsOff: true}},
	})
	for _, g := range []*fixture{f, project} {
		file := g.put(t, g.root(), "f", "one")
		g.replace(t, file.ID, "two")
		g.remove(t, file.ID)
	}
	f.wantUsage(t, storage.Usage{Trash: 3, Versions: 3})
	project.wantUsage(t, storage.Usage{})
	project.wantTrashed(t)
}
