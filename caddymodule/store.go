package caddymodule

import (
	"context"
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// storeNamespace is the Caddy module namespace of the store backends:
// davspaces.stores.bolt, davspaces.stores.postgres.
const storeNamespace = "davspaces.stores"

// Store is an open store: a storage.Backend that the store pool closes
// when no configuration uses it any more. Only this interface leaves
// caddymodule, so no backend's types reach davhandler.
type Store interface {
	storage.Backend
	Close() error
}

// StoreBackend is a davspaces.stores guest module: it names a store's data
// and opens it. Provisioning the module resolves its placeholders and
// defaults, so that StoreKey is final.
type StoreBackend interface {
	// StoreKey identifies the data the store holds: handlers whose
	// backends have the same key share one open store, across reloads.
	// It names no secret, since errors quote it.
	StoreKey() string
	// OpenStore opens the store; storageID is the configured storage id
	// ("" lets the store keep or generate its own). ctx bounds the opening
	// only: the store outlives the configuration that opened it.
	OpenStore(ctx context.Context, storageID string, logger *zap.Logger) (Store, error)
}

// loadStoreBackend returns the configured backend: the store module when
// one is set, else the embedded store on Root, as before backends could be
// chosen.
func (dav *DAVSpaces) loadStoreBackend(ctx caddy.Context) (StoreBackend, error) {
	if dav.StoreRaw == nil {
		bolt := &BoltStore{Root: dav.Root}
		if err := bolt.Provision(ctx); err != nil {
			return nil, err
		}
		return bolt, nil
	}
	mod, err := ctx.LoadModule(dav, "StoreRaw")
	if err != nil {
		return nil, fmt.Errorf("loading the davspaces store: %w", err)
	}
	backend, ok := mod.(StoreBackend)
	if !ok {
		return nil, fmt.Errorf("module %T in %s is not a davspaces store backend", mod, storeNamespace)
	}
	return backend, nil
}

// parseStore reads `store <backend> { … }` into the handler's module map.
func (dav *DAVSpaces) parseStore(d *caddyfile.Dispenser) error {
	if dav.StoreRaw != nil {
		return d.Err("store is set twice")
	}
	var backend string
	if !d.Args(&backend) {
		return d.ArgErr()
	}
	id := storeNamespace + "." + backend
	if _, err := caddy.GetModule(id); err != nil {
		return d.Errf("unknown store backend %q (known: %s)", backend, knownBackends())
	}
	unm, err := caddyfile.UnmarshalModule(d, id)
	if err != nil {
		return err
	}
	dav.StoreRaw = caddyconfig.JSONModuleObject(unm, "backend", backend, nil)
	return nil
}

// knownBackends lists the registered store backends' names, for errors.
func knownBackends() string {
	var names []string
	for _, m := range caddy.GetModules(storeNamespace) {
		names = append(names, m.ID.Name())
	}
	return strings.Join(names, ", ")
}
