package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

func TestChildAndNode(t *testing.T) {
	f := newFixture(t)
	dir := f.mkdir(t, f.root(), "dir")
	file := f.put(t, dir.ID, "f.txt", "abc")
	got, err := f.s.Child(ctx, f.space.ID, dir.ID, "f.txt")
	if err != nil || got != file {
		t.Fatalf("Child = %+v, %v; want %+v", got, err, file)
	}
	_, err = f.s.Child(ctx, f.space.ID, dir.ID, "missing")
	wantErr(t, err, storage.ErrNotFound)
	for _, id := range []string{"missing", ""} {
		_, err = f.s.Node(ctx, f.space.ID, id)
		wantErr(t, err, storage.ErrNotFound)
		_, err = f.s.Child(ctx, f.space.ID, id, "f.txt")
		wantErr(t, err, storage.ErrNotFound)
		_, err = f.s.Mkdir(ctx, f.space.ID, id, "x")
		wantErr(t, err, storage.ErrConflict)
		_, _, err = f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: id, NewName: "x"})
		wantErr(t, err, storage.ErrConflict)
		_, _, err = f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: id, NewParentID: dir.ID, NewName: "x"})
		wantErr(t, err, storage.ErrNotFound)
	}
	_, err = f.s.Node(ctx, "", "")
	wantErr(t, err, storage.ErrNotFound)
	_, err = f.s.Space(ctx, "")
	wantErr(t, err, storage.ErrNotFound)
}

func TestETagFormat(t *testing.T) {
	f := newFixture(t)
	re := regexp.MustCompile(`^[0-9a-f]{1,32}$`)
	seen := map[string]bool{}
	check := func(n storage.Node) {
		t.Helper()
		if !re.MatchString(n.ETag) {
			t.Fatalf("etag %q", n.ETag)
		}
		if seen[n.ETag] {
			t.Fatalf("etag %q repeated", n.ETag)
		}
		seen[n.ETag] = true
	}
	check(f.node(t, f.root()))
	for i := range 5 {
		check(f.put(t, f.root(), "f", fmt.Sprint(i)))
		check(f.node(t, f.root()))
		check(f.mkdir(t, f.root(), fmt.Sprint("d", i)))
		check(f.node(t, f.root()))
	}
}

// chain captures a node and its ancestors.
type chain []storage.Node

func (f *fixture) chain(t testing.TB, id string) chain {
	t.Helper()
	var c chain
	for id != "" {
		n := f.node(t, id)
		c = append(c, n)
		id = n.ParentID
	}
	return c
}

// assertPropagated checks that every folder of before (a chain from some
// folder to the root) got a new etag, the modification time now and its
// size changed by delta.
func (f *fixture) assertPropagated(t testing.TB, before chain, delta int64, now time.Time) {
	t.Helper()
	for _, b := range before {
		a := f.node(t, b.ID)
		if a.ETag == b.ETag {
			t.Errorf("%q: etag unchanged", b.Name)
		}
		if !a.ModTime.Equal(now) {
			t.Errorf("%q: mtime %v, want %v", b.Name, a.ModTime, now)
		}
		if a.Size != b.Size+delta {
			t.Errorf("%q: size %d, want %d", b.Name, a.Size, b.Size+delta)
		}
	}
}

// tree builds root/a/b with a file "seed" (4 bytes) in b and returns a, b.
func (f *fixture) tree(t testing.TB) (a, b storage.Node) {
	t.Helper()
	a = f.mkdir(t, f.root(), "a")
	b = f.mkdir(t, a.ID, "b")
	f.put(t, b.ID, "seed", "seed")
	return a, b
}

