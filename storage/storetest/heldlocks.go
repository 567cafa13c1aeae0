package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// heldTree is the tree each case of testChangesHonourLocks works on, in a
// folder of its own:
//
//	top/a/f, top/a/sub/g, top/b/x
type heldTree struct {
	top, a, f, sub, g, b, x storage.Node
}

func (f *fixture) heldTree(t *testing.T, name string) heldTree {
	t.Helper()
	var h heldTree
	h.top = f.mkdir(t, f.root(), name)
	h.a = f.mkdir(t, h.top.ID, "a")
	h.f = f.put(t, h.a.ID, "f", "f")
	h.sub = f.mkdir(t, h.a.ID, "sub")
	h.g = f.put(t, h.sub.ID, "g", "g")
	h.b = f.mkdir(t, h.top.ID, "b")
	h.x = f.put(t, h.b.ID, "x", "x")
	return h
}

// byName picks a node of the tree.
func (h heldTree) byName(name string) storage.Node {
	return map[string]storage.Node{"top": h.top, "a": h.a, "f": h.f, "sub": h.sub, "g": h.g, "b": h.b, "x": h.x}[name]
}

// heldChange is a change made with Conditions.Locks.
type heldChange func(f *fixture, h heldTree, lt *storage.LockTokens) error

func commitTo(name string, byID bool) heldChange {
	return func(f *fixture, h heldTree, lt *storage.LockTokens) error {
		c := storage.Commit{ParentID: h.a.ID, Name: name, Conditions: storage.Conditions{Locks: lt}}
		if byID {
			c = storage.Commit{NodeID: h.f.ID, Conditions: storage.Conditions{Locks: lt}}
		}
		_, _, err := f.commit(f.space.ID, "new", c)
		return err
	}
}

func completeTo(name string) heldChange {
	return func(f *fixture, h heldTree, lt *storage.LockTokens) error {
		us := f.sessionFor(name, 3)
		us.Target.ParentID = h.a.ID
		us, err := f.s.CreateSession(f.ctx, us)
		if err != nil {
			return fmt.Errorf("CreateSession: %w", err)
		}
		if _, err := f.s.AppendSession(f.ctx, us.ID, 0, strings.NewReader("new"), nil); err != nil {
			return fmt.Errorf("AppendSession: %w", err)
		}
		_, _, err = f.s.CompleteSession(f.ctx, us.ID, lt, time.Time{})
		return err
	}
}

func removeOf(name string) heldChange {
	return func(f *fixture, h heldTree, lt *storage.LockTokens) error {
		return f.s.Remove(f.ctx, f.space.ID, h.byName(name).ID, storage.Conditions{Locks: lt})
	}
}

// transferOf moves or copies the node src into folder dir as name.
func transferOf(move bool, src, dir, name string) heldChange {
	return func(f *fixture, h heldTree, lt *storage.LockTokens) error {
		tr := storage.Transfer{NodeID: h.byName(src).ID, NewParentID: h.byName(dir).ID, NewName: name,
			Overwrite: true, Conditions: storage.Conditions{Locks: lt}}
		var err error
		if move {
			_, _, err = f.s.Move(f.ctx, f.space.ID, tr)
		} else {
			_, _, err = f.s.Copy(f.ctx, f.space.ID, tr)
		}
		return err
	}
}

