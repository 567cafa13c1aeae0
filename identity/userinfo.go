package identity

import (
	"context"
	"fmt"
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
	release, err := p.providerSlot(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, span := startSpan(ctx, opUserinfo)
	defer func() { endSpan(span, err) }()
	p.stats.userinfoCalls.Add(1)
	var claims map[string]any
	if err = p.getJSON(ctx, m.UserinfoEndpoint, token, &claims); err != nil {
		return nil, fmt.Errorf("userinfo: %w", err)
	}
	return claims, nil
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