func TestPropagation(t *testing.T) {
	t.Run("commit new", func(t *testing.T) {
		f := newFixture(t)
		_, b := f.tree(t)
		before := f.chain(t, b.ID)
		now := f.clk.Advance(time.Minute)
		mtime := now.Add(-24 * time.Hour)
		n, _, err := f.commit(b.ID, "new", "12345", storage.Commit{ModTime: mtime})
		if err != nil {
			t.Fatal(err)
		}
		if !n.ModTime.Equal(mtime) {
			t.Fatalf("file mtime %v, want %v", n.ModTime, mtime)
		}
		f.assertPropagated(t, before, 5, now)
		if root := f.node(t, f.root()); root.Size != 9 {
			t.Fatalf("root size %d, want 9", root.Size)
		}
	})
	t.Run("commit replace", func(t *testing.T) {
		f := newFixture(t)
		_, b := f.tree(t)
		before := f.chain(t, b.ID)
		now := f.clk.Advance(time.Minute)
		n := f.put(t, b.ID, "seed", "much longer")
		if !n.ModTime.Equal(now) {
			t.Fatalf("file mtime %v, want now %v", n.ModTime, now)
		}
		f.assertPropagated(t, before, int64(len("much longer")-4), now)
	})
	t.Run("mkdir", func(t *testing.T) {
		f := newFixture(t)
		_, b := f.tree(t)
		before := f.chain(t, b.ID)
		now := f.clk.Advance(time.Minute)
		f.mkdir(t, b.ID, "c")
		f.assertPropagated(t, before, 0, now)
	})
	t.Run("remove", func(t *testing.T) {
		f := newFixture(t)
		a, b := f.tree(t)
		before := f.chain(t, a.ID)
		now := f.clk.Advance(time.Minute)
		if err := f.s.Remove(ctx, f.space.ID, b.ID, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
		f.assertPropagated(t, before, -4, now)
	})
	t.Run("move", func(t *testing.T) {
		f := newFixture(t)
		a, b := f.tree(t)
		x := f.mkdir(t, f.root(), "x")
		y := f.mkdir(t, x.ID, "y")
		srcChain := f.chain(t, a.ID)[:1] // a; the root is on both chains
		dstChain := f.chain(t, y.ID)[:2] // y, x
		root := f.node(t, f.root())
		bBefore := f.node(t, b.ID)
		now := f.clk.Advance(time.Minute)
		moved, _, err := f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: b.ID, NewParentID: y.ID, NewName: "b2"})
		if err != nil {
			t.Fatal(err)
		}
		f.assertPropagated(t, srcChain, -4, now)
		f.assertPropagated(t, dstChain, 4, now)
		f.assertPropagated(t, chain{root}, 0, now)
		if moved.ETag == bBefore.ETag || !moved.ModTime.Equal(bBefore.ModTime) || moved.Size != 4 {
			t.Fatalf("moved node %+v, before %+v", moved, bBefore)
		}
	})
	t.Run("copy", func(t *testing.T) {
		f := newFixture(t)
		_, b := f.tree(t)
		x := f.mkdir(t, f.root(), "x")
		dst := f.chain(t, x.ID)
		now := f.clk.Advance(time.Minute)
		if _, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: b.ID, NewParentID: x.ID, NewName: "b"}); err != nil {
			t.Fatal(err)
		}
		f.assertPropagated(t, dst, 4, now)
	})
	t.Run("mtime never goes back", func(t *testing.T) {
		f := newFixture(t)
		_, b := f.tree(t)
		// The clock jumps back; folders keep their later time.
		past := f.clk.Advance(-time.Hour)
		f.mkdir(t, b.ID, "c")
		if got := f.node(t, b.ID); !got.ModTime.After(past) {
			t.Fatalf("mtime went back to %v", got.ModTime)
		}
	})
}

