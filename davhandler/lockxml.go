package davhandler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

// The locks PROPFIND and LOCK show: a listing's locks, read once, and
// what each d:activelock shows of a storage.Lock; their XML is davxml's.

// appendLockDiscovery appends the d:lockdiscovery value of a node covered
// by locks to dst, the response's own buffer: a listing writes each entry's
// locks as it goes, with no copy of its own (the caps of storage.LockLimits
// bound one entry's).
func appendLockDiscovery(dst []byte, locks []storage.Lock, now time.Time) []byte {
	for _, l := range locks {
		dst = davxml.AppendActiveLock(dst, activeLockOf(l), now)
	}
	return dst
}

// activeLockOf is what the d:activelock of l shows.
func activeLockOf(l storage.Lock) davxml.ActiveLock {
	return davxml.ActiveLock{
		Shared:    l.Scope == storage.LockShared,
		Deep:      l.Deep,
		Owner:     l.Owner,
		Token:     l.Token,
		Root:      l.Root,
		OwnerName: cmp.Or(l.UserName, l.User),
		Expires:   l.Expires,
	}
}

// lockIndex is what a PROPFIND needs to tell the locks of each node it
// lists: the locks of the space, read once, by the node they are rooted at.
// A listing carries the Deep locks of the folder it lists down to the
// children, so no node costs a lock store read of its own.
type lockIndex struct {
	byRoot map[string][]storage.Lock // nil when the space holds no lock
	now    time.Time
}

// loadLocks reads the locks of the space once and those covering the
// target of the PROPFIND.
func (pc *propContext) loadLocks(ls storage.LockStore, target *nodeView) error {
	all, err := ls.SpaceLocks(pc.ctx, pc.space.ID)
	if err != nil {
		return fmt.Errorf("reading the locks of space %s: %w", pc.space.ID, err)
	}
	pc.locks = &lockIndex{now: time.Now()}
	if len(all) == 0 {
		return nil
	}
	pc.locks.byRoot = make(map[string][]storage.Lock, len(all))
	for _, l := range all {
		pc.locks.byRoot[l.NodeID] = append(pc.locks.byRoot[l.NodeID], l)
	}
	target.locks, err = ls.LocksOn(pc.ctx, pc.space.ID, target.node.ID, false)
	if err != nil {
		return fmt.Errorf("reading the locks of node %s: %w", target.node.ID, err)
	}
	return nil
}

// covering returns the locks covering a child whose parent passes down the
// Deep locks inherited, ordered by token as the LockStore orders them, so
// that a node shows its locks alike whichever folder is listed.
func (idx *lockIndex) covering(inherited []storage.Lock, nodeID string) []storage.Lock {
	if idx == nil {
		return nil
	}
	own := idx.byRoot[nodeID]
	switch {
	case len(own) == 0:
		return inherited
	case len(inherited) == 0:
		return own
	}
	all := append(slices.Clip(inherited), own...)
	slices.SortFunc(all, func(a, b storage.Lock) int { return strings.Compare(a.Token, b.Token) })
	return all
}

// deepLocks returns the locks that also cover what is below their node.
func deepLocks(locks []storage.Lock) []storage.Lock {
	var deep []storage.Lock
	for _, l := range locks {
		if l.Deep {
			deep = append(deep, l)
		}
	}
	return deep
}
