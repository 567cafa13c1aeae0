package apppass

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/davspaces/davspaces/passwordguard"
	"github.com/davspaces/davspaces/storage"
)

// Defaults of VerifierConfig.
const (
	// DefaultRecheck is how long a verified password is taken on this
	// node without reading its record again: how late a revocation on
	// another node takes effect here.
	DefaultRecheck = time.Second
	// DefaultCacheSize bounds the verified passwords a node remembers.
	DefaultCacheSize = 10_000
)

// The budgets of wrong app passwords: per client address, and per user
// (the attempts of every address together), so that neither one client
// nor many guess more than these.
var (
	AddressBudget = storage.AttemptBudget{Limit: 10, Window: 5 * time.Minute}
	UserBudget    = storage.AttemptBudget{Limit: 50, Window: 5 * time.Minute}
)

// ErrWrongPassword is a password that is not one of the user's valid app
// passwords.
var ErrWrongPassword = errors.New("not a valid app password of the user")

// VerifierConfig configures a Verifier.
type VerifierConfig struct {
	// Store keeps the passwords; Guard runs the compares. Required.
	Store storage.AppPasswords
	Guard *passwordguard.Guard
	// Recheck and CacheSize: 0 means DefaultRecheck and DefaultCacheSize.
	Recheck   time.Duration
	CacheSize int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Verifier checks app passwords at sign-in. A password once verified is
// remembered, under a hash of the user and password (never the password),
// so that a client's every request costs no bcrypt compare: it is taken
// as long as its record is unchanged, which is read again at most once
// per Recheck. Forget drops it at once on a revocation here.
type Verifier struct {
	cfg VerifierConfig

	mu       sync.Mutex
	verified map[[sha256.Size]byte]*verifiedPassword
}

// verifiedPassword is a password found right, as its record was then.
type verifiedPassword struct {
	record  storage.AppPassword
	checked time.Time
}

// NewVerifier returns the Verifier of cfg.
func NewVerifier(cfg VerifierConfig) (*Verifier, error) {
	if cfg.Store == nil || cfg.Guard == nil {
		return nil, errors.New("apppass: a store and a password guard are required")
	}
	if cfg.Recheck <= 0 {
		cfg.Recheck = DefaultRecheck
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Verifier{cfg: cfg, verified: map[[sha256.Size]byte]*verifiedPassword{}}, nil
}

// LooksLike reports whether password has an app password's form: one
// that does not is no app password, and is left to other checks.
func LooksLike(password string) bool {
	_, _, ok := storage.SplitAppPassword(password)
	return ok
}

// Check verifies that password is a valid app password of user, asked
// from the client address client, and returns its record. A wrong one
// is ErrWrongPassword; one not compared because a budget is spent is a
// *passwordguard.Refusal.
func (v *Verifier) Check(ctx context.Context, user, password, client string) (storage.AppPassword, error) {
	id, secret, ok := storage.SplitAppPassword(password)
	if !ok {
		return storage.AppPassword{}, ErrWrongPassword
	}
	key := cacheKey(user, password)
	now := v.cfg.Now()
	if p, ok, err := v.remembered(ctx, key, now); ok || err != nil {
		return p, err
	}
	budgets := []passwordguard.Budget{
		{Key: "app-password address " + passwordguard.AddressPrefix(client), Budget: AddressBudget},
		{Key: "app-password user " + user, Budget: UserBudget},
	}
	// The record is read once the attempts are taken: a client without
	// attempts left costs the store nothing more.
	var (
		p         storage.AppPassword
		lookupErr error
	)
	right, err := v.cfg.Guard.CheckAll(ctx, budgets, func() bool {
		p, lookupErr = v.cfg.Store.AppPassword(ctx, id)
		return lookupErr == nil && p.User == user && !p.Expired(now) && storage.CheckAppPassword(p, secret)
	})
	switch {
	case err != nil:
		return storage.AppPassword{}, err
	case lookupErr != nil && !errors.Is(lookupErr, storage.ErrNotFound):
		return storage.AppPassword{}, fmt.Errorf("reading an app password: %w", lookupErr)
	case !right:
		return storage.AppPassword{}, ErrWrongPassword
	}
	v.remember(key, p, now)
	v.touch(ctx, p, now)
	return p, nil
}

// remembered returns the record of a password verified before, read
// again when Recheck has passed since: a password revoked, expired or
// changed since is forgotten and checked anew.
func (v *Verifier) remembered(ctx context.Context, key [sha256.Size]byte, now time.Time) (storage.AppPassword, bool, error) {
	v.mu.Lock()
	e, ok := v.verified[key]
	var p storage.AppPassword
	fresh := false
	if ok {
		p, fresh = e.record, now.Sub(e.checked) < v.cfg.Recheck
	}
	v.mu.Unlock()
	switch {
	case !ok:
		return storage.AppPassword{}, false, nil
	case fresh && !p.Expired(now):
		return p, true, nil
	}
	current, err := v.cfg.Store.AppPassword(ctx, p.ID)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return storage.AppPassword{}, false, fmt.Errorf("reading an app password: %w", err)
	}
	if err != nil || current.User != p.User || !bytes.Equal(current.Hash, p.Hash) || current.Expired(now) {
		v.forgetKey(key)
		return storage.AppPassword{}, false, nil
	}
	v.remember(key, current, now)
	v.touch(ctx, current, now)
	return current, true, nil
}

func (v *Verifier) remember(key [sha256.Size]byte, p storage.AppPassword, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.verified[key]; !ok && len(v.verified) >= v.cfg.CacheSize {
		// Any one goes: it is verified again at its next use.
		for k := range v.verified {
			delete(v.verified, k)
			break
		}
	}
	v.verified[key] = &verifiedPassword{record: p, checked: now}
}

func (v *Verifier) forgetKey(key [sha256.Size]byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.verified, key)
}

// Forget drops what is remembered of password id: revoked here, it is
// refused here from the next request on.
func (v *Verifier) Forget(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, e := range v.verified {
		if e.record.ID == id {
			delete(v.verified, k)
		}
	}
}

// touch writes when p was last used; the store writes at most once per
// storage.AppPasswordTouchInterval, and a failure costs the sign-in
// nothing.
func (v *Verifier) touch(ctx context.Context, p storage.AppPassword, now time.Time) {
	if p.NeedsTouch(now) {
		_ = v.cfg.Store.TouchAppPassword(ctx, p.ID, now.UTC().Truncate(time.Microsecond))
	}
}

// cacheKey is what a verified password is remembered under.
func cacheKey(user, password string) [sha256.Size]byte {
	return sha256.Sum256([]byte(user + "\x00" + password))
}