func TestRemove(t *testing.T) {
	f := newFixture(t)
	f.keepNoUndo() // what is removed or replaced is destroyed at once
	a, b := f.tree(t)
	c := f.mkdir(t, b.ID, "c")
	deep := f.put(t, c.ID, "deep", "deep content")
	seed, _ := f.s.Child(ctx, f.space.ID, b.ID, "seed")
	if err := f.s.PatchProps(ctx, f.space.ID, deep.ID, []storage.PropPatch{{Property: storage.Property{Name: storage.PropName{Local: "p"}, Value: "v"}}}); err != nil {
		t.Fatal(err)
	}
	blobs := []string{f.blob(t, deep.ID), f.blob(t, seed.ID)}
	// Keep a reader open: it still reads after the remove.
	_, open, err := f.s.Open(ctx, f.space.ID, deep.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()

	err = f.s.Remove(ctx, f.space.ID, b.ID, storage.Conditions{IfMatch: "wrong"})
	wantErr(t, err, storage.ErrPrecondition)
	err = f.s.Remove(ctx, f.space.ID, b.ID, storage.Conditions{IfNoneMatch: true})
	wantErr(t, err, storage.ErrPrecondition)
	err = f.s.Remove(ctx, f.space.ID, f.root(), storage.Conditions{})
	wantErr(t, err, storage.ErrInvalid)
	err = f.s.Remove(ctx, f.space.ID, "missing", storage.Conditions{})
	wantErr(t, err, storage.ErrNotFound)

	if err := f.s.Remove(ctx, f.space.ID, b.ID, storage.Conditions{IfMatch: f.node(t, b.ID).ETag}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{b.ID, c.ID, deep.ID, seed.ID} {
		_, err := f.s.Node(ctx, f.space.ID, id)
		wantErr(t, err, storage.ErrNotFound)
	}
	if names := f.names(t, a.ID); len(names) != 0 {
		t.Fatalf("a still lists %v", names)
	}
	for _, bl := range blobs {
		if _, err := os.Stat(filepath.Join(f.dir, "blobs", bl[:2], bl)); !os.IsNotExist(err) {
			t.Fatalf("content file %s: %v", bl, err)
		}
	}
	if root := f.node(t, f.root()); root.Size != 0 {
		t.Fatalf("root size %d", root.Size)
	}
	// Nothing is left in the database but the root and a.
	f.s.view(func(tx *txn) error {
		if n := tx.nodes().Stats().KeyN; n != 2 {
			t.Errorf("%d node index entries, want 2", n)
		}
		if n := tx.children().Stats().KeyN; n != 2 {
			t.Errorf("%d node records, want 2", n)
		}
		if n := tx.props().Stats().KeyN; n != 0 {
			t.Errorf("%d properties, want 0", n)
		}
		if n := tx.blobs().Stats().KeyN; n != 0 {
			t.Errorf("%d blob references, want 0", n)
		}
		return nil
	})
	buf := make([]byte, 100)
	n, _ := open.Read(buf)
	if string(buf[:n]) != "deep content" {
		t.Fatalf("open handle reads %q after remove", buf[:n])
	}
}

// TestRemoveAndCopyWideTree copies and removes folders of many pages of
// records, with sub-folders between the files, so that each folder is
// walked across page boundaries and across records the walk has removed.
func TestRemoveAndCopyWideTree(t *testing.T) {
	f := newInlineFixture(t, 0)
	f.keepNoUndo() // what is removed or replaced is destroyed at once
	wide := f.mkdir(t, f.root(), "wide")
	var want []string
	for i := range 300 {
		name := fmt.Sprintf("f%03d", i)
		if i%50 == 25 {
			sub := f.mkdir(t, wide.ID, name)
			for j := range 30 {
				f.put(t, sub.ID, fmt.Sprintf("g%02d", j), name)
			}
		} else {
			f.put(t, wide.ID, name, name)
		}
		want = append(want, name)
	}
	records := func() (n int) {
		f.s.view(func(tx *txn) error {
			n = tx.children().Stats().KeyN
			return nil
		})
		return n
	}
	before := records()
	top, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: wide.ID, NewParentID: f.root(), NewName: "copy"})
	if err != nil {
		t.Fatal(err)
	}
	if names := f.names(t, top.ID); !slices.Equal(names, want) {
		t.Fatalf("the copy lists %d names, want %d", len(names), len(want))
	}
	sub, err := f.s.Child(ctx, f.space.ID, top.ID, "f275")
	if err != nil || len(f.names(t, sub.ID)) != 30 || top.Size != f.node(t, wide.ID).Size {
		t.Fatalf("the copy's sub-folder: %v, %v; size %d", sub, err, top.Size)
	}
	if got := records(); got != 2*before-1 {
		t.Fatalf("%d records after the copy, want %d", got, 2*before-1)
	}
	for _, id := range []string{wide.ID, top.ID} {
		if err := f.s.Remove(ctx, f.space.ID, id, storage.Conditions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got, inline := records(), f.inlineValues(t); got != 1 || inline != 0 {
		t.Fatalf("%d records and %d inline values after removing both, want the root alone", got, inline)
	}
	if root := f.node(t, f.root()); root.Size != 0 {
		t.Fatalf("root size %d", root.Size)
	}
}

func TestMove(t *testing.T) {
	type setup struct {
		f                *fixture
		a, b, file, dest storage.Node
	}
	// root/a/b/file, root/dest/{taken (file), takenDir/ (folder with a file)}
	mk := func(t *testing.T) setup {
		f := newFixture(t)
		a := f.mkdir(t, f.root(), "a")
		b := f.mkdir(t, a.ID, "b")
		file := f.put(t, b.ID, "file", "content")
		dest := f.mkdir(t, f.root(), "dest")
		f.put(t, dest.ID, "taken", "old")
		td := f.mkdir(t, dest.ID, "takenDir")
		f.put(t, td.ID, "inner", "inner")
		return setup{f, a, b, file, dest}
	}
	for _, tc := range []struct {
		name         string
		tr           func(s setup) storage.Transfer
		want         error
		wantReplaced bool
	}{
		{"rename file", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: s.b.ID, NewName: "renamed"}
		}, nil, false},
		{"move folder", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.b.ID, NewParentID: s.dest.ID, NewName: "b"}
		}, nil, false},
		{"target exists", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: s.dest.ID, NewName: "taken"}
		}, storage.ErrExists, false},
		{"overwrite file", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: s.dest.ID, NewName: "taken", Overwrite: true}
		}, nil, true},
		{"overwrite folder with file", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: s.dest.ID, NewName: "takenDir", Overwrite: true}
		}, nil, true},
		{"parent missing", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.file.ID, NewParentID: "missing", NewName: "x"}
		}, storage.ErrConflict, false},
		{"parent is a file", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.b.ID, NewParentID: s.file.ID, NewName: "x"}
		}, storage.ErrConflict, false},
		{"into itself", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.a.ID, NewParentID: s.a.ID, NewName: "x"}
		}, storage.ErrConflict, false},
		{"into its descendant", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.a.ID, NewParentID: s.b.ID, NewName: "x"}
		}, storage.ErrConflict, false},
		{"onto its ancestor", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.b.ID, NewParentID: s.f.root(), NewName: "a", Overwrite: true}
		}, storage.ErrConflict, false},
		{"space root", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: s.f.root(), NewParentID: s.dest.ID, NewName: "x"}
		}, storage.ErrInvalid, false},
		{"missing node", func(s setup) storage.Transfer {
			return storage.Transfer{NodeID: "missing", NewParentID: s.dest.ID, NewName: "x"}
		}, storage.ErrNotFound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mk(t)
			f := s.f
			tr := tc.tr(s)
			src, _ := f.s.Node(ctx, f.space.ID, tr.NodeID)
			rootBefore := f.node(t, f.root())
			n, replaced, err := f.s.Move(ctx, f.space.ID, tr)
			wantErr(t, err, tc.want)
			if err != nil {
				if got := f.node(t, f.root()); got != rootBefore {
					t.Fatalf("failed move changed the root: %+v → %+v", rootBefore, got)
				}
				return
			}
			if replaced != tc.wantReplaced {
				t.Fatalf("replaced = %v", replaced)
			}
			if n.ID != src.ID || n.ParentID != tr.NewParentID || n.Name != tr.NewName || n.Size != src.Size || !n.ModTime.Equal(src.ModTime) {
				t.Fatalf("moved = %+v, source %+v", n, src)
			}
			if got, err := f.s.Child(ctx, f.space.ID, tr.NewParentID, tr.NewName); err != nil || got != n {
				t.Fatalf("Child at target = %+v, %v", got, err)
			}
			if _, err := f.s.Child(ctx, f.space.ID, src.ParentID, src.Name); src.ParentID != tr.NewParentID || src.Name != tr.NewName {
				wantErr(t, err, storage.ErrNotFound)
			}
			// Sizes add up: the tree holds the same files minus a replaced target.
			want := rootBefore.Size
			if replaced {
				want -= int64(len("old"))
				if tr.NewName == "takenDir" {
					want += int64(len("old")) - int64(len("inner"))
				}
			}
			if got := f.node(t, f.root()).Size; got != want {
				t.Fatalf("root size %d, want %d", got, want)
			}
			if !n.IsFolder() {
				if got := f.read(t, n.ID); got != "content" {
					t.Fatalf("content after move = %q", got)
				}
			}
		})
	}
}

