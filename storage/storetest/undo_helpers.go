package storetest

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// keepNoUndo makes every space of the store keep no trash and no
// versions: a remove destroys, a replacement forgets, as before the
// trash existed. Tests of something else than undo use it where exact
// usage or freed room is what they check.
func (f *fixture) keepNoUndo() {
	f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{VersionsOff: true}})
}

// retain applies r to every space of the store.
func (f *fixture) retain(r storage.Retention) {
	f.s.SetRetention(storage.RetentionPolicy{Default: r})
}

// needClock skips t unless the store's clock can be moved on: retention
// is counted in days, which no test waits for.
func (f *fixture) needClock(t *testing.T) {
	t.Helper()
	if _, ok := f.s.(Clock); !ok {
		t.Skip("the store's clock cannot be moved on (storetest.Clock)")
	}
}

// remove removes node id and fails the test unless it goes.
func (f *fixture) remove(t *testing.T, id string) {
	t.Helper()
	if err := f.s.Remove(f.ctx, f.space.ID, id, storage.Conditions{}); err != nil {
		t.Fatalf("Remove %s: %v", id, err)
	}
}

// move moves (or renames) a node of the fixture's space as tr says.
func (f *fixture) move(t *testing.T, tr storage.Transfer) {
	t.Helper()
	if _, _, err := f.s.Move(f.ctx, f.space.ID, tr); err != nil {
		t.Fatalf("Move %s: %v", tr.NodeID, err)
	}
}

// replace commits content as the new content of file id.
func (f *fixture) replace(t *testing.T, id, content string) storage.Node {
	t.Helper()
	n, created, err := f.commit(f.space.ID, content, storage.Commit{NodeID: id})
	if err != nil || created {
		t.Fatalf("replace %s: created %v, %v", id, created, err)
	}
	return n
}

// trash returns the items in the fixture's trash, newest first.
func (f *fixture) trash(t *testing.T) []storage.TrashItem {
	t.Helper()
	items, err := storage.AllTrashItems(f.ctx, f.s, f.space.ID)
	if err != nil {
		t.Fatalf("TrashItems: %v", err)
	}
	return items
}

