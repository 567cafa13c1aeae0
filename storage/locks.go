package storage

import (
	"context"
	"errors"
	"time"
)

// ErrLocked: a lock conflicts with the one asked for.
var ErrLocked = errors.New("locked")

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
	Root  string
	Deep  bool // Depth: infinity
	Scope LockScope
	// Owner is the client's d:owner element content, verbatim XML.
	Owner string
	// User is the id of the user who took the lock: only they may submit
	// its token. UserName is their display name.
	User     string
	UserName string
	// Created is when the lock was taken; Timeout its duration from the last
	// refresh (0: no expiry) and Expires the moment it ends (zero: never).
	Created time.Time
	Timeout time.Duration
	Expires time.Time
}

// LockStore keeps the locks of a Store's spaces. Every method is safe for
// concurrent use; expired locks are never returned and never conflict.
type LockStore interface {
	// CreateLock adds l, atomically refusing with ErrLocked when it
	// conflicts with a live lock: an exclusive lock conflicts with any other
	// lock, a shared one with exclusive ones, where the two cover a common
	// node (the same node, a Deep lock of an ancestor, or when l.Deep a lock
	// of a descendant). ErrNotFound when the node does not exist. The store
	// sets Created and Expires from l.Timeout.
	CreateLock(ctx context.Context, l Lock) (Lock, error)
	// RefreshLock restarts the timeout of the lock with token. ErrNotFound
	// when no live lock of the space has it.
	RefreshLock(ctx context.Context, spaceID, token string, timeout time.Duration) (Lock, error)
	// RemoveLock deletes the lock with token. ErrNotFound when no live lock
	// of the space has it.
	RemoveLock(ctx context.Context, spaceID, token string) error
	// LocksOn returns the live locks that cover nodeID: its own, and the
	// Deep locks of its ancestors; with below, also the locks of every node
	// below it (what a DELETE or MOVE of a folder must honour).
	LocksOn(ctx context.Context, spaceID, nodeID string, below bool) ([]Lock, error)
	// SpaceLocks returns the live locks of a space. Spaces hold few locks;
	// a listing reads them once instead of asking per node.
	SpaceLocks(ctx context.Context, spaceID string) ([]Lock, error)
}
