package identity

import (
	"context"
	"fmt"
)

// userinfo asks the provider's userinfo endpoint about token.
func (p *Provider) userinfo(ctx context.Context, token string) (map[string]any, error) {
	m, err := p.discovery.metadata(ctx)
	if err != nil {
		return nil, err
	}
	if m.UserinfoEndpoint == "" {
		return nil, fmt.Errorf("%w: %s has no userinfo endpoint, so opaque tokens cannot be checked", ErrInvalidToken, p.issuer)
	}
	p.stats.userinfoCalls.Add(1)
	var claims map[string]any
	if err := p.getJSON(ctx, m.UserinfoEndpoint, token, &claims); err != nil {
		return nil, fmt.Errorf("userinfo: %w", err)
	}
	return claims, nil
}
