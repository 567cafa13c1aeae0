package identity

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"
)

// maxTokenBytes bounds the tokens worth looking at; real ones are a few KiB.
const maxTokenBytes = 16 << 10

// invalidTTL is how long a refused token stays refused without asking the
// provider again, so a flood of bad tokens does not become a flood of
// userinfo requests.
const invalidTTL = 10 * time.Second

// Provider verifies access tokens of one OpenID Connect issuer. It is safe for
// concurrent use.
type Provider struct {
	issuer    string
	audiences jwt.Audience
	// introspection checks opaque tokens when its ClientID is set.
	introspection Introspection
	algorithms    []jose.SignatureAlgorithm
	leeway        time.Duration
	timeout       time.Duration
	opaqueTTL     time.Duration
	now           func() time.Time
	client        *http.Client

	discovery *discovery
	keys      *keySet
	cache     *cache // accepted tokens
	refused   *cache // refused tokens, apart so that a flood of bad ones evicts no good one
	userinfos *semaphore.Weighted
	flight    singleflight.Group
	stats     counters
}

// Stats counts what a Provider did, for tests and metrics.
type Stats struct {
	Discoveries   int64 // discovery documents fetched
	KeyFetches    int64 // JWKS documents fetched
	UserinfoCalls int64 // userinfo requests sent
	// Introspections counts requests sent to the introspection endpoint.
	Introspections int64
	CacheHits      int64 // Verify calls answered from the cache
}

type counters struct {
	discoveries, keyFetches, userinfoCalls, introspections, cacheHits atomic.Int64
}

// New returns a Provider for cfg. It does no network I/O: the issuer is
// discovered on first use.
func New(cfg Config) (*Provider, error) {
	issuer, err := checkIssuer(cfg.Issuer)
	if err != nil {
		return nil, err
	}
	algs, err := signatureAlgorithms(cfg.Algorithms)
	if err != nil {
		return nil, err
	}
	if cfg.Leeway < 0 || cfg.Timeout < 0 || cfg.OpaqueTTL < 0 || cfg.CacheSize < 0 || cfg.UserinfoConcurrency < 0 {
		return nil, errors.New("identity: timeout, leeway, cache size, opaque TTL and userinfo concurrency must not be negative")
	}
	if err := checkIntrospection(cfg.Introspection); err != nil {
		return nil, err
	}
	p := &Provider{
		issuer:        issuer,
		introspection: cfg.Introspection,
		audiences:     nonEmpty(cfg.Audiences),
		algorithms:    algs,
		leeway:        orDefault(cfg.Leeway, DefaultLeeway),
		timeout:       orDefault(cfg.Timeout, DefaultTimeout),
		opaqueTTL:     orDefault(cfg.OpaqueTTL, DefaultOpaqueTTL),
		now:           cfg.Now,
		cache:         newCache(cfg.CacheSize),
		refused:       newCache(cfg.CacheSize),
		userinfos:     semaphore.NewWeighted(int64(orDefault(cfg.UserinfoConcurrency, DefaultUserinfoConcurrency))),
	}
	if p.now == nil {
		p.now = time.Now
	}
	p.client = newHTTPClient(p.timeout, cfg.Insecure)
	p.discovery = &discovery{p: p}
	p.keys = &keySet{p: p}
	return p, nil
}

// Issuer returns the configured issuer URL.
func (p *Provider) Issuer() string { return p.issuer }

// Document returns the provider's discovery document, for a server that
// passes it on to its clients. It is the document the verifier uses,
// fetched again when older than DocumentTTL; while the provider cannot be
// reached the last good one is returned up to DocumentStaleLimit, then an
// error wrapping ErrUnavailable.
func (p *Provider) Document(ctx context.Context) (Document, error) {
	return p.discovery.document(ctx)
}

// Stats returns the provider's counters.
func (p *Provider) Stats() Stats {
	return Stats{
		Discoveries:    p.stats.discoveries.Load(),
		KeyFetches:     p.stats.keyFetches.Load(),
		UserinfoCalls:  p.stats.userinfoCalls.Load(),
		Introspections: p.stats.introspections.Load(),
		CacheHits:      p.stats.cacheHits.Load(),
	}
}