// testChangesHonourLocks checks that a change with Conditions.Locks is
// refused, in its own transaction, when it touches a lock it does not hold:
// the lock is taken right before the change, as a LOCK granted after the
// protocol layer's check would be. Each case runs three times: without
// the token (ErrLocked naming the lock root unless the lock does not cover
// the change), with the token but as another user (the same), and with the
// token (always allowed). Locks nil checks nothing.
func testChangesHonourLocks(t *testing.T, f *fixture) {
	tests := []struct {
		name   string
		lock   string
		deep   bool
		change heldChange
		locked bool
	}{
		{"commit to a locked file", "f", false, commitTo("f", false), true},
		{"commit by id to a locked file", "f", false, commitTo("", true), true},
		{"commit to a file in a depth-0 locked folder", "a", false, commitTo("f", false), false},
		{"commit to a file in a deep locked folder", "a", true, commitTo("f", false), true},
		{"commit to a file below a deep lock", "top", true, commitTo("f", false), true},
		{"commit creating a file in a depth-0 locked folder", "a", false, commitTo("new", false), true},
		{"commit creating a file beside a locked one", "f", false, commitTo("new", false), false},
		{"session creating a file in a locked folder", "a", false, completeTo("new"), true},
		{"session creating a file beside a locked one", "f", false, completeTo("new"), false},
		{"remove a locked file", "f", false, removeOf("f"), true},
		{"remove a file of a locked folder", "a", false, removeOf("f"), true},
		{"remove a folder with a locked file below", "a", false, removeOf("sub"), true},
		{"remove a folder above a locked file", "g", false, removeOf("a"), true},
		{"remove a folder beside a locked one", "b", false, removeOf("a"), false},
		{"move out of a locked folder", "a", false, transferOf(true, "f", "b", "y"), true},
		{"move into a locked folder", "b", false, transferOf(true, "f", "b", "y"), true},
		{"move a folder above a locked file", "g", false, transferOf(true, "a", "b", "y"), true},
		{"move onto a locked file", "x", false, transferOf(true, "f", "b", "x"), true},
		{"move beside a locked folder", "sub", false, transferOf(true, "f", "b", "y"), false},
		{"copy into a locked folder", "b", false, transferOf(false, "f", "b", "y"), true},
		{"copy onto a locked file", "x", false, transferOf(false, "f", "b", "x"), true},
		{"copy onto a file of a depth-0 locked folder", "b", false, transferOf(false, "f", "b", "x"), false},
		{"copy out of a locked folder", "a", true, transferOf(false, "a", "b", "y"), false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree := func(variant string) (heldTree, storage.Lock) {
				h := f.heldTree(t, fmt.Sprintf("%d-%s", i, variant))
				return h, f.lock(t, h.byName(tc.lock).ID, tc.deep, storage.LockExclusive)
			}
			h, l := tree("none")
			err := tc.change(f, h, &storage.LockTokens{User: user.ID})
			wantLocked(t, "without the token", err, tc.locked, l)
			h, l = tree("other")
			err = tc.change(f, h, &storage.LockTokens{User: "marie", Tokens: []string{l.Token}})
			wantLocked(t, "with another user's token", err, tc.locked, l)
			h, l = tree("held")
			err = tc.change(f, h, &storage.LockTokens{User: user.ID, Tokens: []string{"urn:uuid:other", l.Token}})
			wantLocked(t, "with the token", err, false, l)
			h, l = tree("unchecked")
			err = tc.change(f, h, nil)
			wantLocked(t, "with Locks nil", err, false, l)
		})
	}
}

// testSharedLocksHeldDeep checks that a held Deep lock above a node covers
// the locks below it, and that one held shared lock is enough.
func testSharedLocksHeldDeep(t *testing.T, f *fixture) {
	h := f.heldTree(t, "shared")
	mine := f.lock(t, h.a.ID, true, storage.LockShared)
	theirs := f.lock(t, h.g.ID, false, storage.LockShared)
	lt := &storage.LockTokens{User: user.ID, Tokens: []string{theirs.Token}}
	// Holding only the lock of g: a's own lock blocks the remove.
	err := removeOf("a")(f, h, lt)
	wantLocked(t, "remove holding the lock below", err, true, mine)
	lt.Tokens = []string{mine.Token}
	err = removeOf("a")(f, h, lt)
	wantLocked(t, "remove holding the deep lock", err, false, mine)
}

// wantLocked checks that err is a *storage.LockedError naming l when
// locked, and nil otherwise.
func wantLocked(t *testing.T, what string, err error, locked bool, l storage.Lock) {
	t.Helper()
	if !locked {
		if err != nil {
			t.Fatalf("%s: %v, want no error", what, err)
		}
		return
	}
	var le *storage.LockedError
	if !errors.As(err, &le) || !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("%s: %v, want a *storage.LockedError", what, err)
	}
	if le.Root != l.Root {
		t.Fatalf("%s: lock root %q, want %q", what, le.Root, l.Root)
	}
}
