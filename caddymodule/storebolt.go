package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage/boltstore"
)

func init() {
	caddy.RegisterModule(BoltStore{})
}

// BoltStore is the embedded store, the default: bbolt metadata and
// immutable content files in one data directory, which one Caddy process
// opens at a time.
type BoltStore struct {
	// Root is the data directory. Placeholders are replaced at
	// provisioning. Default: the "davspaces" folder in Caddy's data
	// directory.
	Root string `json:"root,omitempty"`
	// SweepInterval is how often expired trash items, versions, upload
	// sessions and chunked uploads are removed. Default: 1m.
	SweepInterval caddy.Duration `json:"sweep_interval,omitempty"`
	// DigestWorkers bounds how many files have the digests a PUT left for
	// after its commit computed at once (boltstore.Options.DigestWorkers);
	// 0 has every upload compute every digest while its bytes stream.
	// Default (unset): boltstore.DefaultDigestWorkers.
	DigestWorkers *int `json:"digest_workers,omitempty"`

	root string // absolute, placeholders replaced
}

// CaddyModule returns the Caddy module information.
func (BoltStore) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  storeNamespace + ".bolt",
		New: func() caddy.Module { return new(BoltStore) },
	}
}

// Provision resolves the data directory to an absolute path, so that two
// spellings of one directory share one open store.
func (b *BoltStore) Provision(caddy.Context) error {
	if b.SweepInterval < 0 {
		return errors.New("bolt store: sweep_interval must not be negative")
	}
	if b.DigestWorkers != nil && (*b.DigestWorkers < 0 || *b.DigestWorkers > maxDigestWorkers) {
		return fmt.Errorf("bolt store: digest_workers must be between 0 and %d", maxDigestWorkers)
	}
	root := caddy.NewReplacer().ReplaceAll(b.Root, "")
	if root == "" {
		root = filepath.Join(caddy.AppDataDir(), "davspaces")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("davspaces root %q: %w", b.Root, err)
	}
	b.root = abs
	return nil
}

// StoreKey is the data directory. It is a bare absolute path, which no
// other backend's key is.
func (b *BoltStore) StoreKey() string { return b.root }

// OpenStore opens the database in the data directory.
func (b *BoltStore) OpenStore(_ context.Context, storageID string, logger *zap.Logger) (Store, error) {
	s, err := boltstore.Open(b.root, boltstore.Options{StorageID: storageID, Logger: logger,
		SessionSweep: time.Duration(b.SweepInterval), DigestWorkers: b.digestWorkers()})
	if err != nil {
		return nil, fmt.Errorf("opening davspaces store in %s: %w", b.root, err)
	}
	return s, nil
}

// digestWorkers is the store's DigestWorkers: a 0 written in the config
// means none later, which the store spells NoLaterDigests.
func (b *BoltStore) digestWorkers() int {
	switch {
	case b.DigestWorkers == nil:
		return 0
	case *b.DigestWorkers == 0:
		return boltstore.NoLaterDigests
	}
	return *b.DigestWorkers
}

// UnmarshalCaddyfile reads the backend's block. Syntax:
//
//	store bolt {
//		root <directory>
//		sweep_interval <duration>
//		digest_workers <count>
//	}
func (b *BoltStore) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return parseDirective(d, "bolt store subdirective", options{
		"root":           set(&b.Root, oneArg),
		"sweep_interval": set(&b.SweepInterval, positiveDurationArg),
		"digest_workers": set(&b.DigestWorkers, digestWorkersArg),
	}, nil)
}

// digestWorkersArg reads a count of digest workers, 0 for none.
func digestWorkersArg(d *caddyfile.Dispenser) (*int, error) {
	name := d.Val()
	v, err := oneArg(d)
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxDigestWorkers {
		return nil, d.Errf("%s: %q is not a count from 0 to %d", name, v, maxDigestWorkers)
	}
	return &n, nil
}

// maxDigestWorkers bounds digest_workers: each worker takes a core while
// it hashes, so more than a large machine has is a typo.
const maxDigestWorkers = 1024

// Interface guards
var (
	_ StoreBackend          = (*BoltStore)(nil)
	_ caddy.Provisioner     = (*BoltStore)(nil)
	_ caddyfile.Unmarshaler = (*BoltStore)(nil)
)
