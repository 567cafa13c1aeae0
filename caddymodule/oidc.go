package caddymodule

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/identity"
)

// OIDC connects a module to an OpenID Connect provider. The oidc_auth and
// webfinger handlers embed it; handlers with the same settings share one
// connection, key cache and token cache.
type OIDC struct {
	// Issuer is the provider's issuer URL. Placeholders such as
	// {env.OIDC_ISSUER} are expanded.
	Issuer string `json:"issuer,omitempty"`
	// Audiences are the accepted audiences and authorized parties: a JWT
	// access token is accepted when its aud names one of them or its azp
	// (client_id in RFC 9068 tokens) is one of them. Placeholders are
	// expanded, and an entry may hold several separated by commas or
	// spaces, so that one environment variable can carry the list. Empty:
	// tokens of every client of the provider are accepted, with a warning
	// at start.
	Audiences []string `json:"audiences,omitempty"`
	// Algorithms are the accepted JWT signature algorithms. Default: the
	// RSA, RSA-PSS, ECDSA and EdDSA ones; never HS* or none.
	Algorithms []string `json:"algorithms,omitempty"`
	// Insecure skips TLS certificate verification toward the provider
	// (only); for test setups with self-signed certificates.
	Insecure bool `json:"insecure,omitempty"`
	// Timeout bounds each request to the provider. Default: 10s.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// Leeway tolerates clock skew when checking exp and nbf. Default: 30s.
	Leeway caddy.Duration `json:"leeway,omitempty"`
	// CacheSize bounds how many tokens are remembered. Default: 10000.
	CacheSize int `json:"cache_size,omitempty"`
	// OpaqueTTL is how long the userinfo answer for an opaque token (whose
	// expiry the server cannot see) is reused. Default: 1m.
	OpaqueTTL caddy.Duration `json:"opaque_ttl,omitempty"`
	// UserinfoConcurrency bounds the requests to the userinfo endpoint in
	// flight at once; a token waiting longer than Timeout for a slot is
	// answered 503. Default: 16.
	UserinfoConcurrency int `json:"userinfo_concurrency,omitempty"`
}

// identityConfig expands placeholders and converts to the identity package's
// configuration.
func (o OIDC) identityConfig() identity.Config {
	repl := caddy.NewReplacer()
	return identity.Config{
		Issuer:     repl.ReplaceAll(o.Issuer, ""),
		Audiences:  expandList(repl, o.Audiences),
		Algorithms: o.Algorithms,
		Insecure:   o.Insecure,
		Timeout:    time.Duration(o.Timeout),
		Leeway:     time.Duration(o.Leeway),
		CacheSize:  o.CacheSize,
		OpaqueTTL:  time.Duration(o.OpaqueTTL),

		UserinfoConcurrency: o.UserinfoConcurrency,
	}
}

// expandList expands placeholders in each entry and splits the results at
// commas and white space, dropping empty pieces: an unset variable gives no
// entry at all.
func expandList(repl *caddy.Replacer, list []string) []string {
	var out []string
	for _, entry := range list {
		out = append(out, strings.FieldsFunc(repl.ReplaceAll(entry, ""), isListSeparator)...)
	}
	return out
}

func isListSeparator(r rune) bool { return r == ',' || unicode.IsSpace(r) }

// warnAnyAudience tells the operator, once per handler at start, that
// without an audience list an access token issued to any client of the
// provider (another application of the same realm, say) signs a user in.
func warnAnyAudience(logger *zap.Logger, cfg identity.Config) {
	if len(cfg.Audiences) > 0 {
		return
	}
	logger.Warn("no audience configured: access tokens issued to every client of the provider are accepted; "+
		"list this server's audiences or client ids with the audience option",
		zap.String("issuer", cfg.Issuer))
}

// providers shares identity providers between handlers and across reloads,
// so a reload keeps the discovered keys and the token cache.
var providers = caddy.NewUsagePool()

type pooledProvider struct{ *identity.Provider }

func (p pooledProvider) Destruct() error {
	p.Close()
	return nil
}

// acquireProvider returns the shared provider for cfg and the key to release
// it with, and registers its metrics. It does no network I/O.
func acquireProvider(ctx caddy.Context, cfg identity.Config) (*identity.Provider, string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, "", err
	}
	key := string(b)
	v, _, err := providers.LoadOrNew(key, func() (caddy.Destructor, error) {
		p, err := identity.New(cfg)
		if err != nil {
			return nil, err
		}
		return pooledProvider{p}, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("oidc: %w", err)
	}
	p := v.(pooledProvider).Provider
	if reg := ctx.GetMetricsRegistry(); reg != nil {
		if err := registerProviderMetrics(reg, p); err != nil {
			providers.Delete(key)
			return nil, "", fmt.Errorf("oidc metrics: %w", err)
		}
	}
	return p, key, nil
}

// releaseProvider gives back what acquireProvider handed out.
func releaseProvider(key string) error {
	if key == "" {
		return nil
	}
	_, err := providers.Delete(key)
	return err
}

// unmarshalOption parses one OIDC subdirective; it reports false for
// subdirectives that are not OIDC settings.
func (o *OIDC) unmarshalOption(d *caddyfile.Dispenser) (bool, error) {
	var err error
	switch d.Val() {
	case "issuer":
		err = oneArg(d, &o.Issuer)
	case "audience":
		err = listArg(d, &o.Audiences)
	case "algorithms":
		err = listArg(d, &o.Algorithms)
	case "insecure":
		if d.NextArg() {
			return true, d.ArgErr()
		}
		o.Insecure = true
	case "timeout":
		err = durationArg(d, &o.Timeout)
	case "leeway":
		err = durationArg(d, &o.Leeway)
	case "opaque_ttl":
		err = durationArg(d, &o.OpaqueTTL)
	case "cache_size":
		err = positiveIntArg(d, &o.CacheSize)
	case "userinfo_concurrency":
		err = positiveIntArg(d, &o.UserinfoConcurrency)
	default:
		return false, nil
	}
	return true, err
}

func positiveIntArg(d *caddyfile.Dispenser, dst *int) error {
	option := d.Val()
	var v string
	if !d.AllArgs(&v) {
		return d.ArgErr()
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return d.Errf("%s %q must be a positive number", option, v)
	}
	*dst = n
	return nil
}

func durationArg(d *caddyfile.Dispenser, dst *caddy.Duration) error {
	var v string
	if !d.AllArgs(&v) {
		return d.ArgErr()
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil || dur < 0 {
		return d.Errf("invalid duration %q", v)
	}
	*dst = caddy.Duration(dur)
	return nil
}