// Close releases idle connections to the provider.
func (p *Provider) Close() { p.client.CloseIdleConnections() }

// Verify checks token and returns its identity. want names claims the caller
// needs; when a verified JWT lacks one of them, the userinfo endpoint is asked
// (once per token). Errors wrap ErrInvalidToken or ErrUnavailable. The
// returned Identity is shared: callers must not modify it.
func (p *Provider) Verify(ctx context.Context, token string, want ...string) (*Identity, error) {
	if token == "" || len(token) > maxTokenBytes {
		return nil, fmt.Errorf("%w: empty or oversized", ErrInvalidToken)
	}
	key := sha256.Sum256([]byte(token))
	e, err := p.entry(ctx, key, func(ctx context.Context) *entry { return p.resolve(ctx, token) })
	if err != nil {
		return nil, err
	}
	if !e.complete && missingAny(e.id, want) {
		e, err = p.completed(ctx, key, token, e)
		if err != nil {
			return nil, err
		}
	}
	return e.id, nil
}

// entry returns the cached entry for key or computes it once, however many
// requests ask at the same time.
func (p *Provider) entry(ctx context.Context, key [32]byte, compute func(context.Context) *entry) (*entry, error) {
	if e, ok := p.cached(key); ok {
		p.stats.cacheHits.Add(1)
		return e, e.err
	}
	e, err := p.shared(ctx, "v"+string(key[:]), func(ctx context.Context) *entry {
		e := compute(ctx)
		p.store(key, e)
		return e
	})
	if err != nil {
		return nil, err
	}
	return e, e.err
}

// completed adds the userinfo claims to a JWT's entry.
func (p *Provider) completed(ctx context.Context, key [32]byte, token string, e *entry) (*entry, error) {
	c, err := p.shared(ctx, "c"+string(key[:]), func(ctx context.Context) *entry {
		c := p.complete(ctx, token, e)
		if c.err == nil {
			p.store(key, c)
		}
		return c
	})
	if err != nil {
		return nil, err
	}
	return c, c.err
}

// shared runs fn once for all concurrent callers with the same key. The work
// must not fail because the first caller went away, so it runs detached
// from the caller's cancellation (outgoing requests have their own timeout).
func (p *Provider) shared(ctx context.Context, key string, fn func(context.Context) *entry) (*entry, error) {
	ch := p.flight.DoChan(key, func() (any, error) {
		return fn(context.WithoutCancel(ctx)), nil
	})
	select {
	case r := <-ch:
		return r.Val.(*entry), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	}
}

// Known reports whether token's check is cached (accepted or refused):
// verifying it again costs no round trip to the provider.
func (p *Provider) Known(token string) bool {
	_, ok := p.cached(sha256.Sum256([]byte(token)))
	return ok
}

func (p *Provider) cached(key [32]byte) (*entry, bool) {
	now := p.now()
	if e, ok := p.cache.get(key, now); ok {
		return e, true
	}
	return p.refused.get(key, now)
}

// store caches e until it stops being valid. Unavailability is not cached:
// the next request should try again.
func (p *Provider) store(key [32]byte, e *entry) {
	switch {
	case e.err == nil:
		p.cache.put(key, e)
	case errors.Is(e.err, ErrInvalidToken):
		p.refused.put(key, e)
	}
}

// resolve verifies a token the cache does not know.
func (p *Provider) resolve(ctx context.Context, token string) *entry {
	now := p.now()
	if looksLikeJWT(token) {
		id, err := p.verifyJWT(ctx, token, now)
		if err != nil {
			return failed(err, now)
		}
		return &entry{id: id, expires: id.Expiry}
	}
	return p.resolveOpaque(ctx, token, now)
}

