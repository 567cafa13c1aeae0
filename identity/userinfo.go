package identity

import (
	"context"
	"fmt"
	"sync/atomic"
)

// userinfo asks the provider's userinfo endpoint about token.
func (p *Provider) userinfo(ctx context.Context, token string) (_ map[string]any, err error) {
	m, err := p.discovery.metadata(ctx)
	if err != nil {
		return nil, err
	}
	if m.UserinfoEndpoint == "" {
		return nil, fmt.Errorf("%w: %s has no userinfo endpoint, so opaque tokens cannot be checked", ErrInvalidToken, p.issuer)
	}
	ctx, end, err := p.startTokenCall(ctx, opUserinfo, &p.stats.userinfoCalls)
	if err != nil {
		return nil, err
	}
	defer func() { end(err) }()
	var claims map[string]any
	if err = p.getJSON(ctx, m.UserinfoEndpoint, token, &claims); err != nil {
		return nil, fmt.Errorf("userinfo: %w", err)
	}
	return claims, nil
}

// startTokenCall begins a call that asks the provider about a token
// (userinfo, introspection): it takes one of the bounded slots, opens the
// call's span and counts the call in calls. end(err) ends the span with
// the call's outcome and gives the slot back.
func (p *Provider) startTokenCall(ctx context.Context, op string, calls *atomic.Int64) (_ context.Context, end func(error), err error) {
	release, err := p.providerSlot(ctx)
	if err != nil {
		return ctx, nil, err
	}
	ctx, span := startSpan(ctx, op)
	calls.Add(1)
	return ctx, func(err error) {
		endSpan(span, err)
		release()
	}, nil
}

// providerSlot waits, at most the provider timeout, for one of the bounded
// slots that userinfo and introspection requests share: random tokens sent
// faster than the provider answers must not become an unbounded number of
// requests to it.
func (p *Provider) providerSlot(ctx context.Context) (release func(), err error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if err := p.userinfos.Acquire(ctx, 1); err != nil {
		return nil, fmt.Errorf("%w: every userinfo slot is busy: %v", ErrUnavailable, err)
	}
	return func() { p.userinfos.Release(1) }, nil
}
