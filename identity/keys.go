package identity

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

const (
	// keysRefreshMin limits refetching the JWKS for unknown key ids: a
	// flood of forged tokens must not become a flood of JWKS requests.
	keysRefreshMin = 10 * time.Second
	// keysMaxAge makes removed (for example compromised) keys go away.
	keysMaxAge = time.Hour
)

// keySet holds the provider's signing keys, fetched on first use and again
// when a token names a key it does not know.
type keySet struct {
	p         *Provider
	mu        sync.Mutex
	keys      *jose.JSONWebKeySet
	fetchedAt time.Time
}

// key returns the verification keys for a token header's kid (all keys when
// the header names none).
func (s *keySet) key(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.p.now()
	stale := s.keys == nil || now.Sub(s.fetchedAt) > keysMaxAge
	if !stale {
		if keys := find(s.keys, kid); len(keys) > 0 {
			return keys, nil
		}
		if now.Sub(s.fetchedAt) < keysRefreshMin {
			// The key may be brand new; say "try again" rather than
			// "invalid", which would make a client drop a good token.
			return nil, fmt.Errorf("%w: unknown signing key %q; keys were fetched %v ago", ErrUnavailable, kid, now.Sub(s.fetchedAt).Round(time.Second))
		}
	}
	if err := s.fetch(ctx); err != nil {
		if s.keys == nil {
			return nil, err
		}
		// Keep serving with the keys we have; the provider may be back later.
		if keys := find(s.keys, kid); len(keys) > 0 {
			return keys, nil
		}
		return nil, err
	}
	keys := find(s.keys, kid)
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: %s has no signing key %q", ErrInvalidToken, s.p.issuer, kid)
	}
	return keys, nil
}

func (s *keySet) fetch(ctx context.Context) error {
	m, err := s.p.discovery.metadata(ctx)
	if err != nil {
		return err
	}
	s.p.stats.keyFetches.Add(1)
	var set jose.JSONWebKeySet
	if err := s.p.getJSON(ctx, m.JWKSURI, "", &set); err != nil {
		return fmt.Errorf("fetching signing keys: %w", err)
	}
	s.keys, s.fetchedAt = &set, s.p.now()
	return nil
}

// find returns the public signing keys named kid.
func find(set *jose.JSONWebKeySet, kid string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range set.Keys {
		if (kid == "" || k.KeyID == kid) && k.Use != "enc" {
			if pub := k.Public(); pub.Valid() {
				out = append(out, pub)
			}
		}
	}
	return out
}