// snapshot returns the raw records of the given nodes.
func (f *fixture) snapshot(t testing.TB, ids []string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	f.s.view(func(tx *txn) error {
		for _, id := range ids {
			out[id] = bytes.Clone(tx.children().Get(tx.nodes().Get([]byte(id))))
		}
		return nil
	})
	return out
}

// bigTree creates folders × filesPer files below parent and returns the ids
// of everything created.
func (f *fixture) bigTree(t testing.TB, parent string, folders, filesPer int) []string {
	t.Helper()
	var ids []string
	for i := range folders {
		d := f.mkdir(t, parent, fmt.Sprintf("d%03d", i))
		ids = append(ids, d.ID)
		for j := range filesPer {
			ids = append(ids, f.put(t, d.ID, fmt.Sprintf("f%03d", j), "x").ID)
		}
	}
	return ids
}

func TestMoveIsIndependentOfSubtreeSize(t *testing.T) {
	f := newFixture(t)
	a := f.mkdir(t, f.root(), "a")
	big := f.mkdir(t, a.ID, "big")
	ids := f.bigTree(t, big.ID, 30, 10)
	dest := f.mkdir(t, f.root(), "dest")
	before := f.snapshot(t, ids)
	var childrenBefore int
	f.s.view(func(tx *txn) error { childrenBefore = tx.children().Stats().KeyN; return nil })

	start := time.Now()
	moved, _, err := f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: big.ID, NewParentID: dest.ID, NewName: "big"})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	after := f.snapshot(t, ids)
	for _, id := range ids {
		if !bytes.Equal(before[id], after[id]) {
			t.Fatalf("descendant %s was rewritten", id)
		}
	}
	var childrenAfter int
	f.s.view(func(tx *txn) error { childrenAfter = tx.children().Stats().KeyN; return nil })
	if childrenAfter != childrenBefore {
		t.Fatalf("children entries %d → %d", childrenBefore, childrenAfter)
	}
	if moved.Size != 300 || f.node(t, dest.ID).Size != 300 || f.node(t, a.ID).Size != 0 || f.node(t, f.root()).Size != 300 {
		t.Fatal("sizes not moved along")
	}
	if took > 50*time.Millisecond {
		t.Errorf("move of %d descendants took %v", len(ids), took)
	}
	// Paths resolve through the moved folder.
	d, err := f.s.Child(ctx, f.space.ID, moved.ID, "d007")
	if err != nil || d.ID != ids[7*11] {
		t.Fatalf("child after move = %+v, %v", d, err)
	}
}

