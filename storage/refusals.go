package storage

import (
	"fmt"
	"time"
)

// The errors below name what a store looked up and did not find, or what
// it found in the way, so that every store words a refusal alike. Each
// wraps one of the sentinel errors of storage.go, which decides its status.

// SpaceNotFound: no space id (ErrNotFound).
func SpaceNotFound(id string) error { return fmt.Errorf("space %s: %w", id, ErrNotFound) }

// NodeNotFound: no node id in space spaceID (ErrNotFound).
func NodeNotFound(spaceID, id string) error {
	return fmt.Errorf("node %s in space %s: %w", id, spaceID, ErrNotFound)
}

// ChildNotFound: folder parentID has no child name (ErrNotFound).
func ChildNotFound(parentID, name string) error {
	return fmt.Errorf("child %q of %s: %w", name, parentID, ErrNotFound)
}

// CheckParent applies the rule for the folder id a change puts a node
// into, which the store has looked up (parent, when exists): a missing
// parent or a file is ErrConflict (RFC 4918 §9.7.1), a node of another
// space than spaceID is otherSpace, which the caller chooses.
func CheckParent(spaceID, id string, parent Node, exists bool, otherSpace error) error {
	switch {
	case !exists:
		return fmt.Errorf("parent %s does not exist: %w", id, ErrConflict)
	case parent.SpaceID != spaceID:
		return fmt.Errorf("parent %s is in another space: %w", id, otherSpace)
	case !parent.IsFolder():
		return fmt.Errorf("parent %s is not a folder: %w", id, ErrConflict)
	}
	return nil
}

// NotAFolder: a listing of a file (ErrInvalid).
func NotAFolder(id string) error {
	return fmt.Errorf("read dir %s: not a folder: %w", id, ErrInvalid)
}

// IsAFolder: an open of a folder's content (ErrInvalid).
func IsAFolder(id string) error {
	return fmt.Errorf("open %s: is a folder: %w", id, ErrInvalid)
}

// SessionNotFound: no live upload session id (ErrNotFound).
func SessionNotFound(id string) error { return fmt.Errorf("session %.64q: %w", id, ErrNotFound) }

// OffsetMismatch: an upload's bytes were sent from offset, but the session
// has received at bytes (ErrConflict).
func OffsetMismatch(offset, at int64) error {
	return fmt.Errorf("offset %d, session is at %d: %w", offset, at, ErrConflict)
}

// UploadIncomplete: a session was finished after received of its length
// bytes (ErrConflict).
func UploadIncomplete(received, length int64) error {
	return fmt.Errorf("%d of %d bytes received: %w", received, length, ErrConflict)
}

// PartTooLong: a request sent more than the left bytes its upload lacks
// (ErrInvalid).
func PartTooLong(left int64) error {
	return fmt.Errorf("part longer than the %d bytes left: %w", left, ErrInvalid)
}

// ValidLengths checks the announced length of an upload and the size of
// the file it replaces, which are never negative (ErrInvalid).
func ValidLengths(length, replaces int64) error {
	if length < 0 || replaces < 0 {
		return fmt.Errorf("negative length %d or %d replaced: %w", length, replaces, ErrInvalid)
	}
	return nil
}

// LockNotFound: no live lock token in space spaceID (ErrNotFound).
func LockNotFound(spaceID, token string) error {
	return fmt.Errorf("no lock %q in space %s: %w", token, spaceID, ErrNotFound)
}

// LockTokenTaken: a new lock's token is in use (ErrExists).
func LockTokenTaken(token string) error { return fmt.Errorf("lock token %q: %w", token, ErrExists) }

// LockConflict: a lock asked for conflicts with the lock on root
// (ErrLocked).
func LockConflict(root string) error {
	return fmt.Errorf("conflicts with lock on %s: %w", root, ErrLocked)
}

// ValidLockTimeout checks the timeout of a lock refresh (ErrInvalid).
func ValidLockTimeout(timeout time.Duration) error {
	if timeout < 0 {
		return fmt.Errorf("refresh lock: negative timeout %v: %w", timeout, ErrInvalid)
	}
	return nil
}
