package identity

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Why not coreos/go-oidc's RemoteKeySet: in v3.21.0 it forgets a failed
// fetch at once (five tokens in turn against a hanging JWKS endpoint cost
// five timeouts), refetches for every token whose kid is unknown or whose
// signature fails (forged tokens become a stream of JWKS requests), never
// drops a key the provider removed, and reports a failed fetch and an
// unknown key with untyped errors that only their text tells apart.

const (
	// keysRefreshMin limits refetching the JWKS for unknown key ids: a
	// flood of forged tokens must not become a flood of JWKS requests.
	keysRefreshMin = 10 * time.Second
	// keysMaxAge makes removed (for example compromised) keys go away.
	keysMaxAge = time.Hour
	// keysRetry is how long a failed fetch is remembered: meanwhile tokens
	// needing a new key are answered "unavailable" at once instead of each
	// waiting for a provider that is down.
	keysRetry = 5 * time.Second
)

// keySet holds the provider's signing keys, fetched on first use, again
// when a token names a key it does not know, and in the background once they
// are old. One fetch runs at a time and every waiter shares its result; a
// fetch never holds up tokens signed with a key already known.
type keySet struct {
	p *Provider

	mu        sync.Mutex
	keys      *jose.JSONWebKeySet // nil until the first successful fetch
	fetchedAt time.Time           // of the keys
	failure   error               // of the last fetch, nil after a success
	failedAt  time.Time
	inflight  *keyRefresh // nil when no fetch runs
}

// keyRefresh is one fetch of the JWKS that several tokens may wait for.
type keyRefresh struct {
	done chan struct{}
	err  error // set before done is closed
}

// key returns the verification keys for a token header's kid (all keys when
// the header names none). An unknown kid is ErrInvalidToken only after a
// fetch that did not find it; ErrUnavailable while the keys cannot be
// fetched or were fetched too recently to tell.
func (s *keySet) key(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	s.mu.Lock()
	now := s.p.now()
	if keys := s.known(kid); len(keys) > 0 {
		if now.Sub(s.fetchedAt) > keysMaxAge && s.mayFetch(now) {
			s.startRefresh(ctx)
		}
		s.mu.Unlock()
		return keys, nil
	}
	r, err := s.refreshFor(ctx, kid, now)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: waiting for the signing keys: %v", ErrUnavailable, ctx.Err())
	}
	if r.err != nil {
		return nil, r.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if keys := s.known(kid); len(keys) > 0 {
		return keys, nil
	}
	return nil, fmt.Errorf("%w: %s has no signing key %q", ErrInvalidToken, s.p.issuer, kid)
}

// refreshFor returns the fetch to wait for to learn kid, starting one when
// allowed. s.mu must be held.
func (s *keySet) refreshFor(ctx context.Context, kid string, now time.Time) (*keyRefresh, error) {
	if s.inflight != nil {
		return s.inflight, nil
	}
	if s.failure != nil && now.Sub(s.failedAt) < keysRetry {
		return nil, s.failure
	}
	if s.keys != nil && now.Sub(s.fetchedAt) < keysRefreshMin {
		// The key may be brand new; say "try again" rather than
		// "invalid", which would make a client drop a good token.
		return nil, fmt.Errorf("%w: unknown signing key %q; keys were fetched %v ago", ErrUnavailable, kid, now.Sub(s.fetchedAt).Round(time.Second))
	}
	return s.startRefresh(ctx), nil
}

// mayFetch reports whether a background refresh may start now: none runs
// and no failure is fresh. s.mu must be held.
func (s *keySet) mayFetch(now time.Time) bool {
	return s.inflight == nil && (s.failure == nil || now.Sub(s.failedAt) >= keysRetry)
}

// startRefresh fetches the keys in a goroutine of its own, so that a caller
// giving up does not cancel the fetch the others wait for; the fetch keeps
// only the span of ctx, the request that started it, so that it shows in
// that request's trace. The provider's timeout bounds it. s.mu must be
// held.
func (s *keySet) startRefresh(ctx context.Context) *keyRefresh {
	r := &keyRefresh{done: make(chan struct{})}
	s.inflight = r
	go func() {
		set, err := s.fetch(detachedSpan(ctx))
		s.mu.Lock()
		if err != nil {
			s.failure, s.failedAt = err, s.p.now()
		} else {
			s.keys, s.fetchedAt, s.failure = set, s.p.now(), nil
		}
		s.inflight = nil
		r.err = err
		s.mu.Unlock()
		close(r.done)
	}()
	return r
}

// known returns the known keys for kid. s.mu must be held.
func (s *keySet) known(kid string) []jose.JSONWebKey {
	if s.keys == nil {
		return nil
	}
	return find(s.keys, kid)
}

func (s *keySet) fetch(ctx context.Context) (*jose.JSONWebKeySet, error) {
	m, err := s.p.discovery.metadata(ctx)
	if err != nil {
		return nil, err
	}
	ctx, span := startSpan(ctx, opKeys)
	defer func() { endSpan(span, err) }()
	s.p.stats.keyFetches.Add(1)
	var set jose.JSONWebKeySet
	if err = s.p.getJSON(ctx, m.JWKSURI, "", &set); err != nil {
		return nil, fmt.Errorf("fetching signing keys: %w", err)
	}
	return &set, nil
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