// resolveOpaque checks a token that is not a JWT: at the introspection
// endpoint when one is configured, otherwise at userinfo, unless audiences
// are configured, which userinfo cannot check.
func (p *Provider) resolveOpaque(ctx context.Context, token string, now time.Time) *entry {
	switch {
	case p.introspection.ClientID != "":
		return p.introspected(ctx, token, now)
	case len(p.audiences) > 0:
		return failed(fmt.Errorf("%w: an opaque token cannot be held to the audience without introspection", ErrInvalidToken), now)
	}
	claims, err := p.userinfo(ctx, token)
	if err != nil {
		return failed(err, now)
	}
	if s, _ := claims["sub"].(string); s == "" {
		return failed(fmt.Errorf("%w: userinfo answer has no sub", ErrUnavailable), now)
	}
	expires := now.Add(p.opaqueTTL)
	return &entry{id: &Identity{Claims: claims, Expiry: expires}, expires: expires, complete: true}
}

// complete asks userinfo for the claims a verified JWT lacks. A provider that
// refuses its own JWTs at userinfo (some do, by design) leaves the JWT's
// claims as they are.
func (p *Provider) complete(ctx context.Context, token string, e *entry) *entry {
	info, err := p.userinfo(ctx, token)
	switch {
	case errors.Is(err, ErrInvalidToken):
		return &entry{id: e.id, expires: e.expires, complete: true}
	case err != nil:
		return &entry{err: err}
	}
	// An introspection answer may lack sub (RFC 7662 makes it optional);
	// then userinfo, asked with the same token, names the user.
	if sub, _ := info["sub"].(string); sub == "" || (e.id.String("sub") != "" && sub != e.id.String("sub")) {
		return failed(fmt.Errorf("%w: userinfo sub %q differs from the token's", ErrInvalidToken, sub), p.now())
	}
	claims := make(map[string]any, len(e.id.Claims)+len(info))
	for k, v := range info {
		claims[k] = v
	}
	for k, v := range e.id.Claims {
		claims[k] = v // the signed claims win
	}
	return &entry{id: &Identity{Claims: claims, Expiry: e.id.Expiry}, expires: e.expires, complete: true}
}

func failed(err error, now time.Time) *entry {
	return &entry{err: err, expires: now.Add(invalidTTL)}
}

func missingAny(id *Identity, want []string) bool {
	for _, c := range want {
		if _, ok := id.Claims[c]; !ok {
			return true
		}
	}
	return false
}

// looksLikeJWT tells compact JWS tokens from opaque ones.
func looksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && strings.HasPrefix(token, "eyJ")
}

func checkIssuer(issuer string) (string, error) {
	if issuer == "" {
		return "", errors.New("identity: an issuer URL is required")
	}
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("identity: issuer %q must be an http(s) URL without query or fragment", issuer)
	}
	return issuer, nil
}

// checkIntrospection refuses half-configured introspection: a secret or an
// endpoint without a client id, or an endpoint that is not an http(s) URL.
func checkIntrospection(in Introspection) error {
	if in.ClientID == "" {
		if in.ClientSecret != "" || in.Endpoint != "" {
			return errors.New("identity: introspection needs a client id")
		}
		return nil
	}
	if in.Endpoint == "" {
		return nil
	}
	u, err := url.Parse(in.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("identity: introspection endpoint %q must be an http(s) URL", in.Endpoint)
	}
	return nil
}

func signatureAlgorithms(names []string) ([]jose.SignatureAlgorithm, error) {
	if len(names) == 0 {
		names = DefaultAlgorithms
	}
	allowed := make(map[string]bool, len(DefaultAlgorithms))
	for _, a := range DefaultAlgorithms {
		allowed[a] = true
	}
	algs := make([]jose.SignatureAlgorithm, 0, len(names))
	for _, n := range names {
		if !allowed[n] {
			return nil, fmt.Errorf("identity: signature algorithm %q is not supported (use one of %s)", n, strings.Join(DefaultAlgorithms, ", "))
		}
		algs = append(algs, jose.SignatureAlgorithm(n))
	}
	return algs, nil
}

func newHTTPClient(timeout time.Duration, insecure bool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} //nolint:gosec // opt-in, toward the provider only
	t.ResponseHeaderTimeout = timeout
	return &http.Client{Timeout: timeout, Transport: t}
}

// nonEmpty drops empty entries, which an unset environment variable leaves
// in a configured list.
func nonEmpty(list []string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == "" })
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
