package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// nodeTests pin the node counter of a space (storage.Usage.Nodes) and its
// cap (storage.NodeCap): every file, folder, trash node and version is
// counted in the change that makes or destroys it, and a change that
// would take the space past its cap is refused whole.
var nodeTests = []conformanceTest{
	{"NodesCounted", testNodesCounted},
	{"NodeCapWithoutQuota", testNodeCapWithoutQuota},
	{"NodeCapScalesWithQuota", testNodeCapScalesWithQuota},
	{"NodeRecordsBounded", testNodeRecordsBounded},
}

// wantNodes checks how many nodes the space counts.
func (f *fixture) wantNodes(t *testing.T, want int64) {
	t.Helper()
	if got := f.usage(t).Nodes; got != want {
		t.Fatalf("the space counts %d nodes, want %d", got, want)
	}
}

// wantTooManyNodes checks that err is the node cap's refusal.
func wantTooManyNodes(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, storage.ErrTooManyNodes) || !errors.Is(err, storage.ErrInsufficientStorage) {
		t.Fatalf("%s past the node cap: %v, want ErrTooManyNodes", what, err)
	}
}

// The counter follows every change that makes or destroys a record, and
// none that only moves one.
func testNodesCounted(t *testing.T, f *fixture) {
	f.wantNodes(t, 0)
	a := f.mkdir(t, f.root(), "a")
	file := f.put(t, a.ID, "f", "")
	f.put(t, a.ID, "g", "x")
	f.wantNodes(t, 3)

	f.replace(t, file.ID, "new") // the empty content becomes a version
	f.wantNodes(t, 4)
	if _, _, err := f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "f"}); err != nil {
		t.Fatalf("Move: %v", err)
	}
	f.wantNodes(t, 4)
	if _, _, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: a.ID, NewParentID: f.root(), NewName: "b"}); err != nil {
		t.Fatalf("Copy: %v", err)
	}
	f.wantNodes(t, 6) // a copy of a and g; versions are not copied

	f.remove(t, a.ID) // into the trash: still kept
	f.wantNodes(t, 6)
	it := f.trashed(t, a.ID)
	f.restoreItem(t, it)
	f.wantNodes(t, 6)

	f.remove(t, a.ID)
	if err := f.s.PurgeTrash(f.ctx, f.space.ID, f.trashed(t, a.ID).Key); err != nil {
		t.Fatalf("PurgeTrash: %v", err)
	}
	f.wantNodes(t, 4) // f, its version, b, b/g

	vs, err := f.s.FileVersions(f.ctx, f.space.ID, file.ID)
	if err != nil || len(vs) != 1 {
		t.Fatalf("FileVersions = %+v, %v", vs, err)
	}
	if _, err := f.s.RestoreVersion(f.ctx, f.space.ID, file.ID, vs[0].Key, storage.Conditions{}); err != nil {
		t.Fatalf("RestoreVersion: %v", err)
	}
	f.wantNodes(t, 4) // the restored version is the file; what it held a version

	f.remove(t, file.ID)
	if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
		t.Fatalf("EmptyTrash: %v", err)
	}
	f.wantNodes(t, 2) // b, b/g

	f.keepNoUndo()
	b, err := f.s.Child(f.ctx, f.space.ID, f.root(), "b")
	if err != nil {
		t.Fatalf("Child b: %v", err)
	}
	f.remove(t, b.ID) // destroyed at once
	f.wantNodes(t, 0)
}

// A space without a quota holds as many nodes as the store's setting.
func testNodeCapWithoutQuota(t *testing.T, f *fixture) {
	f.s.SetMaxNodes(3)
	t.Cleanup(func() { f.s.SetMaxNodes(0) })
	a := f.mkdir(t, f.root(), "a")
	f.put(t, a.ID, "f", "")
	f.mkdir(t, a.ID, "b")

	_, err := f.s.Mkdir(f.ctx, f.space.ID, f.root(), "c")
	wantTooManyNodes(t, "Mkdir", err)
	_, _, err = f.commit(f.space.ID, "", storage.Commit{ParentID: f.root(), Name: "g"})
	wantTooManyNodes(t, "a new file", err)
	f.wantNodes(t, 3)
	if got := f.names(t, f.root()); len(got) != 1 {
		t.Fatalf("the root holds %v after the refusals, want a only", got)
	}

	f.s.SetMaxNodes(0) // the default
	f.mkdir(t, f.root(), "c")
	f.wantNodes(t, 4)
}

