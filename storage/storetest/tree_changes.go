package storetest

import (
	"io"
	"slices"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// seedTree makes root/a/b/seed ("seed", 4 bytes) and the sibling root/other.
func (f *fixture) seedTree(t *testing.T) (a, b, other storage.Node) {
	t.Helper()
	a = f.mkdir(t, f.root(), "a")
	b = f.mkdir(t, a.ID, "b")
	f.put(t, b.ID, "seed", "seed")
	other = f.mkdir(t, f.root(), "other")
	return a, b, other
}

// chain returns the node id and its ancestors up to the root, as they are.
func (f *fixture) chain(t *testing.T, id string) []storage.Node {
	t.Helper()
	var out []storage.Node
	for id != "" {
		n := f.node(t, id)
		out = append(out, n)
		id = n.ParentID
	}
	return out
}

// assertPropagated checks that each node of before grew by delta and got a
// new etag and no earlier modification time.
func (f *fixture) assertPropagated(t *testing.T, before []storage.Node, delta int64) {
	t.Helper()
	for _, b := range before {
		n := f.node(t, b.ID)
		if n.Size != b.Size+delta || n.ETag == b.ETag || n.ModTime.Before(b.ModTime) {
			t.Fatalf("%q after the change: %+v, before %+v, delta %d", b.Name, n, b, delta)
		}
	}
}

// assertUnchanged checks that n is as it was.
func (f *fixture) assertUnchanged(t *testing.T, n storage.Node) {
	t.Helper()
	if got := f.node(t, n.ID); !sameNode(got, n) {
		t.Fatalf("%q changed: %+v, was %+v", n.Name, got, n)
	}
}

func testPropagation(t *testing.T, f *fixture) {
	t.Run("commit new", func(t *testing.T) {
		_, b, other := f.seedTree(t)
		before, sibling := f.chain(t, b.ID), f.node(t, other.ID)
		f.put(t, b.ID, "new", "12345")
		f.assertPropagated(t, before, 5)
		f.assertUnchanged(t, sibling)
		f.cleanup(t)
	})
	t.Run("commit replace", func(t *testing.T) {
		_, b, _ := f.seedTree(t)
		before := f.chain(t, b.ID)
		f.put(t, b.ID, "seed", "much longer")
		f.assertPropagated(t, before, int64(len("much longer")-4))
		f.cleanup(t)
	})
	t.Run("mkdir", func(t *testing.T) {
		_, b, _ := f.seedTree(t)
		before := f.chain(t, b.ID)
		f.mkdir(t, b.ID, "c")
		f.assertPropagated(t, before, 0)
		f.cleanup(t)
	})
	t.Run("remove", func(t *testing.T) {
		a, b, _ := f.seedTree(t)
		before := f.chain(t, a.ID)
		if err := f.s.Remove(f.ctx, f.space.ID, b.ID, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
		f.assertPropagated(t, before, -4)
		f.cleanup(t)
	})
	t.Run("move", func(t *testing.T) {
		a, b, other := f.seedTree(t)
		y := f.mkdir(t, other.ID, "y")
		srcChain := f.chain(t, a.ID)[:1] // a; the root is on both chains
		dstChain := f.chain(t, y.ID)[:2] // y, other
		root, bBefore := f.node(t, f.root()), f.node(t, b.ID)
		moved, _, err := f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: b.ID, NewParentID: y.ID, NewName: "b2"})
		if err != nil {
			t.Fatal(err)
		}
		f.assertPropagated(t, srcChain, -4)
		f.assertPropagated(t, dstChain, 4)
		f.assertPropagated(t, []storage.Node{root}, 0)
		if moved.ETag == bBefore.ETag || !moved.ModTime.Equal(bBefore.ModTime) || moved.Size != 4 {
			t.Fatalf("moved node %+v, before %+v", moved, bBefore)
		}
		f.cleanup(t)
	})
	t.Run("copy", func(t *testing.T) {
		_, b, other := f.seedTree(t)
		dst := f.chain(t, other.ID)
		if _, _, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: b.ID, NewParentID: other.ID, NewName: "b"}); err != nil {
			t.Fatal(err)
		}
		f.assertPropagated(t, dst, 4)
		f.cleanup(t)
	})
}

