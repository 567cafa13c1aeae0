package storetest

import (
	"slices"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

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
		{"into itself", storage.Transfer{NodeID: a.ID, NewParentID: a.ID, NewName: "a"}, storage.ErrDestinationInsideSource},
		{"onto its ancestor", storage.Transfer{NodeID: b.ID, NewParentID: f.root(), NewName: "a", Overwrite: true}, storage.ErrDestinationContainsSource},
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
