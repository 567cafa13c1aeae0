package identity

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// discoveryRetry is how long a failed discovery is remembered, so that an
// unreachable provider is not asked again by every request.
const discoveryRetry = 2 * time.Second

const (
	// DocumentTTL is how long Document reuses a fetched discovery
	// document before it asks the provider again: a provider that moves an
	// endpoint is followed within it.
	DocumentTTL = 15 * time.Minute
	// DocumentStaleLimit is how old a document Document still answers
	// with while the provider cannot be reached: clients keep signing in
	// through a short outage, but not with endpoints a day old.
	DocumentStaleLimit = 24 * time.Hour
)

// forever is the age limit of a discovery only the verifier needs.
const forever = time.Duration(math.MaxInt64)

// metadata is the part of the discovery document the provider needs.
type metadata struct {
	Issuer           string `json:"issuer"`
	JWKSURI          string `json:"jwks_uri"`
	UserinfoEndpoint string `json:"userinfo_endpoint"`
	// IntrospectionEndpoint is RFC 8414's name, which OpenID providers
	// (Keycloak, oidc-provider, …) announce in their discovery document too.
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// Document is the provider's discovery document as the provider sent it.
type Document struct {
	// Body is the document, byte for byte. Callers must not modify it.
	Body []byte
	// ETag is a strong entity tag of Body (RFC 9110 §8.8.3), quoted.
	ETag string
	// Fetched is when the provider sent it.
	Fetched time.Time
}

// discovered is one successful discovery.
type discovered struct {
	meta *metadata
	doc  Document
}

// discovery fetches the provider's discovery document on first use and
// keeps the last good one.
type discovery struct {
	p    *Provider
	last atomic.Pointer[discovered]
	// mu makes concurrent callers wait for one fetch.
	mu       sync.Mutex
	err      error
	failedAt time.Time
}

// metadata returns the discovered metadata. Once there is some it is
// never fetched again for the verifier: a key rotation changes the JWKS,
// not the document.
func (d *discovery) metadata(ctx context.Context) (*metadata, error) {
	if last := d.last.Load(); last != nil {
		return last.meta, nil
	}
	last, err := d.latest(ctx, forever)
	if err != nil {
		return nil, err
	}
	return last.meta, nil
}

// document returns the discovery document, fetched again when it is older
// than DocumentTTL. While the provider cannot be reached it answers with
// the last good one up to DocumentStaleLimit.
func (d *discovery) document(ctx context.Context) (Document, error) {
	last, err := d.latest(ctx, DocumentTTL)
	if err == nil {
		return last.doc, nil
	}
	if last != nil && d.p.now().Sub(last.doc.Fetched) < DocumentStaleLimit {
		return last.doc, nil
	}
	return Document{}, err
}

// latest returns a discovery younger than maxAge, fetching one when there
// is none. On failure it returns the last good discovery, if any, with the
// error.
func (d *discovery) latest(ctx context.Context, maxAge time.Duration) (*discovered, error) {
	if last := d.last.Load(); last != nil && d.p.now().Sub(last.doc.Fetched) < maxAge {
		return last, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	last := d.last.Load()
	if last != nil && d.p.now().Sub(last.doc.Fetched) < maxAge {
		return last, nil // fetched while this caller waited
	}
	if d.err != nil && d.p.now().Sub(d.failedAt) < discoveryRetry {
		return last, d.err
	}
	next, err := d.fetch(ctx)
	if err != nil {
		d.err, d.failedAt = err, d.p.now()
		return last, err
	}
	d.err = nil
	d.last.Store(next)
	return next, nil
}

func (d *discovery) fetch(ctx context.Context) (_ *discovered, err error) {
	ctx, span := startSpan(ctx, opDiscovery)
	defer func() { endSpan(span, err) }()
	d.p.stats.discoveries.Add(1)
	// OpenID Connect Discovery §4: any trailing "/" of the issuer is
	// removed before the well-known path is appended.
	url := strings.TrimSuffix(d.p.issuer, "/") + "/.well-known/openid-configuration"
	body, err := d.p.get(ctx, url, "")
	if err != nil {
		return nil, fmt.Errorf("discovering %s: %w", d.p.issuer, err)
	}
	var m metadata
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("%w: decoding %s: %v", ErrUnavailable, url, err)
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
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
	return &discovered{meta: &m, doc: Document{Body: body, ETag: etag, Fetched: d.p.now()}}, nil
}
