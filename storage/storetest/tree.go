package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// treeTests check the tree methods: Mkdir, Node, Child, ReadDir, Walk,
// Remove, Move and Copy, and what they do to sizes and etags above them.
var treeTests = []conformanceTest{
	{"MkdirRules", testMkdirRules},
	{"SpaceIsolation", testSpaceIsolation},
	{"ReadDirPaging", testReadDirPaging},
	{"Walk", testWalk},
	{"Propagation", testPropagation},
	{"RemoveSubtree", testRemoveSubtree},
	{"MoveRules", testMoveRules},
	{"MoveOntoItself", testMoveOntoItself},
	{"CopyTree", testCopyTree},
	{"CopyRules", testCopyRules},
	{"CopyQuota", testCopyQuota},
}

func testMkdirRules(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "file", "x")
	dir := f.mkdir(t, f.root(), "dir")
	if dir.Kind != storage.KindFolder || dir.ParentID != f.root() || dir.SpaceID != f.space.ID ||
		dir.Size != 0 || dir.ModTime.IsZero() || dir.ETag == "" {
		t.Fatalf("mkdir = %+v", dir)
	}
	if got := f.node(t, dir.ID); !sameNode(got, dir) {
		t.Fatalf("Node = %+v, Mkdir returned %+v", got, dir)
	}
	other, err := f.s.PersonalSpace(f.ctx, storage.User{ID: "marie"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, parent, child string
		want                error
	}{
		{"nested", dir.ID, "sub", nil},
		{"parent missing", "no-such-node", "x", storage.ErrConflict},
		{"parent is a file", file.ID, "x", storage.ErrConflict},
		{"parent in another space", other.ID, "x", storage.ErrConflict},
		{"folder exists", f.root(), "dir", storage.ErrExists},
		{"file exists", f.root(), "file", storage.ErrExists},
		{"invalid name", f.root(), "..", storage.ErrInvalid},
		{"slash in name", f.root(), "a/b", storage.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.s.Mkdir(f.ctx, f.space.ID, tc.parent, tc.child)
			wantErr(t, "Mkdir", err, tc.want)
		})
	}
}

// Every method refuses nodes of another space with ErrNotFound, and a
// transfer to another space with ErrCrossSpace.
func testSpaceIsolation(t *testing.T, f *fixture) {
	dir := f.mkdir(t, f.root(), "dir")
	file := f.put(t, dir.ID, "f.txt", "abc")
	if got, err := f.s.Child(f.ctx, f.space.ID, dir.ID, "f.txt"); err != nil || got != file {
		t.Fatalf("Child = %+v, %v; want %+v", got, err, file)
	}
	other, err := f.s.PersonalSpace(f.ctx, storage.User{ID: "marie"})
	if err != nil {
		t.Fatal(err)
	}
	sp := other.ID
	checks := map[string]error{}
	_, checks["Node"] = f.s.Node(f.ctx, sp, file.ID)
	_, checks["Child"] = f.s.Child(f.ctx, sp, dir.ID, "f.txt")
	_, checks["ReadDir"] = f.s.ReadDir(f.ctx, sp, dir.ID, "", 0)
	checks["Remove"] = f.s.Remove(f.ctx, sp, file.ID, storage.Conditions{})
	_, _, checks["Move"] = f.s.Move(f.ctx, sp, storage.Transfer{NodeID: file.ID, NewParentID: sp, NewName: "x"})
	_, _, checks["Copy"] = f.s.Copy(f.ctx, sp, storage.Transfer{NodeID: file.ID, NewParentID: sp, NewName: "x"})
	_, _, checks["Open"] = f.s.Open(f.ctx, sp, file.ID)
	_, checks["Props"] = f.s.Props(f.ctx, sp, file.ID, "")
	checks["PatchProps"] = f.s.PatchProps(f.ctx, sp, file.ID, []storage.PropPatch{set(prop("", "x", "", "v"))})
	_, checks["Node of a missing id"] = f.s.Node(f.ctx, f.space.ID, "missing")
	_, checks["Child of a missing folder"] = f.s.Child(f.ctx, f.space.ID, "missing", "f.txt")
	_, checks["Space of an empty id"] = f.s.Space(f.ctx, "")
	for name, err := range checks {
		wantErr(t, name, err, storage.ErrNotFound)
	}
	otherDir, err := f.s.Mkdir(f.ctx, sp, sp, "d")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: otherDir.ID, NewName: "x"})
	wantErr(t, "Move to another space", err, storage.ErrCrossSpace)
	_, _, err = f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: otherDir.ID, NewName: "x"})
	wantErr(t, "Copy to another space", err, storage.ErrCrossSpace)
	_, _, err = f.commit(f.space.ID, "y", storage.Commit{ParentID: otherDir.ID, Name: "x"})
	wantErr(t, "commit into another space's folder", err, storage.ErrConflict)
	if got := f.read(t, file.ID); got != "abc" {
		t.Fatalf("content = %q", got)
	}
}

