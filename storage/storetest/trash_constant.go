package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// trashConstantTests are the conformance tests of what a move between a
// space and its trash costs: the same whatever the size of the subtree.
var trashConstantTests = []conformanceTest{
	{"TrashConstantWork", testTrashConstantWork},
}

// constantTree is a folder of the constant-work case: the folder, and the
// deepest file below it, whose name only it has.
type constantTree struct {
	top, needle storage.Node
}

// constantTree makes folder name at the root holding files files spread
// over folders of 100 at most, each in a folder of its own one level
// deeper, the last one called needle. Both trees of the case have the
// same shape at the top: what a move of the top writes may depend on its
// ancestors and on the records of the top, never on what lies below.
func (f *fixture) constantTree(t *testing.T, name string, files int) constantTree {
	t.Helper()
	top := f.mkdir(t, f.root(), name)
	var needle storage.Node
	for part := 0; part*100 < files; part++ {
		folder := f.mkdir(t, f.mkdir(t, top.ID, fmt.Sprintf("part-%02d", part)).ID, "sub")
		for i := part * 100; i < files && i < (part+1)*100; i++ {
			file := fmt.Sprintf("file-%04d.txt", i)
			if i == files-1 {
				file = "needle-" + name + ".txt"
			}
			needle = f.put(t, folder.ID, file, "x")
		}
	}
	return constantTree{top: f.node(t, top.ID), needle: needle}
}

// written returns how many records fn made the store write.
func written(t *testing.T, wc WriteCounter, fn func()) int64 {
	t.Helper()
	before := wc.RecordsWritten()
	fn()
	return wc.RecordsWritten() - before
}

// Deleting a folder into the trash and restoring it write as many records
// for 500 files as for 10 (work that grew with the files would differ
// fiftyfold); by id, a node is found only in the space its
// ancestry leads to: not in another space, not in the live space while it
// is in the trash (nor by search, nor as a share's item), and back once
// restored.
func testTrashConstantWork(t *testing.T, f *fixture) {
	wc, ok := f.s.(WriteCounter)
	if !ok {
		t.Skip("the store does not count the records it writes (storetest.WriteCounter)")
	}
	other := f.projectSpace(t)
	small := f.constantTree(t, "small", 10)
	big := f.constantTree(t, "big", 500)
	f.wantOnlyIn(t, other, big.needle, true)

	removeSmall := written(t, wc, func() { f.remove(t, small.top.ID) })
	removeBig := written(t, wc, func() { f.remove(t, big.top.ID) })
	if removeSmall != removeBig {
		t.Fatalf("deleting 10 files wrote %d records, 500 files %d", removeSmall, removeBig)
	}
	f.wantOnlyIn(t, other, big.needle, false)
	f.wantNotShareable(t, big.needle)

	restoreSmall := written(t, wc, func() { f.restoreItem(t, f.trashed(t, small.top.ID)) })
	restoreBig := written(t, wc, func() { f.restoreItem(t, f.trashed(t, big.top.ID)) })
	if restoreSmall != restoreBig {
		t.Fatalf("restoring 10 files wrote %d records, 500 files %d", restoreSmall, restoreBig)
	}
	f.wantOnlyIn(t, other, big.needle, true)
	if got := f.node(t, big.top.ID); got.Size != big.top.Size || got.SpaceID != f.space.ID {
		t.Fatalf("restored folder %+v, was %+v", got, big.top)
	}

	f.remove(t, big.top.ID)
	if err := f.s.PurgeTrash(f.ctx, f.space.ID, f.trashed(t, big.top.ID).Key); err != nil {
		t.Fatalf("PurgeTrash: %v", err)
	}
	f.wantOnlyIn(t, other, big.needle, false)
	f.wantTrashed(t)
}

// wantOnlyIn checks that file n is never found by id in the space of
// other, and in the fixture's live space, by id and by a search of its
// name, exactly when live.
func (f *fixture) wantOnlyIn(t *testing.T, other *fixture, n storage.Node, live bool) {
	t.Helper()
	_, err := f.s.Node(f.ctx, other.space.ID, n.ID)
	wantErr(t, "Node in another space", err, storage.ErrNotFound)
	got, err := f.s.Node(f.ctx, f.space.ID, n.ID)
	found := f.search(t, "", n.Name)
	if !live {
		wantErr(t, "Node of a file in the trash", err, storage.ErrNotFound)
		wantFound(t, "a file in the trash", found)
		return
	}
	if err != nil || got.ID != n.ID || got.SpaceID != f.space.ID || got.ParentID != n.ParentID {
		t.Fatalf("Node %s = %+v, %v; want %+v", n.ID, got, err, n)
	}
	wantFound(t, "a live file", found, n.Name)
}

// wantNotShareable checks that n, a node in the trash, cannot be shared:
// it is not a live node of its space. A store without shares has nothing
// to show.
func (f *fixture) wantNotShareable(t *testing.T, n storage.Node) {
	t.Helper()
	_, err := f.s.CreateShare(f.ctx, f.linkOn(n))
	if errors.Is(err, errors.ErrUnsupported) {
		return
	}
	wantErr(t, "CreateShare of a file in the trash", err, storage.ErrNotFound)
}
