package boltstore

import (
	"bytes"

	"github.com/davspaces/davspaces/storage"
)

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
	if !t.hasLocks(spaceID) {
		return nil
	}
	filter, err := t.coveringFilter(nodes)
	if err != nil {
		return err
	}
	locks, err := t.liveLocksOf(spaceID, t.now, filter)
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

// hasLocks reports whether the space has a lock record, live or not.
func (t *txn) hasLocks(spaceID string) bool {
	prefix := lockKey(spaceID, "")
	k, _ := t.locks().Cursor().Seek(prefix)
	return k != nil && bytes.HasPrefix(k, prefix)
}

// coveringFilter picks the locks that can cover one of nodes: their own
// and the Deep ones of their ancestors, which is all a check needs unless
// it looks below a node (nil then: every lock). A write into a space of
// many locks (a copy by davfs2 holds one per file) then decodes a few.
func (t *txn) coveringFilter(nodes []lockedNode) (func(node []byte, deep bool) bool, error) {
	above := map[string]bool{}
	for _, n := range nodes {
		if n.below {
			return nil, nil
		}
		up, err := t.ancestors(n.id)
		if err != nil {
			return nil, err
		}
		for id := range up {
			above[id] = true
		}
	}
	own := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		own[n.id] = true
	}
	return func(node []byte, deep bool) bool { return own[string(node)] || (deep && above[string(node)]) }, nil
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
