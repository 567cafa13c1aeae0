package caddymodule

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/apppass"
	"github.com/davspaces/davspaces/passwordguard"
	"github.com/davspaces/davspaces/storage"
)

// stores shares one open store per backend (a bolt data directory; a
// PostgreSQL database and bucket) between configurations: during a reload
// the new configuration is provisioned before the old one is cleaned up,
// bbolt's file lock allows only one opener, and a second PostgreSQL pool
// would only double the connections.
var stores = caddy.NewUsagePool()

// pooledStore lets the usage pool close the store when its last user is
// gone, and arbitrates the settings that belong to the whole store (its
// personal quota, the retention of its spaces) between the handlers and
// configurations that use it.
type pooledStore struct {
	Store
	// metrics are what the store's traffic and sweeps did since it was
	// opened, whichever configuration served it.
	metrics *storeMetrics
	// passwords checks passwords (of links; of users' app passwords)
	// under the budgets the store keeps, in compare slots that every
	// handler and configuration on the store shares: one bound for the
	// node, across reloads.
	passwords *passwordguard.Guard
	// appPasswords checks users' app passwords at sign-in, remembering
	// those verified: one cache per store, which a revocation through
	// any handler of the store empties of the password.
	appPasswords *apppass.Verifier

	mu     sync.Mutex
	claims []*storeClaim // in provisioning order; the newest configuration's apply
}

// storeClaim is what a handler of one configuration asks of its store.
type storeClaim struct {
	config        context.Context
	personalQuota int64
	maxNodes      int64
	retention     storage.RetentionPolicy
	// adminOverTCP lets the admin endpoints hand out the store's database
	// and checks on a TCP admin listener (adminStore).
	adminOverTCP bool
	// granted is the retention the store keeps for the handler's spaces
	// (its default for the personal spaces), once the claim is merged with
	// those of the handlers before it: what the handler may advertise.
	granted storage.RetentionPolicy
}

func (p *pooledStore) Destruct() error { return p.Close() }

// claimSettings applies the settings a handler asks for and returns the
// claim to release at cleanup. Handlers of one configuration must agree on
// the personal quota, since the store has one. They may differ in
// retention: the store keeps the merge (mergeRetention), and ignored says
// what of this handler's was not taken, for a warning. A newer
// configuration (a reload) overrides an older one.
func (p *pooledStore) claimSettings(c storeClaim) (claim *storeClaim, ignored []string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var earlier storage.RetentionPolicy
	for _, old := range p.claims {
		if old.config != c.config {
			continue
		}
		if old.personalQuota != c.personalQuota {
			return nil, nil, fmt.Errorf("personal quota of %d bytes differs from the %d bytes another davspaces handler on this store sets: the store has one personal quota, set the same in every handler", c.personalQuota, old.personalQuota)
		}
		if old.maxNodes != c.maxNodes {
			return nil, nil, fmt.Errorf("max_nodes %d differs from the %d another davspaces handler on this store sets: the store has one, set the same in every handler", c.maxNodes, old.maxNodes)
		}
		mergeRetention(&earlier, old.retention)
	}
	ignored = mergeRetention(&earlier, c.retention)
	c.granted = grantedRetention(earlier, c.retention)
	claim = &c
	p.claims = append(p.claims, claim)
	p.applyLocked()
	return claim, ignored, nil
}

// releaseSettings forgets a claim and applies the newest configuration's
// claims left, so that a reload failing after this module was provisioned
// leaves the running configuration's settings in force.
func (p *pooledStore) releaseSettings(claim *storeClaim) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claims = slices.DeleteFunc(p.claims, func(c *storeClaim) bool { return c == claim })
	p.applyLocked()
}

// applyLocked gives the store the settings in force, if any claim is left.
func (p *pooledStore) applyLocked() {
	if newest, retention, ok := p.inForceLocked(); ok {
		p.SetPersonalQuota(newest.personalQuota)
		p.SetMaxNodes(newest.maxNodes)
		p.SetRetention(retention)
	}
}

// inForceLocked returns the settings of the newest configuration's
// claims: the newest claim, whose personal quota and node cap they agree
// on, and their retentions merged. ok is false when no claim is left.
func (p *pooledStore) inForceLocked() (newest *storeClaim, retention storage.RetentionPolicy, ok bool) {
	n := len(p.claims)
	if n == 0 {
		return nil, retention, false
	}
	newest = p.claims[n-1]
	for _, c := range p.claims {
		if c.config == newest.config {
			mergeRetention(&retention, c.retention)
		}
	}
	return newest, retention, true
}

// adminOverTCP reports whether a handler of the newest configuration
// lets the admin endpoints serve the store on a TCP admin listener.
func (p *pooledStore) adminOverTCP() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.claims)
	if n == 0 {
		return false
	}
	newest := p.claims[n-1].config
	return slices.ContainsFunc(p.claims, func(c *storeClaim) bool { return c.config == newest && c.adminOverTCP })
}

// openStore returns the backend's store, opening it on first use.
func openStore(ctx context.Context, backend StoreBackend, storageID string, logger *zap.Logger) (*pooledStore, error) {
	v, _, err := stores.LoadOrNew(backend.StoreKey(), func() (caddy.Destructor, error) {
		s, err := backend.OpenStore(ctx, storageID, logger)
		if err != nil {
			return nil, err
		}
		m := newStoreMetrics(backend.StoreKey())
		if o, ok := s.(storage.SweepObservable); ok {
			o.ObserveSweeps(m.observeSweep)
		}
		passwords, err := passwordguard.New(passwordguard.Options{Budgets: observe(s, m)})
		if err != nil {
			s.Close()
			return nil, err
		}
		appPasswords, err := apppass.NewVerifier(apppass.VerifierConfig{Store: observe(s, m), Guard: passwords})
		if err != nil {
			s.Close()
			return nil, err
		}
		return &pooledStore{Store: s, metrics: m, passwords: passwords, appPasswords: appPasswords}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*pooledStore), nil
}