func TestCopy(t *testing.T) {
	f := newFixture(t)
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, a.ID, "b")
	file := f.put(t, a.ID, "file", "content")
	deep := f.put(t, b.ID, "deep", "deep!")
	shared := storage.Property{Name: storage.PropName{Space: "urn:x", Local: "color"}, Value: "red"}
	fav := storage.Property{Name: storage.PropName{Space: "http://owncloud.org/ns", Local: "favorite"}, User: "einstein", Value: "1"}
	for _, id := range []string{a.ID, deep.ID} {
		if err := f.s.PatchProps(ctx, f.space.ID, id, []storage.PropPatch{{Property: shared}, {Property: fav}}); err != nil {
			t.Fatal(err)
		}
	}
	dest := f.mkdir(t, f.root(), "dest")
	rootBefore := f.node(t, f.root())
	aBefore := f.node(t, a.ID)

	top, replaced, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: a.ID, NewParentID: dest.ID, NewName: "a2"})
	if err != nil || replaced {
		t.Fatalf("copy = %v, %v", replaced, err)
	}
	if top.ID == a.ID || top.Name != "a2" || top.ParentID != dest.ID || top.Size != aBefore.Size || top.Size != int64(len("content")+len("deep!")) {
		t.Fatalf("top = %+v", top)
	}
	if got := f.node(t, f.root()).Size; got != rootBefore.Size*2 {
		t.Fatalf("root size %d, want %d", got, rootBefore.Size*2)
	}
	if names := f.names(t, top.ID); !slices.Equal(names, []string{"b", "file"}) {
		t.Fatalf("copied children %v", names)
	}
	b2, _ := f.s.Child(ctx, f.space.ID, top.ID, "b")
	deep2, err := f.s.Child(ctx, f.space.ID, b2.ID, "deep")
	if err != nil || deep2.ID == deep.ID || b2.ID == b.ID {
		t.Fatalf("deep copy = %+v, %v", deep2, err)
	}
	if deep2.Checksums != deep.Checksums || deep2.Size != deep.Size || !deep2.ModTime.Equal(deep.ModTime) {
		t.Fatalf("deep copy metadata = %+v, source %+v", deep2, deep)
	}
	if got := f.read(t, deep2.ID); got != "deep!" {
		t.Fatalf("copied content = %q", got)
	}
	// Hard link: same inode, different content file.
	p1 := filepath.Join(f.dir, "blobs", f.blob(t, deep.ID)[:2], f.blob(t, deep.ID))
	p2 := filepath.Join(f.dir, "blobs", f.blob(t, deep2.ID)[:2], f.blob(t, deep2.ID))
	fi1, _ := os.Stat(p1)
	fi2, _ := os.Stat(p2)
	if p1 == p2 || !os.SameFile(fi1, fi2) {
		t.Fatal("content is not hard-linked")
	}
	// Shared properties are copied, per-user ones are not.
	for _, id := range []string{top.ID, deep2.ID} {
		props, err := f.s.Props(ctx, f.space.ID, id, "einstein")
		if err != nil || len(props) != 1 || props[0] != shared {
			t.Fatalf("props of copy = %+v, %v", props, err)
		}
	}
	// Replacing the source does not affect the copy, and vice versa.
	f.put(t, b.ID, "deep", "changed")
	if got := f.read(t, deep2.ID); got != "deep!" {
		t.Fatalf("copy changed with the source: %q", got)
	}
	// Removing the copy leaves the source content.
	if err := f.s.Remove(ctx, f.space.ID, top.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, file.ID); got != "content" {
		t.Fatalf("source content after removing the copy = %q", got)
	}
}