// cleanup removes everything below the root.
func (f *fixture) cleanup(t *testing.T) {
	t.Helper()
	nodes, err := f.s.ReadDir(f.ctx, f.space.ID, f.root(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if err := f.s.Remove(f.ctx, f.space.ID, n.ID, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
	}
	if root := f.node(t, f.root()); root.Size != 0 {
		t.Fatalf("root size %d after removing everything", root.Size)
	}
}

func testRemoveSubtree(t *testing.T, f *fixture) {
	a, b, _ := f.seedTree(t)
	c := f.mkdir(t, b.ID, "c")
	deep := f.put(t, c.ID, "deep", "deep content")
	seed, _ := f.s.Child(f.ctx, f.space.ID, b.ID, "seed")
	f.patch(t, deep.ID, set(prop("", "p", "", "v")))
	// A reader opened before the remove still reads.
	_, open, err := f.s.Open(f.ctx, f.space.ID, deep.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()

	err = f.s.Remove(f.ctx, f.space.ID, b.ID, storage.Conditions{IfMatch: "wrong"})
	wantErr(t, "Remove If-Match", err, storage.ErrPrecondition)
	err = f.s.Remove(f.ctx, f.space.ID, b.ID, storage.Conditions{IfNoneMatch: true})
	wantErr(t, "Remove If-None-Match", err, storage.ErrPrecondition)
	err = f.s.Remove(f.ctx, f.space.ID, f.root(), storage.Conditions{})
	wantErr(t, "Remove the root", err, storage.ErrInvalid)
	err = f.s.Remove(f.ctx, f.space.ID, "missing", storage.Conditions{})
	wantErr(t, "Remove a missing node", err, storage.ErrNotFound)

	if err := f.s.Remove(f.ctx, f.space.ID, b.ID, storage.Conditions{IfMatch: f.node(t, b.ID).ETag}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{b.ID, c.ID, deep.ID, seed.ID} {
		_, err := f.s.Node(f.ctx, f.space.ID, id)
		wantErr(t, "Node of a removed node", err, storage.ErrNotFound)
		_, err = f.s.Props(f.ctx, f.space.ID, id, "")
		wantErr(t, "Props of a removed node", err, storage.ErrNotFound)
	}
	if names := f.names(t, a.ID); len(names) != 0 {
		t.Fatalf("a still lists %v", names)
	}
	if root := f.node(t, f.root()); root.Size != 0 {
		t.Fatalf("root size %d", root.Size)
	}
	got, err := io.ReadAll(open)
	if err != nil || string(got) != "deep content" {
		t.Fatalf("reader opened before the remove reads %q, %v", got, err)
	}
}

// moveSetup is root/a/b/file and root/dest/{taken (file), takenDir/inner}.
type moveSetup struct {
	a, b, file, dest storage.Node
}

func (f *fixture) moveSetup(t *testing.T) moveSetup {
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, a.ID, "b")
	file := f.put(t, b.ID, "file", "content")
	dest := f.mkdir(t, f.root(), "dest")
	f.put(t, dest.ID, "taken", "old")
	td := f.mkdir(t, dest.ID, "takenDir")
	f.put(t, td.ID, "inner", "inner")
	return moveSetup{a, b, file, dest}
}

func testMoveRules(t *testing.T, f *fixture) {
	for _, tc := range []struct {
		name         string
		tr           func(s moveSetup) storage.Transfer
		want         error
		wantReplaced bool
		sizeChange   int64
	}{
		{"rename file", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: s.b.ID, NewName: "renamed"}
		}, nil, false, 0},
		{"move folder", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.b.ID, NewParentID: s.dest.ID, NewName: "b"}
		}, nil, false, 0},
		{"target exists", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: s.dest.ID, NewName: "taken"}
		}, storage.ErrExists, false, 0},
		{"overwrite file", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: s.dest.ID, NewName: "taken", Overwrite: true}
		}, nil, true, -3},
		{"overwrite folder with file", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: s.dest.ID, NewName: "takenDir", Overwrite: true}
		}, nil, true, -5},
		{"parent missing", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: "missing", NewName: "x"}
		}, storage.ErrConflict, false, 0},
		{"parent is a file", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.b.ID, NewParentID: s.file.ID, NewName: "x"}
		}, storage.ErrConflict, false, 0},
		{"into itself", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.a.ID, NewParentID: s.a.ID, NewName: "x"}
		}, storage.ErrConflict, false, 0},
		{"into its descendant", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.a.ID, NewParentID: s.b.ID, NewName: "x"}
		}, storage.ErrConflict, false, 0},
		{"onto its ancestor", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.b.ID, NewParentID: s.a.ParentID, NewName: "a", Overwrite: true}
		}, storage.ErrConflict, false, 0},
		{"invalid name", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: s.dest.ID, NewName: "."}
		}, storage.ErrInvalid, false, 0},
		{"missing node", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: "missing", NewParentID: s.dest.ID, NewName: "x"}
		}, storage.ErrNotFound, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := f.moveSetup(t)
			defer f.cleanup(t)
			tr := tc.tr(s)
			src, _ := f.s.Node(f.ctx, f.space.ID, tr.NodeID)
			rootBefore := f.node(t, f.root())
			n, replaced, err := f.s.Move(f.ctx, f.space.ID, tr)
			wantErr(t, "Move", err, tc.want)
			if err != nil {
				f.assertUnchanged(t, rootBefore)
				return
			}
			if replaced != tc.wantReplaced {
				t.Fatalf("replaced = %v", replaced)
			}
			if n.ID != src.ID || n.ParentID != tr.NewParentID || n.Name != tr.NewName || n.Size != src.Size || !n.ModTime.Equal(src.ModTime) {
				t.Fatalf("moved = %+v, source %+v", n, src)
			}
			if got, err := f.s.Child(f.ctx, f.space.ID, tr.NewParentID, tr.NewName); err != nil || !sameNode(got, n) {
				t.Fatalf("Child at target = %+v, %v; Move returned %+v", got, err, n)
			}
			_, err = f.s.Child(f.ctx, f.space.ID, src.ParentID, src.Name)
			wantErr(t, "Child at the source", err, storage.ErrNotFound)
			if got := f.node(t, f.root()).Size; got != rootBefore.Size+tc.sizeChange {
				t.Fatalf("root size %d, want %d", got, rootBefore.Size+tc.sizeChange)
			}
			if !n.IsFolder() {
				if got := f.read(t, n.ID); got != "content" {
					t.Fatalf("content after move = %q", got)
				}
			}
		})
	}
	t.Run("space root", func(t *testing.T) {
		dest := f.mkdir(t, f.root(), "dest")
		defer f.cleanup(t)
		_, _, err := f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: f.root(), NewParentID: dest.ID, NewName: "x"})
		wantErr(t, "Move the root", err, storage.ErrInvalid)
	})
}

