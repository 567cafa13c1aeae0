package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

// errDirectoryPending: the storage.Directory contract is written, this
// store's implementation is not yet.
var errDirectoryPending = fmt.Errorf("directory: %w", errors.ErrUnsupported)

// RememberUser is not implemented yet.
func (s *Store) RememberUser(ctx context.Context, e storage.DirectoryEntry) error {
	return errDirectoryPending
}

// DirectoryUser is not implemented yet.
func (s *Store) DirectoryUser(ctx context.Context, id string) (storage.DirectoryEntry, error) {
	return storage.DirectoryEntry{}, errDirectoryPending
}

// SearchUsers is not implemented yet.
func (s *Store) SearchUsers(ctx context.Context, query string, limit int) ([]storage.DirectoryEntry, error) {
	return nil, errDirectoryPending
}

// SearchGroups is not implemented yet.
func (s *Store) SearchGroups(ctx context.Context, query string, limit int) ([]string, error) {
	return nil, errDirectoryPending
}
