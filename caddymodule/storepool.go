package caddymodule

import (
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage/boltstore"
)

// stores shares one open store per data directory between configurations:
// during a reload the new configuration is provisioned before the old one is
// cleaned up, and the database's file lock allows only one opener.
var stores = caddy.NewUsagePool()

// pooledStore lets the usage pool close the store when its last user is gone.
type pooledStore struct{ *boltstore.Store }

func (p pooledStore) Destruct() error { return p.Close() }

// openStore returns the store of root, opening it on first use.
func openStore(root, storageID string, logger *zap.Logger) (*boltstore.Store, error) {
	v, _, err := stores.LoadOrNew(root, func() (caddy.Destructor, error) {
		s, err := boltstore.Open(root, boltstore.Options{StorageID: storageID, Logger: logger})
		if err != nil {
			return nil, err
		}
		return pooledStore{s}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("opening davspaces store in %s: %w", root, err)
	}
	return v.(pooledStore).Store, nil
}
