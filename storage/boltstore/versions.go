package boltstore

import (
	"context"

	"github.com/davspaces/davspaces/storage"
)

// FileVersions is not implemented yet.
func (s *Store) FileVersions(ctx context.Context, spaceID, fileID string) ([]storage.Version, error) {
	return nil, errUndoPending
}

// OpenVersion is not implemented yet.
func (s *Store) OpenVersion(ctx context.Context, spaceID, fileID, key string) (storage.Version, storage.Content, error) {
	return storage.Version{}, nil, errUndoPending
}

// RestoreVersion is not implemented yet.
func (s *Store) RestoreVersion(ctx context.Context, spaceID, fileID, key string, c storage.Conditions) (storage.Node, error) {
	return storage.Node{}, errUndoPending
}