func testMoveOntoItself(t *testing.T, f *fixture) {
	a := f.mkdir(t, f.root(), "a")
	root := f.node(t, f.root())
	n, replaced, err := f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: a.ID, NewParentID: f.root(), NewName: "a", Overwrite: true})
	if err != nil || replaced || !sameNode(n, a) {
		t.Fatalf("move onto itself = %+v, %v, %v", n, replaced, err)
	}
	f.assertUnchanged(t, root)
}

func testCopyTree(t *testing.T, f *fixture) {
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, a.ID, "b")
	file := f.put(t, a.ID, "file", "content")
	deep := f.put(t, b.ID, "deep", "deep!")
	shared := prop("urn:x", "color", "", "red")
	fav := prop("http://owncloud.org/ns", "favorite", "einstein", "1")
	for _, id := range []string{a.ID, deep.ID} {
		f.patch(t, id, set(shared), set(fav))
	}
	dest := f.mkdir(t, f.root(), "dest")
	rootBefore := f.node(t, f.root())
	aBefore := f.node(t, a.ID)

	top, replaced, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: a.ID, NewParentID: dest.ID, NewName: "a2"})
	if err != nil || replaced {
		t.Fatalf("copy = %v, %v", replaced, err)
	}
	if top.ID == a.ID || top.Name != "a2" || top.ParentID != dest.ID || top.Size != aBefore.Size {
		t.Fatalf("top = %+v", top)
	}
	if got := f.node(t, top.ID); !sameNode(got, top) {
		t.Fatalf("Node = %+v, Copy returned %+v", got, top)
	}
	if got := f.node(t, f.root()).Size; got != rootBefore.Size*2 {
		t.Fatalf("root size %d, want %d", got, rootBefore.Size*2)
	}
	if names := f.names(t, top.ID); !slices.Equal(names, []string{"b", "file"}) {
		t.Fatalf("copied children %v", names)
	}
	b2, _ := f.s.Child(f.ctx, f.space.ID, top.ID, "b")
	deep2, err := f.s.Child(f.ctx, f.space.ID, b2.ID, "deep")
	if err != nil || deep2.ID == deep.ID || b2.ID == b.ID {
		t.Fatalf("deep copy = %+v, %v", deep2, err)
	}
	if deep2.Checksums != deep.Checksums || deep2.Size != deep.Size || !deep2.ModTime.Equal(deep.ModTime) || deep2.ETag == deep.ETag {
		t.Fatalf("deep copy metadata = %+v, source %+v", deep2, deep)
	}
	if got := f.read(t, deep2.ID); got != "deep!" {
		t.Fatalf("copied content = %q", got)
	}
	// Shared properties are copied, per-user ones are not.
	for _, id := range []string{top.ID, deep2.ID} {
		props, err := f.s.Props(f.ctx, f.space.ID, id, "einstein")
		if err != nil || len(props) != 1 || props[0] != shared {
			t.Fatalf("props of copy = %+v, %v", props, err)
		}
	}
	// Replacing the source does not affect the copy, and vice versa.
	f.put(t, b.ID, "deep", "changed")
	if got := f.read(t, deep2.ID); got != "deep!" {
		t.Fatalf("copy changed with the source: %q", got)
	}
	if err := f.s.Remove(f.ctx, f.space.ID, top.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, file.ID); got != "content" {
		t.Fatalf("source content after removing the copy = %q", got)
	}
}