// A space with a quota holds one node per storage.QuotaBytesPerNode of it,
// at least storage.MinNodeCap: the trash and versions count too, a copy
// past the cap is refused whole, and a restore, which adds no node,
// passes at the cap. An edit at the cap is never refused: it keeps its
// version only in place of the file's oldest.
func testNodeCapScalesWithQuota(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(1000) // the floor: storage.MinNodeCap nodes
	const limit = storage.MinNodeCap
	const perTree = 10
	tree := f.mkdir(t, f.root(), "t")
	var empty storage.Node
	for i := range perTree - 1 {
		empty = f.put(t, tree.ID, fmt.Sprintf("f%d", i), "")
	}
	for i := 1; i < limit/perTree-1; i++ {
		if _, _, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: tree.ID, NewParentID: f.root(), NewName: fmt.Sprintf("t%d", i)}); err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
	}
	edited := f.put(t, f.root(), "edited", "1")
	f.replace(t, edited.ID, "2") // "1" kept as a version
	for i := range perTree - 2 {
		f.mkdir(t, f.root(), fmt.Sprintf("d%d", i))
	}
	f.wantNodes(t, limit)

	_, err := f.s.Mkdir(f.ctx, f.space.ID, f.root(), "one more")
	wantTooManyNodes(t, "Mkdir", err)
	_, _, err = f.commit(f.space.ID, "", storage.Commit{ParentID: f.root(), Name: "one more"})
	wantTooManyNodes(t, "a new file", err)
	_, _, err = f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: tree.ID, NewParentID: f.root(), NewName: "copy"})
	wantTooManyNodes(t, "a copy of a tree", err)
	if _, err := f.s.Child(f.ctx, f.space.ID, f.root(), "copy"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the refused copy left its top: %v", err)
	}
	f.wantNodes(t, limit)

	f.replace(t, empty.ID, "x") // no version to give up: none kept
	f.wantVersions(t, empty.ID)
	f.replace(t, edited.ID, "3") // "2" kept in place of "1"
	f.wantVersions(t, edited.ID, "2")
	f.wantNodes(t, limit)

	f.remove(t, empty.ID) // the trash keeps it: no room made
	f.wantNodes(t, limit)
	_, err = f.s.Mkdir(f.ctx, f.space.ID, f.root(), "one more")
	wantTooManyNodes(t, "Mkdir with the trash full", err)
	f.restoreItem(t, f.trashed(t, empty.ID))
	f.wantNodes(t, limit)

	f.remove(t, empty.ID)
	if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
		t.Fatalf("EmptyTrash: %v", err)
	}
	f.mkdir(t, f.root(), "one more")
	f.wantNodes(t, limit)

	f.s.SetPersonalQuota(2 * limit * storage.QuotaBytesPerNode)
	f.mkdir(t, f.root(), "with a larger quota")
	f.wantNodes(t, limit+1)
}

// What a node's records hold besides its name is bounded too: a content
// type past storage.MaxContentTypeBytes is refused and changes nothing, and
// a trash entry keeps at most storage.MaxTrashLocationBytes of location.
func testNodeRecordsBounded(t *testing.T, f *fixture) {
	long := strings.Repeat("t", storage.MaxContentTypeBytes+1)
	_, _, err := f.commit(f.space.ID, "", storage.Commit{ParentID: f.root(), Name: "f", ContentType: long})
	if !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("a content type of %d bytes: %v, want ErrInvalid", len(long), err)
	}
	file := f.put(t, f.root(), "f", "")
	_, _, err = f.commit(f.space.ID, "x", storage.Commit{NodeID: file.ID, ContentType: long})
	if !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("a replacement with a content type of %d bytes: %v, want ErrInvalid", len(long), err)
	}
	if got := f.read(t, file.ID); got != "" {
		t.Fatalf("the refused replacement left %q", got)
	}
	f.wantNodes(t, 1)

	name := strings.Repeat("n", 255)
	parent := f.root()
	for range storage.MaxTrashLocationBytes/256 + 2 {
		parent = f.mkdir(t, parent, name).ID
	}
	deep := f.put(t, parent, "deep", "")
	f.remove(t, deep.ID)
	it := f.trashed(t, deep.ID)
	if len(it.Location) > storage.MaxTrashLocationBytes || !strings.HasSuffix(it.Location, name+"/deep") {
		t.Fatalf("the trash entry of a deep file keeps a location of %d bytes, ending %q", len(it.Location), it.Location[max(len(it.Location)-20, 0):])
	}
}