func TestCopyRules(t *testing.T) {
	f := newFixture(t)
	f.keepNoUndo() // what is removed or replaced is destroyed at once
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, a.ID, "b")
	f.put(t, b.ID, "x", "12345")
	file := f.put(t, a.ID, "file", "abc")
	dest := f.mkdir(t, f.root(), "dest")
	f.put(t, dest.ID, "taken", "old!")

	_, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: dest.ID, NewName: "taken"})
	wantErr(t, err, storage.ErrExists)
	_, _, err = f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: a.ID, NewParentID: b.ID, NewName: "a"})
	wantErr(t, err, storage.ErrConflict)
	_, _, err = f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: a.ID, NewParentID: a.ID, NewName: "a"})
	wantErr(t, err, storage.ErrConflict)
	_, _, err = f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: b.ID, NewParentID: f.root(), NewName: "a", Overwrite: true})
	wantErr(t, err, storage.ErrConflict)
	_, _, err = f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: file.ID, NewName: "x"})
	wantErr(t, err, storage.ErrConflict)
	_, _, err = f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: "missing", NewName: "x"})
	wantErr(t, err, storage.ErrConflict)

	// Onto itself: nothing happens.
	n, replaced, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: a.ID, NewName: "file", Overwrite: true})
	if err != nil || replaced || n != file {
		t.Fatalf("copy onto itself = %+v, %v, %v", n, replaced, err)
	}

	// Overwrite.
	before := f.node(t, f.root()).Size
	oldBlob := f.blob(t, mustChild(t, f, dest.ID, "taken").ID)
	n, replaced, err = f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: dest.ID, NewName: "taken", Overwrite: true})
	if err != nil || !replaced || n.ID == file.ID {
		t.Fatalf("overwrite = %+v, %v, %v", n, replaced, err)
	}
	if got := f.read(t, n.ID); got != "abc" {
		t.Fatalf("overwritten content %q", got)
	}
	if got := f.node(t, f.root()).Size; got != before-4+3 {
		t.Fatalf("root size %d, want %d", got, before-1)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "blobs", oldBlob[:2], oldBlob)); !os.IsNotExist(err) {
		t.Fatalf("replaced content file: %v", err)
	}

	// Shallow: the folder only.
	sh, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: a.ID, NewParentID: dest.ID, NewName: "shallow", Shallow: true})
	if err != nil || !sh.IsFolder() || sh.Size != 0 {
		t.Fatalf("shallow = %+v, %v", sh, err)
	}
	if names := f.names(t, sh.ID); len(names) != 0 {
		t.Fatalf("shallow copy has children %v", names)
	}
	// Copy of a file into the same folder under a new name.
	c, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: a.ID, NewName: "file copy"})
	if err != nil || f.read(t, c.ID) != "abc" || c.Checksums != file.Checksums {
		t.Fatalf("file copy = %+v, %v", c, err)
	}
}

