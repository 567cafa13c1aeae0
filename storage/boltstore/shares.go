package boltstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

// errSharesPending: the storage.Shares contract is written, this store's
// implementation is not yet.
var errSharesPending = fmt.Errorf("shares: %w", errors.ErrUnsupported)

// CreateShare is not implemented yet.
func (s *Store) CreateShare(ctx context.Context, sh storage.Share) (storage.Share, error) {
	return storage.Share{}, errSharesPending
}

// UpdateShare is not implemented yet.
func (s *Store) UpdateShare(ctx context.Context, id string, update storage.Share) (storage.Share, error) {
	return storage.Share{}, errSharesPending
}

// DeleteShare is not implemented yet.
func (s *Store) DeleteShare(ctx context.Context, id string) error { return errSharesPending }

// Share is not implemented yet.
func (s *Store) Share(ctx context.Context, id string) (storage.Share, error) {
	return storage.Share{}, errSharesPending
}

// LinkByToken is not implemented yet.
func (s *Store) LinkByToken(ctx context.Context, token string) (storage.Share, error) {
	return storage.Share{}, errSharesPending
}

// ItemShares is not implemented yet.
func (s *Store) ItemShares(ctx context.Context, spaceID, nodeID string) ([]storage.Share, error) {
	return nil, errSharesPending
}

// SharesBy is not implemented yet.
func (s *Store) SharesBy(ctx context.Context, creator string) ([]storage.Share, error) {
	return nil, errSharesPending
}

// SharesWith is not implemented yet.
func (s *Store) SharesWith(ctx context.Context, u storage.User) ([]storage.Share, error) {
	return nil, errSharesPending
}
