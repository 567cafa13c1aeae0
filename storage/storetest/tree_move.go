package storetest

import (
	"testing"

	"github.com/davspaces/davspaces/storage"
)

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
		}, storage.ErrDestinationInsideSource, false, 0},
		{"into its descendant", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.a.ID, NewParentID: s.b.ID, NewName: "x"}
		}, storage.ErrDestinationInsideSource, false, 0},
		{"onto its ancestor", func(s moveSetup) storage.Transfer {
			return storage.Transfer{NodeID: s.b.ID, NewParentID: s.a.ParentID, NewName: "a", Overwrite: true}
		}, storage.ErrDestinationContainsSource, false, 0},
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
		wantErr(t, "Move the root", err, storage.ErrRootMove)
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
