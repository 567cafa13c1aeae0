package boltstore

import "github.com/davspaces/davspaces/storage"

// A change whose Conditions carry Locks checks, in its own write
// transaction, that the submitter holds the locks on what it changes: the
// protocol layer checks before the change, but a LOCK granted in between
// must not let the change through.

// lockedNode is a node a change touches, with below also every node under
// it (what a remove or a replacement destroys).
type lockedNode struct {
	id    string
	below bool
}

// checkHeld fails with a *storage.LockedError unless lt holds a lock on
// each of nodes. A nil lt checks nothing; a space without locks costs one
// cursor seek.
func (t *txn) checkHeld(spaceID string, lt *storage.LockTokens, nodes ...lockedNode) error {
	if lt == nil || len(nodes) == 0 {
		return nil
	}
	locks, err := t.liveLocks(spaceID, t.now, false)
	if err != nil || len(locks) == 0 {
		return err
	}
	for _, n := range nodes {
		if err := t.checkHeldOn(n, locks, lt); err != nil {
			return err
		}
	}
	return nil
}

// checkHeldOn checks one node against the live locks of its space, as
// the protocol layer does (see storage.CheckHeld).
func (t *txn) checkHeldOn(n lockedNode, locks []storage.Lock, lt *storage.LockTokens) error {
	covering, err := t.locksCovering(n.id, locks, false)
	if err != nil {
		return err
	}
	var below func() ([]storage.Lock, error)
	if n.below {
		below = func() ([]storage.Lock, error) { return t.locksCovering(n.id, locks, true) }
	}
	return storage.CheckHeld(lt, covering, below)
}

// lockedNodes are the nodes a move or copy changes: an existing target
// and everything below it, or else the target's folder; for a move also the
// source, everything below it and its folder.
func (x transfer) lockedNodes(move bool) []lockedNode {
	var out []lockedNode
	if move {
		out = append(out, lockedNode{id: x.src.ID, below: x.src.IsFolder()}, lockedNode{id: x.src.ParentID})
	}
	if x.replaced {
		return append(out, lockedNode{id: x.target.ID, below: x.target.IsFolder()})
	}
	return append(out, lockedNode{id: x.dst.ID})
}
