package storage

import (
	"fmt"
	"strings"
)

// MaxLockTokenBytes bounds a caller-chosen lock token, which stores use as
// a key.
const MaxLockTokenBytes = 1024

// ValidLockRequest checks what every store refuses, with ErrInvalid, in a
// lock a caller gives CreateLock: an empty node id, an unknown scope, a
// negative timeout, a token longer than MaxLockTokenBytes or holding a NUL.
// The space id and what a store cannot hold beyond that are the store's to
// check.
func ValidLockRequest(l Lock) error {
	if l.NodeID == "" {
		return fmt.Errorf("empty node id: %w", ErrInvalid)
	}
	if l.Scope != LockExclusive && l.Scope != LockShared {
		return fmt.Errorf("lock scope %d: %w", l.Scope, ErrInvalid)
	}
	if l.Timeout < 0 {
		return fmt.Errorf("negative lock timeout %v: %w", l.Timeout, ErrInvalid)
	}
	if len(l.Token) > MaxLockTokenBytes || strings.ContainsRune(l.Token, 0) {
		return fmt.Errorf("lock token: %w", ErrInvalid)
	}
	return nil
}

// LockLimits bound what locks can make a store keep and a listing show:
// every lock is at most MaxOwnerBytes of owner, the locks one user holds
// in a space cost at most MaxBytesPerUser (LockBytes) and, when set, count
// at most MaxPerUser, and no node is covered by more than MaxCovering, so
// the d:lockdiscovery of one resource is at most MaxCovering ×
// (MaxOwnerBytes + a few hundred bytes). A zero field caps nothing.
type LockLimits struct {
	// MaxOwnerBytes caps Lock.Owner; a longer one is ErrInvalid.
	MaxOwnerBytes int
	// MaxCovering caps the locks covering any one node (its own and the
	// Deep locks of its ancestors); a lock that would make a node covered
	// by more is ErrTooManyLocks.
	MaxCovering int
	// MaxBytesPerUser caps what the locks one user holds in one space cost
	// the store, as LockBytes counts it; a lock that would make them cost
	// more is ErrLockBytesQuota (an ErrLockQuota). It bounds the store as a count would, without
	// refusing a client that locks many small files at once (davfs2 locks
	// each new file until its delayed upload).
	MaxBytesPerUser int64
	// MaxPerUser caps the number of locks one user holds in one space; one
	// more is ErrLockQuota.
	MaxPerUser int
}

// LockOverheadBytes is what a lock costs a store beyond its text: the
// fixed-size fields, the keys and index entries, and the free room of a
// half-filled page, taken from the record sizes both stores measure
// (TestLockRecordBytes in storage/boltstore and storage/pgstore).
const LockOverheadBytes = 512

// LockBytes is what l costs its store: its text as kept (token, node, root,
// owner, user, user name, groups) and LockOverheadBytes.
func LockBytes(l Lock) int64 {
	n := len(l.Token) + len(l.NodeID) + len(l.Root) + len(l.Owner) + len(l.User) + len(l.UserName)
	for _, g := range l.Groups {
		n += len(g)
	}
	return int64(n) + LockOverheadBytes
}

var (
	// ErrTooManyLocks: a lock would make a node covered by more than
	// LockLimits.MaxCovering locks. It is an ErrLocked: to the client the
	// resource is as locked as when a lock conflicts.
	ErrTooManyLocks = fmt.Errorf("%w: too many locks cover the resource", ErrLocked)
	// ErrLockQuota: the locks the user holds in the space are at
	// LockLimits.MaxBytesPerUser or MaxPerUser. It is an ErrLocked, not an
	// ErrInsufficientStorage: nothing is full that a client could free by
	// deleting files, and a client reads 507 as a full disk (davfs2 stops
	// a copy with "No space left on device"); it is free again as soon as
	// the user's locks end.
	ErrLockQuota = fmt.Errorf("%w: the user holds the most locks allowed in the space", ErrLocked)
	// ErrLockBytesQuota is the ErrLockQuota of LockLimits.MaxBytesPerUser.
	ErrLockBytesQuota = fmt.Errorf("%w: the user's locks cost the most allowed", ErrLockQuota)
)