// trashed returns the one trash item whose node is id.
func (f *fixture) trashed(t *testing.T, id string) storage.TrashItem {
	t.Helper()
	var found []storage.TrashItem
	for _, it := range f.trash(t) {
		if it.Node.ID == id {
			found = append(found, it)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d trash items of node %s, want 1: %+v", len(found), id, found)
	}
	return found[0]
}

// wantTrashed checks that the trash holds the items of the nodes ids, in
// that order (newest first), and nothing else.
func (f *fixture) wantTrashed(t *testing.T, ids ...string) {
	t.Helper()
	var got []string
	for _, it := range f.trash(t) {
		got = append(got, it.Node.ID)
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("trash holds the nodes %v, want %v", got, ids)
	}
}

// restore restores node id of trash item key to name in folder parent.
func (f *fixture) restore(t *testing.T, key, id, parent, name string) storage.Node {
	t.Helper()
	n, replaced, err := f.s.RestoreTrash(f.ctx, f.space.ID, key, storage.Transfer{NodeID: id, NewParentID: parent, NewName: name})
	if err != nil || replaced {
		t.Fatalf("RestoreTrash %s of %s to %q: replaced %v, %v", id, key, name, replaced, err)
	}
	return n
}

// restoreItem restores trash item it where it was deleted from.
func (f *fixture) restoreItem(t *testing.T, it storage.TrashItem) storage.Node {
	t.Helper()
	return f.restore(t, it.Key, it.Node.ID, it.Node.ParentID, it.Node.Name)
}

// trashNames lists the names of the children of folder in trash item key.
func (f *fixture) trashNames(t *testing.T, key, folder string) []string {
	t.Helper()
	nodes, err := f.s.ReadTrashDir(f.ctx, f.space.ID, key, folder, "", 0)
	if err != nil {
		t.Fatalf("ReadTrashDir %s in %s: %v", folder, key, err)
	}
	return nodeNames(nodes)
}

func nodeNames(nodes []storage.Node) []string {
	names := make([]string, 0, len(nodes))
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	return names
}

// versions returns the versions of file id, newest first.
func (f *fixture) versions(t *testing.T, id string) []storage.Version {
	t.Helper()
	vs, err := f.s.FileVersions(f.ctx, f.space.ID, id)
	if err != nil {
		t.Fatalf("FileVersions %s: %v", id, err)
	}
	return vs
}

// readVersion returns the content of version key of file id.
func (f *fixture) readVersion(t *testing.T, id, key string) string {
	t.Helper()
	_, c, err := f.s.OpenVersion(f.ctx, f.space.ID, id, key)
	if err != nil {
		t.Fatalf("OpenVersion %s of %s: %v", key, id, err)
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("read version %s of %s: %v", key, id, err)
	}
	return string(b)
}

// wantVersions checks the contents of file id's versions, newest first.
func (f *fixture) wantVersions(t *testing.T, id string, contents ...string) []storage.Version {
	t.Helper()
	vs := f.versions(t, id)
	got := make([]string, 0, len(vs))
	for _, v := range vs {
		got = append(got, f.readVersion(t, id, v.Key))
	}
	if !slices.Equal(got, contents) {
		t.Fatalf("versions of %s hold %q, want %q", id, got, contents)
	}
	return vs
}

// wantGone checks that node id, deleted into the trash, is no node of the
// live space for any method that takes a node id.
func (f *fixture) wantGone(t *testing.T, n storage.Node) {
	t.Helper()
	sp := f.space.ID
	checks := []struct {
		what string
		err  error
	}{}
	check := func(what string, err error) {
		checks = append(checks, struct {
			what string
			err  error
		}{what, err})
	}
	_, err := f.s.Node(f.ctx, sp, n.ID)
	check("Node", err)
	_, err = f.s.Props(f.ctx, sp, n.ID, user.ID)
	check("Props", err)
	check("PatchProps", f.s.PatchProps(f.ctx, sp, n.ID, []storage.PropPatch{set(prop("urn:x", "late", "", "1"))}))
	_, _, err = f.s.Move(f.ctx, sp, storage.Transfer{NodeID: n.ID, NewParentID: f.root(), NewName: "moved-from-the-trash"})
	check("Move", err)
	_, _, err = f.s.Copy(f.ctx, sp, storage.Transfer{NodeID: n.ID, NewParentID: f.root(), NewName: "copied-from-the-trash"})
	check("Copy", err)
	check("Remove", f.s.Remove(f.ctx, sp, n.ID, storage.Conditions{}))
	_, err = f.tryLock(n.ID, false, storage.LockShared)
	check("CreateLock", err)
	if w, ok := f.s.(walker); ok {
		_, err = w.Walk(f.ctx, sp, n.ID, nil)
		check("Walk", err)
	}
	if n.IsFolder() {
		_, err = f.s.ReadDir(f.ctx, sp, n.ID, "", 0)
		check("ReadDir", err)
		_, err = f.s.ReadDirProps(f.ctx, sp, n.ID, user.ID, "", 0)
		check("ReadDirProps", err)
		// As into any missing folder: ErrConflict.
		if _, err := f.s.Mkdir(f.ctx, sp, n.ID, "made-in-the-trash"); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("Mkdir in %q (%s) in the trash: err %v, want ErrConflict", n.Name, n.ID, err)
		}
		if _, _, err := f.commit(sp, "late", storage.Commit{ParentID: n.ID, Name: "put-in-the-trash"}); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("a commit into %q (%s) in the trash: err %v, want ErrConflict", n.Name, n.ID, err)
		}
	} else {
		_, c, err := f.s.Open(f.ctx, sp, n.ID)
		if err == nil {
			c.Close()
		}
		check("Open", err)
		_, _, err = f.commit(sp, "late", storage.Commit{NodeID: n.ID})
		check("Commit by its id", err)
		_, err = f.s.FileVersions(f.ctx, sp, n.ID)
		check("FileVersions", err)
	}
	// Its name in its folder is free, or another node's.
	if c, err := f.s.Child(f.ctx, sp, n.ParentID, n.Name); err == nil && c.ID == n.ID {
		t.Fatalf("Child %q of %s is the node in the trash", n.Name, n.ParentID)
	}
	for _, c := range checks {
		if !errors.Is(c.err, storage.ErrNotFound) {
			t.Fatalf("%s of %q (%s) in the trash: err %v, want ErrNotFound", c.what, n.Name, n.ID, c.err)
		}
	}
}

// wantProps checks the dead properties of node id as user sees them.
func (f *fixture) wantProps(t *testing.T, id string, want ...storage.Property) {
	t.Helper()
	got, err := f.s.Props(f.ctx, f.space.ID, id, user.ID)
	if err != nil {
		t.Fatalf("Props %s: %v", id, err)
	}
	sortProps(got)
	want = slices.Clone(want)
	sortProps(want)
	if !slices.Equal(got, want) {
		t.Fatalf("props of %s = %+v, want %+v", id, got, want)
	}
}

func sortProps(ps []storage.Property) {
	slices.SortFunc(ps, func(a, b storage.Property) int {
		return strings.Compare(a.Name.Space+" "+a.Name.Local+" "+a.User, b.Name.Space+" "+b.Name.Local+" "+b.User)
	})
}

// propBytes is what ps count in Usage.Props.
func propBytes(ps ...storage.Property) int64 {
	var n int64
	for _, p := range ps {
		n += storage.PropBytes(p.Name, p.Value)
	}
	return n
}

// tick lets a second pass for the store, so that what happens next is
// later to the store than what happened before (trash keys and versions
// sort by time).
func (f *fixture) tick() { f.after(time.Second) }
