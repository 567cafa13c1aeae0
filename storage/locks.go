package storage

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrLocked: a lock conflicts with the one asked for, or a change's
// Conditions.Locks do not hold a lock covering what it changes.
var ErrLocked = errors.New("locked")

// LockedError is the ErrLocked of a change whose Conditions.Locks do not
// hold a lock covering what it changes. It names that lock so that the
// protocol layer can tell the client which lock root to submit a token for.
type LockedError struct {
	// Root is the blocking lock's root, as its client named it.
	Root  string
	Token string
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("the lock on %s is not held: %v", e.Root, ErrLocked)
}

// Is makes a LockedError an ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// LockScope tells exclusive from shared write locks (RFC 4918 §6.1).
type LockScope uint8

// The lock scopes.
const (
	LockExclusive LockScope = iota + 1
	LockShared
)

// Lock is a WebDAV write lock on a node and, when Deep, on everything below
// it, including what is created there later. Locks belong to nodes, not to
// paths: a node that is moved or removed loses its locks and those below it.
type Lock struct {
	// Token is the lock token, an absolute URI ("urn:uuid:…").
	Token   string
	SpaceID string
	// NodeID is the lock root.
	NodeID string
	// Root is the path the client locked, as it named it (for d:lockroot).
	// It does not go stale: a MOVE of the node or of an ancestor drops the
	// lock.
	Root  string
	Deep  bool // Depth: infinity
	Scope LockScope
	// Owner is the client's d:owner element content, verbatim XML.
	Owner string
	// User is the id of the user who took the lock: only they may submit
	// its token. UserName is their display name.
	User     string
	UserName string
	// Groups are the groups User belonged to when taking the lock: a role in
	// the space can come through a group, and the store, which sees no
	// request, judges by these whether User is still a member (LockCounts).
	Groups []string
	// Created is when the lock was taken; Timeout its duration from the last
	// refresh (0: no expiry) and Expires the moment it ends (zero: never).
	Created time.Time
	Timeout time.Duration
	Expires time.Time
}

// LockExpiry is when a lock taken or refreshed at now with timeout ends:
// the zero time for no timeout, which never ends.
func LockExpiry(now time.Time, timeout time.Duration) time.Time {
	if timeout == 0 {
		return time.Time{}
	}
	return now.Add(timeout)
}

// LockStore keeps the locks of a Store's spaces. Every method is safe for
// concurrent use; expired locks, and locks that no longer count in their
// space (LockCounts), are never returned and never conflict; a store may
// drop them.
// Expiry follows the store's clock. Locks belong to nodes: the Store's
// Remove drops the locks of the removed subtree, Move those of the moved
// subtree (RFC 4918 §7.6: a lock does not move with its resource) and of a
// replaced target, Copy takes no locks along and drops those of a replaced
// target, and new content committed to a file keeps its locks. A Deep lock
// covers what is later created or moved below its node, since coverage
// follows a node's current ancestors. Results are ordered by token.
type LockStore interface {
	// CreateLock adds l, atomically refusing with ErrLocked when it
	// conflicts with a live lock: an exclusive lock conflicts with any other
	// lock, a shared one with exclusive ones, where the two cover a common
	// node (the same node, a Deep lock of an ancestor, or when l.Deep a lock
	// of a descendant). Then lim applies (CheckLockLimits): an owner too
	// long is ErrInvalid, a node covered by too many locks ErrTooManyLocks
	// (an ErrLocked), a user whose locks would cost or count too much
	// ErrLockQuota (an ErrLocked). ErrNotFound when the node does not exist in
	// the space, ErrInvalid for an unknown scope or a negative timeout. The store
	// sets Created and Expires from l.Timeout (0: no expiry). An empty Token
	// gets a fresh "urn:uuid:<random uuid>"; a token a live lock anywhere in
	// the store already holds is ErrExists (not ErrLocked: nothing about the
	// node is locked, the name is taken).
	CreateLock(ctx context.Context, l Lock, lim LockLimits) (Lock, error)
	// RefreshLock restarts the timeout of the lock with token: Timeout
	// becomes timeout (0: no expiry) and Expires is counted from now;
	// Created stays. ErrNotFound when no live lock of the space has it
	// (unknown, expired, or of another space). It does not check the user:
	// that is the caller's.
	RefreshLock(ctx context.Context, spaceID, token string, timeout time.Duration) (Lock, error)
	// RemoveLock deletes the lock with token. ErrNotFound when no live lock
	// of the space has it.
	RemoveLock(ctx context.Context, spaceID, token string) error
	// LocksOn returns the live locks that cover nodeID: its own, and the
	// Deep locks of its ancestors; with below, also the locks of every node
	// below it (what a DELETE or MOVE of a folder must honour).
	// ErrNotFound when the node does not exist in the space.
	LocksOn(ctx context.Context, spaceID, nodeID string, below bool) ([]Lock, error)
	// SpaceLocks returns the live locks of a space. Spaces hold few locks
	// (at most LockLimits.MaxBytesPerUser of them for each member); a listing reads them
	// once instead of asking per node. A space without
	// locks costs next to nothing; an unknown space has none (no error).
	SpaceLocks(ctx context.Context, spaceID string) ([]Lock, error)
}
