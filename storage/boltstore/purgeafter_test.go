package boltstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// removedFolderFiles is the size of the folder the no-trash remove tests
// destroy: more than a part of a purge.
const removedFolderFiles = 3 * purgeNodesPerTxn

// In a space that keeps no trash, the remove of a big folder commits the
// move of one node, then destroys the tree in parts, each a transaction
// of its own: when it returns the tree is gone, the usage back to
// nothing, the trash empty and the store checks clean.
func TestRemoveWithoutTrashInParts(t *testing.T) {
	f := newFixture(t)
	f.keepNoUndo()
	dir := f.mkdir(t, f.root(), "big")
	f.seedFiles(t, dir.ID, removedFolderFiles)
	// The sizes seedFiles leaves to the commits it skips.
	size := int64(removedFolderFiles*1000 + removedFolderFiles*(removedFolderFiles-1)/2)
	if err := f.s.update(func(t *txn) error { return t.propagate(dir.ID, size) }); err != nil {
		t.Fatal(err)
	}
	before := f.s.WriteCommits()
	if err := f.s.Remove(ctx, f.space.ID, dir.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	if commits := f.s.WriteCommits() - before; commits < 3 {
		t.Errorf("the remove of %d files committed %d transactions; want one and the parts of a purge",
			removedFolderFiles, commits)
	}
	if _, err := f.s.Node(ctx, f.space.ID, dir.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the removed folder: %v; want ErrNotFound", err)
	}
	if items, err := storage.AllTrashItems(ctx, f.s, f.space.ID); err != nil || len(items) != 0 {
		t.Errorf("trash = %d items, %v; want none", len(items), err)
	}
	if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u != (storage.Usage{}) {
		t.Errorf("Usage = %+v, %v; want nothing", u, err)
	}
	problems, _ := runCheck(t, f.s, storage.CheckOptions{})
	for _, p := range problems {
		if p.Kind != storage.ProblemMissingContent { // seedFiles writes none
			t.Errorf("check: %s", p)
		}
	}
}

// A store that stops between the remove's commit and its purge leaves a
// trash item in a space that keeps none, and a store that checks clean;
// the next expiry pass destroys it.
func TestRemoveWithoutTrashStoppedBeforeThePurge(t *testing.T) {
	f := newFixture(t)
	f.keepNoUndo()
	dir := f.mkdir(t, f.root(), "tree")
	for i := range 10 {
		f.put(t, dir.ID, fmt.Sprintf("f%d", i), "content")
	}
	err := f.s.update(func(t *txn) error {
		n, _, err := t.node(dir.ID)
		if err != nil {
			return err
		}
		if err := t.discard(f.space.ID, n); err != nil {
			return err
		}
		t.purges = nil // the store stops before it purges
		return t.propagate(n.ParentID, -n.Size)
	})
	if err != nil {
		t.Fatal(err)
	}
	if problems, _ := runCheck(t, f.s, storage.CheckOptions{}); len(problems) != 0 {
		t.Errorf("check before the expiry: %v", problems)
	}
	if _, err := f.s.ExpireUndo(ctx); err != nil {
		t.Fatal(err)
	}
	if items, err := storage.AllTrashItems(ctx, f.s, f.space.ID); err != nil || len(items) != 0 {
		t.Errorf("after the expiry: trash = %d items, %v; want none", len(items), err)
	}
	if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u != (storage.Usage{}) {
		t.Errorf("after the expiry: Usage = %+v, %v; want nothing", u, err)
	}
}
