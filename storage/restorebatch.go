package storage

import (
	"context"
	"fmt"
	"time"
)

// TrashRestore is one restore of a batch: node NodeID of trash item Key
// back into its space as child Name of folder ParentID, as RestoreTrash
// does it without Overwrite (an existing target refuses it, ErrExists).
type TrashRestore struct {
	Key, NodeID, ParentID, Name string
}

// TrashBatchRestorer restores many trash items in few transactions: what
// one request restores of a mass-delete event, ten thousand files, costs
// a transaction per batch rather than one per file.
type TrashBatchRestorer interface {
	// RestoreTrashBatch runs restores in their order, as RestoreTrash
	// runs each, in transactions of at most RestoreBatchItems restores
	// that stop after the restore that passes RestoreBatchBudget. It
	// returns the outcome of each, nil for a restored one: a restore
	// refused (ErrExists, ErrNotFound, ErrConflict, ErrLocked...) changes
	// nothing and does not stop the others. An error of the store stops
	// it: what the transactions before committed stays done and has its
	// outcome, the outcomes past done mean nothing.
	RestoreTrashBatch(ctx context.Context, spaceID string, restores []TrashRestore) (outcomes []error, done int, err error)
}

// Bounds of a transaction of RestoreTrashBatch: a short transaction
// holds a space's lock, or the embedded store's writer, for no long
// stretch, while a restore of an event's files takes few of them.
const (
	RestoreBatchItems  = 200
	RestoreBatchBudget = 200 * time.Millisecond
)

// RestoreFunc runs one restore in a store's transaction: a refusal
// leaves nothing of the restore and goes into its outcome; a failure (an
// error of the store) must end the transaction.
type RestoreFunc func(TrashRestore) (refused, failed error)

// RestoreInBatches is RestoreTrashBatch over a store's transactions:
// inTxn runs its argument in one transaction of the store, handing it
// that transaction's RestoreFunc, and commits when it returns nil. A
// transaction the store runs again starts its share again.
func RestoreInBatches(ctx context.Context, restores []TrashRestore, inTxn func(batch func(RestoreFunc) error) error) ([]error, int, error) {
	outcomes := make([]error, len(restores))
	for done := 0; done < len(restores); {
		if err := ctx.Err(); err != nil {
			return outcomes, done, err
		}
		var next int
		err := inTxn(func(restore RestoreFunc) (err error) {
			next, err = restoreBatch(restores, outcomes, done, time.Now(), restore)
			return err
		})
		if err != nil {
			return outcomes, done, fmt.Errorf("restore %d trash items: %w", len(restores)-done, err)
		}
		done = next
	}
	return outcomes, len(restores), nil
}

// restoreBatch runs one transaction's share of a batch: restore on
// restores[from:] in order, until RestoreBatchItems ran or
// RestoreBatchBudget has passed since start, and returns where it
// stopped. restore's refusal goes into outcomes; its failure is returned.
func restoreBatch(restores []TrashRestore, outcomes []error, from int, start time.Time, restore RestoreFunc) (int, error) {
	i := from
	for i < len(restores) && i-from < RestoreBatchItems {
		refused, failed := restore(restores[i])
		if failed != nil {
			return i, failed
		}
		outcomes[i] = refused
		i++
		if time.Since(start) > RestoreBatchBudget {
			break
		}
	}
	return i, nil
}
