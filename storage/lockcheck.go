package storage

import (
	"fmt"
	"slices"
)

// CheckHeld applies the protocol layer's lock rule to one node a change
// touches, for stores that recheck it inside their own transaction (a LOCK
// granted between the protocol layer's check and the change must not let the
// change through). covering are the live locks covering the node. One held
// lock among them is enough for the node itself.
//
// below is nil unless the change also destroys everything under the node
// (a remove or a replacement); then each locked node under it needs a held
// lock of its own, unless a held Deep lock covers the node. below returns the
// live locks covering the node or any node under it; it is called only when
// that answer matters, since stores look it up separately.
//
// A failed check is a *LockedError wrapped with the locked node's ID.
func CheckHeld(lt *LockTokens, covering []Lock, below func() ([]Lock, error)) error {
	if len(covering) > 0 && !anyHeld(covering, lt, func(Lock) bool { return true }) {
		return lockedBy(covering[0])
	}
	if below == nil || anyHeld(covering, lt, func(l Lock) bool { return l.Deep }) {
		return nil
	}
	all, err := below()
	if err != nil {
		return err
	}
	for _, l := range all {
		if slices.ContainsFunc(covering, func(c Lock) bool { return c.Token == l.Token }) {
			continue
		}
		if !anyHeld(all, lt, func(o Lock) bool { return o.NodeID == l.NodeID }) {
			return lockedBy(l)
		}
	}
	return nil
}

// anyHeld reports whether lt holds one of the locks pred picks.
func anyHeld(locks []Lock, lt *LockTokens, pred func(Lock) bool) bool {
	for _, l := range locks {
		if pred(l) && lt.Holds(l) {
			return true
		}
	}
	return false
}

func lockedBy(l Lock) error {
	return fmt.Errorf("node %s: %w", l.NodeID, &LockedError{Root: l.Root, Token: l.Token})
}