// LockCounts reports whether l still counts in sp: its user is at least an
// editor there, by the user's own role or the groups recorded with the lock,
// as the space's members stand now. A user taken out of the space (or made
// a viewer) leaves locks that block nothing, show nowhere and may be
// dropped: otherwise a former editor's lock would keep the resource
// read-only until it expires. A lock without a user (a store's internal
// use) always counts.
func LockCounts(sp Space, l Lock) bool {
	if l.User == "" {
		return true
	}
	return sp.RoleOf(User{ID: l.User, Groups: l.Groups}) >= RoleEditor
}

// CountingLocks splits the live locks of sp into those that count
// (LockCounts) and those that do not, keeping their order.
func CountingLocks(sp Space, locks []Lock) (counting, stale []Lock) {
	for _, l := range locks {
		if LockCounts(sp, l) {
			counting = append(counting, l)
		} else {
			stale = append(stale, l)
		}
	}
	return counting, stale
}

// LockPlaces is where the locks of a space sit relative to the node of a
// new lock, as CheckLockLimits needs it.
type LockPlaces struct {
	// Above holds the new lock's node and its ancestors.
	Above map[string]bool
	// Inside maps each node strictly below the new lock's node that holds
	// a lock to its path up to that node: itself first, then its
	// ancestors, the new lock's node excluded. Only a Deep lock needs it.
	Inside map[string][]string
}

// NeedsInside reports whether CheckLockLimits needs places.Inside for l:
// only a Deep lock covers other nodes' locks, and only a cap on covering
// locks looks at them.
func (lim LockLimits) NeedsInside(l Lock) bool { return l.Deep && lim.MaxCovering > 0 }

// CheckLockLimits applies lim to l, a new lock that conflicts with none of
// locks, the counting live locks of its space. The store calls it in the
// transaction that adds l, so that concurrent requests cannot pass a cap
// together.
func CheckLockLimits(l Lock, locks []Lock, lim LockLimits, places LockPlaces) error {
	if lim.MaxOwnerBytes > 0 && len(l.Owner) > lim.MaxOwnerBytes {
		return fmt.Errorf("lock owner of %d bytes, more than %d: %w", len(l.Owner), lim.MaxOwnerBytes, ErrInvalid)
	}
	if err := checkUserLocks(l, locks, lim); err != nil {
		return err
	}
	if lim.MaxCovering > 0 && mostCovering(l, locks, places)+1 > lim.MaxCovering {
		return fmt.Errorf("more than %d locks would cover a node: %w", lim.MaxCovering, ErrTooManyLocks)
	}
	return nil
}

// checkUserLocks fails with ErrLockQuota when l would make its user's
// locks in the space more or costlier than lim allows. A lock without a
// user (a store's internal use) is not capped.
func checkUserLocks(l Lock, locks []Lock, lim LockLimits) error {
	if l.User == "" || (lim.MaxPerUser <= 0 && lim.MaxBytesPerUser <= 0) {
		return nil
	}
	count, cost := 0, int64(0)
	for _, o := range locks {
		if o.User == l.User {
			count++
			cost += LockBytes(o)
		}
	}
	if lim.MaxPerUser > 0 && count >= lim.MaxPerUser {
		return fmt.Errorf("user %s holds %d locks: %w", l.User, lim.MaxPerUser, ErrLockQuota)
	}
	if lim.MaxBytesPerUser > 0 && cost+LockBytes(l) > lim.MaxBytesPerUser {
		return fmt.Errorf("user %s holds %d locks of %d bytes, and %d more exceed %d: %w",
			l.User, count, cost, LockBytes(l), lim.MaxBytesPerUser, ErrLockBytesQuota)
	}
	return nil
}

// mostCovering is the largest number of locks covering one node that l
// will cover. A node below l's without a lock of its own is covered by no
// more than its nearest ancestor that has one (or l's node), so l's node
// and the locked nodes inside are the only ones to count.
func mostCovering(l Lock, locks []Lock, places LockPlaces) int {
	own := map[string]int{}  // node → locks rooted there
	deep := map[string]int{} // node → Deep locks rooted there
	atTop, deepAbove := 0, 0 // locks covering l's node; Deep ones of it and above
	for _, o := range locks {
		own[o.NodeID]++
		if o.Deep {
			deep[o.NodeID]++
		}
		switch {
		case o.Deep && places.Above[o.NodeID]:
			atTop++
			deepAbove++
		case o.NodeID == l.NodeID:
			atTop++
		}
	}
	most := atTop
	if !l.Deep {
		return most
	}
	for _, path := range places.Inside {
		n := deepAbove + own[path[0]]
		for _, id := range path[1:] {
			n += deep[id]
		}
		most = max(most, n)
	}
	return most
}
