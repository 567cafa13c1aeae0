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