func testCopyRules(t *testing.T, f *fixture) {
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, a.ID, "b")
	f.put(t, b.ID, "x", "12345")
	file := f.put(t, a.ID, "file", "abc")
	dest := f.mkdir(t, f.root(), "dest")
	f.put(t, dest.ID, "taken", "old!")

	for _, tc := range []struct {
		name string
		tr   storage.Transfer
		want error
	}{
		{"target exists", storage.Transfer{NodeID: file.ID, NewParentID: dest.ID, NewName: "taken"}, storage.ErrExists},
		{"into its descendant", storage.Transfer{NodeID: a.ID, NewParentID: b.ID, NewName: "a"}, storage.ErrConflict},
		{"into itself", storage.Transfer{NodeID: a.ID, NewParentID: a.ID, NewName: "a"}, storage.ErrConflict},
		{"onto its ancestor", storage.Transfer{NodeID: b.ID, NewParentID: f.root(), NewName: "a", Overwrite: true}, storage.ErrConflict},
		{"parent is a file", storage.Transfer{NodeID: file.ID, NewParentID: file.ID, NewName: "x"}, storage.ErrConflict},
		{"parent missing", storage.Transfer{NodeID: file.ID, NewParentID: "missing", NewName: "x"}, storage.ErrConflict},
		{"missing node", storage.Transfer{NodeID: "missing", NewParentID: dest.ID, NewName: "x"}, storage.ErrNotFound},
	} {
		_, _, err := f.s.Copy(f.ctx, f.space.ID, tc.tr)
		wantErr(t, "Copy "+tc.name, err, tc.want)
	}

	n, replaced, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: a.ID, NewName: "file", Overwrite: true})
	if err != nil || replaced || !sameNode(n, file) {
		t.Fatalf("copy onto itself = %+v, %v, %v", n, replaced, err)
	}

	before := f.node(t, f.root()).Size
	n, replaced, err = f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: dest.ID, NewName: "taken", Overwrite: true})
	if err != nil || !replaced || n.ID == file.ID {
		t.Fatalf("overwrite = %+v, %v, %v", n, replaced, err)
	}
	if got := f.read(t, n.ID); got != "abc" {
		t.Fatalf("overwritten content %q", got)
	}
	if got := f.node(t, f.root()).Size; got != before-4+3 {
		t.Fatalf("root size %d, want %d", got, before-1)
	}

	sh, _, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: a.ID, NewParentID: dest.ID, NewName: "shallow", Shallow: true})
	if err != nil || !sh.IsFolder() || sh.Size != 0 {
		t.Fatalf("shallow = %+v, %v", sh, err)
	}
	if names := f.names(t, sh.ID); len(names) != 0 {
		t.Fatalf("shallow copy has children %v", names)
	}
	c, _, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: a.ID, NewName: "file copy"})
	if err != nil || f.read(t, c.ID) != "abc" || c.Checksums != file.Checksums {
		t.Fatalf("file copy = %+v, %v", c, err)
	}
}

func testCopyQuota(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "file", "0123456789")
	if _, err := f.s.PutSpace(f.ctx, storage.Space{ID: f.space.ID, Quota: 15}); err != nil {
		t.Fatal(err)
	}
	_, _, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "copy"})
	wantErr(t, "Copy over quota", err, storage.ErrInsufficientStorage)
	if names := f.names(t, f.root()); !slices.Equal(names, []string{"file"}) {
		t.Fatalf("failed copy left %v", names)
	}
}

// sameNode reports whether a and b describe the same node alike, their
// times compared as instants.
func sameNode(a, b storage.Node) bool {
	a.ModTime, b.ModTime = a.ModTime.UTC().Round(0), b.ModTime.UTC().Round(0)
	return a == b
}
