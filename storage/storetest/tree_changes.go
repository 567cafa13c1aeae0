package storetest

import (
	"io"
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
	wantErr(t, "Remove the root", err, storage.ErrRootRemove)
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

// sameNode reports whether a and b describe the same node alike, their
// times compared as instants.
func sameNode(a, b storage.Node) bool {
	a.ModTime, b.ModTime = a.ModTime.UTC().Round(0), b.ModTime.UTC().Round(0)
	return a == b
}