func testReadDirPaging(t *testing.T, f *fixture) {
	dir := f.mkdir(t, f.root(), "dir")
	var want []string
	for i := 9; i >= 0; i-- { // created out of order
		name := fmt.Sprintf("entry-%02d", i)
		if i%2 == 0 {
			f.put(t, dir.ID, name, name)
		} else {
			f.mkdir(t, dir.ID, name)
		}
		want = append(want, name)
	}
	slices.Sort(want)
	// A sibling whose name shares the prefix must not leak in.
	sib := f.mkdir(t, f.root(), "dir2")
	f.put(t, sib.ID, "zzz", "x")

	var got []string
	after, pages := "", 0
	for {
		page, err := f.s.ReadDir(f.ctx, f.space.ID, dir.ID, after, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		pages++
		if len(page) > 4 {
			t.Fatalf("page of %d entries", len(page))
		}
		for _, n := range page {
			if n.ParentID != dir.ID || n.SpaceID != f.space.ID {
				t.Fatalf("entry %+v", n)
			}
			got = append(got, n.Name)
		}
		after = page[len(page)-1].Name
	}
	if pages != 3 || !slices.Equal(got, want) {
		t.Fatalf("%d pages of %v, want 3 of %v", pages, got, want)
	}
	// after need not be an existing name; limit 0 means all.
	page, err := f.s.ReadDir(f.ctx, f.space.ID, dir.ID, "entry-04x", 0)
	if err != nil || len(page) != 5 || page[0].Name != "entry-05" {
		t.Fatalf("ReadDir after a missing name = %d entries, %v", len(page), err)
	}
	empty := f.mkdir(t, f.root(), "empty")
	if page, err := f.s.ReadDir(f.ctx, f.space.ID, empty.ID, "", 10); err != nil || len(page) != 0 {
		t.Fatalf("ReadDir of an empty folder = %v, %v", page, err)
	}
	// Names sort by their bytes.
	bytewise := f.mkdir(t, f.root(), "bytewise")
	for _, name := range []string{"b", "B", "ä", "a", "_", "Z"} {
		f.mkdir(t, bytewise.ID, name)
	}
	if names := f.names(t, bytewise.ID); !slices.Equal(names, []string{"B", "Z", "_", "a", "b", "ä"}) {
		t.Fatalf("names %q are not in byte order", names)
	}
	file := f.put(t, f.root(), "file", "x")
	_, err = f.s.ReadDir(f.ctx, f.space.ID, file.ID, "", 10)
	wantErr(t, "ReadDir of a file", err, storage.ErrInvalid)
	_, err = f.s.ReadDir(f.ctx, f.space.ID, "missing", "", 10)
	wantErr(t, "ReadDir of a missing folder", err, storage.ErrNotFound)
}

// walker is a store that resolves paths in one snapshot.
type walker interface {
	Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error)
}

func testWalk(t *testing.T, f *fixture) {
	w, ok := f.s.(walker)
	if !ok {
		t.Skip("the store has no Walk")
	}
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, a.ID, "b")
	file := f.put(t, b.ID, "file", "x")
	other, err := f.s.PutSpace(f.ctx, storage.Space{ID: "storetest-walk", Quota: storage.NoQuota})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		spaceID string
		from    string
		names   []string
		want    []string // ids
		err     error
	}{
		{"the node alone", f.space.ID, f.root(), nil, []string{f.root()}, nil},
		{"a whole path", f.space.ID, f.root(), []string{"a", "b", "file"}, []string{f.root(), a.ID, b.ID, file.ID}, nil},
		{"from a folder below the root", f.space.ID, a.ID, []string{"b"}, []string{a.ID, b.ID}, nil},
		{"stops at a missing name", f.space.ID, f.root(), []string{"a", "nope", "file"}, []string{f.root(), a.ID}, nil},
		{"stops below a file", f.space.ID, f.root(), []string{"a", "b", "file", "x"}, []string{f.root(), a.ID, b.ID, file.ID}, nil},
		{"an invalid name", f.space.ID, f.root(), []string{"a", ".."}, nil, storage.ErrInvalid},
		{"an invalid name below a file is not looked up", f.space.ID, file.ID, []string{".."}, []string{file.ID}, nil},
		{"a missing node", f.space.ID, "missing", []string{"a"}, nil, storage.ErrNotFound},
		{"a node of another space", other.ID, a.ID, nil, nil, storage.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes, err := w.Walk(f.ctx, tc.spaceID, tc.from, tc.names)
			wantErr(t, "Walk", err, tc.err)
			var ids []string
			for _, n := range nodes {
				ids = append(ids, n.ID)
			}
			if !slices.Equal(ids, tc.want) {
				t.Fatalf("walked %v, want %v", ids, tc.want)
			}
		})
	}
}
