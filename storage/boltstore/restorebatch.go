package boltstore

import (
	"context"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.TrashBatchRestorer = (*Store)(nil)

// RestoreTrashBatch restores many trash items of a space, a batch of
// them per write transaction (storage.RestoreBatch).
func (s *Store) RestoreTrashBatch(ctx context.Context, spaceID string, restores []storage.TrashRestore) ([]error, int, error) {
	return storage.RestoreInBatches(ctx, restores, func(batch func(storage.RestoreFunc) error) error {
		return s.update(func(t *txn) error {
			return batch(func(r storage.TrashRestore) (error, error) { return t.restoreOne(spaceID, r) })
		})
	})
}

// restoreOne runs restore r in t as RestoreTrash without Overwrite: every
// check that may refuse it comes before its first write, so a refused
// one leaves nothing of itself; an error of a write fails t.
func (t *txn) restoreOne(spaceID string, r storage.TrashRestore) (refused, failed error) {
	refuse := func(err error) (error, error) {
		return fmt.Errorf("restore %s to %q: %w", r.Key, r.Name, err), nil
	}
	if err := storage.ValidTrashKey(r.Key); err != nil {
		return err, nil
	}
	if err := storage.ValidName(r.Name, nil); err != nil {
		return refuse(err)
	}
	item, err := t.trashItem(spaceID, r.Key)
	if err != nil {
		return refuse(err)
	}
	n, err := t.trashedNode(spaceID, item, r.NodeID)
	if err != nil {
		return refuse(err)
	}
	dst, err := t.folderIn(spaceID, r.ParentID, storage.ErrConflict)
	if err != nil {
		return refuse(err)
	}
	if _, exists, err := t.child(dst.ID, r.Name); err != nil {
		return refuse(err)
	} else if exists {
		return refuse(storage.TargetExists(r.Name))
	}
	if err := t.checkHeld(spaceID, nil, lockedNode{id: dst.ID}); err != nil {
		return refuse(err)
	}
	_, err = t.restoreFromTrash(spaceID, item, n, dst.ID, r.Name)
	return nil, err
}
