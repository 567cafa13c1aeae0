package caddymodule

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

// stores shares one open store per backend (a bolt data directory; a
// PostgreSQL database and bucket) between configurations: during a reload
// the new configuration is provisioned before the old one is cleaned up,
// bbolt's file lock allows only one opener, and a second PostgreSQL pool
// would only double the connections.
var stores = caddy.NewUsagePool()

// pooledStore lets the usage pool close the store when its last user is
// gone, and arbitrates the one personal quota of the store between the
// configurations that use it.
type pooledStore struct {
	Store

	mu     sync.Mutex
	quotas []*quotaClaim // in provisioning order; the newest applies
}

// quotaClaim is the personal quota a handler of one configuration asked for.
type quotaClaim struct {
	config context.Context
	bytes  int64
}

func (p *pooledStore) Destruct() error { return p.Close() }

// claimPersonalQuota applies the personal quota a handler of config asks
// for and returns the claim to release at cleanup. Handlers of one
// configuration must agree, since the store has one personal quota; a newer
// configuration (a reload) overrides an older one.
func (p *pooledStore) claimPersonalQuota(config context.Context, bytes int64) (*quotaClaim, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.quotas {
		if c.config == config && c.bytes != bytes {
			return nil, fmt.Errorf("personal quota of %d bytes differs from the %d bytes another davspaces handler on this store sets: the store has one personal quota, set the same in every handler", bytes, c.bytes)
		}
	}
	c := &quotaClaim{config: config, bytes: bytes}
	p.quotas = append(p.quotas, c)
	p.SetPersonalQuota(bytes)
	return c, nil
}

// releasePersonalQuota forgets a claim and applies the newest quota left,
// so that a reload failing after this module was provisioned leaves the
// running configuration's quota in force.
func (p *pooledStore) releasePersonalQuota(claim *quotaClaim) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.quotas = slices.DeleteFunc(p.quotas, func(c *quotaClaim) bool { return c == claim })
	if n := len(p.quotas); n > 0 {
		p.SetPersonalQuota(p.quotas[n-1].bytes)
	}
}

// openStore returns the backend's store, opening it on first use.
func openStore(ctx context.Context, backend StoreBackend, storageID string, logger *zap.Logger) (*pooledStore, error) {
	v, _, err := stores.LoadOrNew(backend.StoreKey(), func() (caddy.Destructor, error) {
		s, err := backend.OpenStore(ctx, storageID, logger)
		if err != nil {
			return nil, err
		}
		return &pooledStore{Store: s}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*pooledStore), nil
}
