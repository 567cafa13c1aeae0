package pgstore

import (
	"context"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.TrashBatchRestorer = (*Store)(nil)

// RestoreTrashBatch restores many trash items of a space, a batch of
// them per change (storage.RestoreBatch). Each restore runs in a
// savepoint of its own, so that one refused leaves the others of its
// batch standing.
func (s *Store) RestoreTrashBatch(ctx context.Context, spaceID string, restores []storage.TrashRestore) ([]error, int, error) {
	return storage.RestoreInBatches(ctx, restores, func(batch func(storage.RestoreFunc) error) error {
		return s.change(ctx, spaceID, func(c *change) error {
			return batch(func(r storage.TrashRestore) (error, error) { return s.restoreSaved(ctx, c, spaceID, r) })
		})
	})
}

// restoreSaved runs restore r in a savepoint of c: refused, it leaves
// nothing of itself; failed, it is an error of the store, which ends c.
func (s *Store) restoreSaved(ctx context.Context, c *change, spaceID string, r storage.TrashRestore) (refused, failed error) {
	if err := storage.ValidTrashKey(r.Key); err != nil {
		return err, nil
	}
	if err := validName(r.Name); err != nil {
		return fmt.Errorf("restore: %w", err), nil
	}
	sp, err := c.tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	t := storage.Transfer{NodeID: r.NodeID, NewParentID: r.ParentID, NewName: r.Name}
	_, _, refused = s.restoreIn(ctx, &change{tx: sp, now: c.now, tag: c.tag}, spaceID, r.Key, t)
	if refused != nil {
		if err := sp.Rollback(ctx); err != nil {
			return nil, fmt.Errorf("restore %s: %w (rolling back: %w)", r.Key, refused, err)
		}
		return fmt.Errorf("restore %s of trash item %q: %w", r.NodeID, r.Key, refused), nil
	}
	return nil, sp.Commit(ctx)
}