func TestCopyQuota(t *testing.T) {
	f := newFixture(t)
	file := f.put(t, f.root(), "file", "0123456789")
	if _, err := f.s.PutSpace(ctx, storage.Space{ID: f.space.ID, Quota: 15}); err != nil {
		t.Fatal(err)
	}
	_, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "copy"})
	wantErr(t, err, storage.ErrInsufficientStorage)
	if names := f.names(t, f.root()); !slices.Equal(names, []string{"file"}) {
		t.Fatalf("failed copy left %v", names)
	}
	// Content files of a failed copy are not left behind.
	count := 0
	filepath.WalkDir(filepath.Join(f.dir, "blobs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			count++
		}
		return nil
	})
	if count != 1 {
		t.Fatalf("%d content files, want 1", count)
	}
}

func mustChild(t testing.TB, f *fixture, parent, name string) storage.Node {
	t.Helper()
	n, err := f.s.Child(ctx, f.space.ID, parent, name)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCopyFallsBackToCopying(t *testing.T) {
	f := newFixture(t)
	file := f.put(t, f.root(), "file", "fallback")
	f.s.link = func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: errors.ErrUnsupported}
	}
	c, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "copy"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, c.ID); got != "fallback" {
		t.Fatalf("copied content %q", got)
	}
	fi1, _ := os.Stat(f.s.blobPath(f.blob(t, file.ID)))
	fi2, _ := os.Stat(f.s.blobPath(f.blob(t, c.ID)))
	if os.SameFile(fi1, fi2) {
		t.Fatal("copy is a link")
	}
	if entries, _ := os.ReadDir(filepath.Join(f.dir, "uploads")); len(entries) != 0 {
		t.Fatalf("copy left %d temporary files", len(entries))
	}
}
