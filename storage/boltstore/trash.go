package boltstore

import (
	"context"
	"errors"

	"github.com/davspaces/davspaces/storage"
)

// errUndoPending: the trash and versions are being built (issue 19).
var errUndoPending = errors.New("trash and versions: not implemented yet")

// TrashItems is not implemented yet.
func (s *Store) TrashItems(ctx context.Context, spaceID string) ([]storage.TrashItem, error) {
	return nil, errUndoPending
}

// TrashNode is not implemented yet.
func (s *Store) TrashNode(ctx context.Context, spaceID, key string, names []string) (storage.TrashItem, storage.Node, error) {
	return storage.TrashItem{}, storage.Node{}, errUndoPending
}

// ReadTrashDir is not implemented yet.
func (s *Store) ReadTrashDir(ctx context.Context, spaceID, key, folderID, after string, limit int) ([]storage.Node, error) {
	return nil, errUndoPending
}

// RestoreTrash is not implemented yet.
func (s *Store) RestoreTrash(ctx context.Context, spaceID, key string, t storage.Transfer) (storage.Node, bool, error) {
	return storage.Node{}, false, errUndoPending
}

// PurgeTrash is not implemented yet.
func (s *Store) PurgeTrash(ctx context.Context, spaceID, key string) error { return errUndoPending }

// EmptyTrash is not implemented yet.
func (s *Store) EmptyTrash(ctx context.Context, spaceID string) error { return errUndoPending }

// SetRetention is not implemented yet.
func (s *Store) SetRetention(p storage.RetentionPolicy) {}

// ExpireUndo is not implemented yet.
func (s *Store) ExpireUndo(ctx context.Context) (int, error) { return 0, errUndoPending }
