package identity

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// discoveryRetry is how long a failed discovery is remembered, so that an
// unreachable provider is not asked again by every request.
const discoveryRetry = 2 * time.Second

// metadata is the part of the discovery document the provider needs.
type metadata struct {
	Issuer           string `json:"issuer"`
	JWKSURI          string `json:"jwks_uri"`
	UserinfoEndpoint string `json:"userinfo_endpoint"`
	// IntrospectionEndpoint is RFC 8414's name, which OpenID providers
	// (Keycloak, oidc-provider, …) announce in their discovery document too.
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// discovery fetches the provider's metadata on first use and keeps it.
type discovery struct {
	p        *Provider
	mu       sync.Mutex
	meta     *metadata
	err      error
	failedAt time.Time
}

// metadata returns the discovered metadata. Concurrent callers wait for one
// fetch.
func (d *discovery) metadata(ctx context.Context) (*metadata, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.meta != nil {
		return d.meta, nil
	}
	if d.err != nil && d.p.now().Sub(d.failedAt) < discoveryRetry {
		return nil, d.err
	}
	m, err := d.fetch(ctx)
	if err != nil {
		d.err, d.failedAt = err, d.p.now()
		return nil, err
	}
	d.meta, d.err = m, nil
	return m, nil
}

func (d *discovery) fetch(ctx context.Context) (_ *metadata, err error) {
	ctx, span := startSpan(ctx, opDiscovery)
	defer func() { endSpan(span, err) }()
	d.p.stats.discoveries.Add(1)
	// OpenID Connect Discovery §4: any trailing "/" of the issuer is
	// removed before the well-known path is appended.
	url := strings.TrimSuffix(d.p.issuer, "/") + "/.well-known/openid-configuration"
	var m metadata
	if err := d.p.getJSON(ctx, url, "", &m); err != nil {
		return nil, fmt.Errorf("discovering %s: %w", d.p.issuer, err)
	}
	// A provider announcing another issuer is misconfigured (or not the
	// provider meant): trusting its keys would accept someone else's tokens.
	// A trailing "/" is all the configuration may leave out; tokens are
	// then held to the announced issuer exactly.
	if strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(d.p.issuer, "/") {
		return nil, fmt.Errorf("%w: discovery of %s announces issuer %q", ErrUnavailable, d.p.issuer, m.Issuer)
	}
	if m.JWKSURI == "" {
		return nil, fmt.Errorf("%w: discovery of %s has no jwks_uri", ErrUnavailable, d.p.issuer)
	}
	return &m, nil
}
