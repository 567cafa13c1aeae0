package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// A change whose Conditions carry Locks checks, in its own transaction
// (which holds the space's row lock, as every lock change does), that the
// submitter holds the locks on what it changes: the protocol layer checks
// before the change, but a LOCK granted in between, through any node, must
// not let the change through.

// lockedNode is a node a change touches, with below also every node under
// it (what a remove or a replacement destroys).
type lockedNode struct {
	id    string
	below bool
}

// checkHeld fails with a *storage.LockedError unless lt holds a lock on
// each of nodes, in the change's own transaction (which holds the space's
// row lock). A nil lt checks nothing; a space without locks costs one
// index lookup.
func (s *Store) checkHeld(ctx context.Context, tx pgx.Tx, spaceID string, lt *storage.LockTokens, nodes ...lockedNode) error {
	if lt == nil || len(nodes) == 0 {
		return nil
	}
	locks, err := loadLiveLocks(ctx, tx, spaceID, s.dbNow())
	if err != nil || len(locks) == 0 {
		return err
	}
	for _, n := range nodes {
		if err := checkHeldOn(ctx, tx, n, locks, lt); err != nil {
			return err
		}
	}
	return nil
}

// checkHeldOn checks one node against the live locks of its space, as
// the protocol layer does (see storage.CheckHeld).
func checkHeldOn(ctx context.Context, tx pgx.Tx, n lockedNode, locks []storage.Lock, lt *storage.LockTokens) error {
	covering, err := locksCovering(ctx, tx, n.id, locks, false)
	if err != nil {
		return err
	}
	var below func() ([]storage.Lock, error)
	if n.below {
		below = func() ([]storage.Lock, error) { return locksCovering(ctx, tx, n.id, locks, true) }
	}
	return storage.CheckHeld(lt, covering, below)
}
