package caddymodule

import (
	"errors"
	"math"
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
// verifier: one connection, key cache and token cache, one userinfo budget
// and one budget of new tokens per client address.
type OIDC struct {
	// Issuer is the provider's issuer URL. Placeholders such as
	// {env.OIDC_ISSUER} are expanded.
	Issuer string `json:"issuer,omitempty"`
	// Audiences are this server's identifiers (RFC 9068 §4): a JWT access
	// token is accepted only when its aud names one of them, and an opaque
	// one only through Introspection, whose answer's aud or client_id must
	// name one of them. Placeholders are expanded, and an entry may hold
	// several separated by commas or spaces, so that one environment
	// variable can carry the list. Empty: tokens of every client of the
	// provider are accepted, with a warning at start.
	Audiences []string `json:"audiences,omitempty"`
	// Introspection checks opaque tokens at the provider's RFC 7662
	// endpoint. Without it, and with Audiences set, opaque tokens are
	// refused: userinfo cannot say whom a token was issued to.
	Introspection *Introspection `json:"introspection,omitempty"`
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
	// OpaqueTTL is how long the userinfo or introspection answer for an
	// opaque token (whose expiry the server may not see) is reused.
	// Default: 1m.
	OpaqueTTL caddy.Duration `json:"opaque_ttl,omitempty"`
	// UserinfoConcurrency bounds the requests to the userinfo and
	// introspection endpoints in flight at once; a token waiting longer
	// than Timeout for a slot is answered 503. Default: 16.
	UserinfoConcurrency int `json:"userinfo_concurrency,omitempty"`
	// TokenRate is how many tokens the cache does not know yet (and that
	// cost a check, maybe a round trip to the provider) one client address
	// may present per second; more are answered 429 with Retry-After. The
	// address is Caddy's client IP (trusted_proxies honoured), IPv6 by its
	// /64. Default: 2.
	TokenRate float64 `json:"token_rate,omitempty"`
	// TokenBurst is how many such tokens a client address may present at
	// once. Default: 20.
	TokenBurst int `json:"token_burst,omitempty"`
}

// Introspection names this server's credentials at the provider's token
// introspection endpoint (RFC 7662).
type Introspection struct {
	// ClientID and ClientSecret authenticate this server to the endpoint
	// (HTTP Basic). Placeholders are expanded.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// Endpoint is the introspection URL. Default: the
	// introspection_endpoint of the provider's discovery document.
	Endpoint string `json:"endpoint,omitempty"`
}

// identityConfig expands placeholders and converts to the identity package's
// configuration.
func (o OIDC) identityConfig() identity.Config {
	repl := caddy.NewReplacer()
	cfg := identity.Config{
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
	if in := o.Introspection; in != nil {
		cfg.Introspection = identity.Introspection{
			ClientID:     repl.ReplaceAll(in.ClientID, ""),
			ClientSecret: repl.ReplaceAll(in.ClientSecret, ""),
			Endpoint:     repl.ReplaceAll(in.Endpoint, ""),
		}
	}
	return cfg
}

// verifierConfig is everything a verifier is made of, and so the key that
// tells whether two handlers can share one.
type verifierConfig struct {
	Identity   identity.Config
	TokenRate  float64
	TokenBurst int
}

func (o OIDC) verifierConfig() (verifierConfig, error) {
	if o.TokenRate < 0 || o.TokenBurst < 0 {
		return verifierConfig{}, errors.New("token_rate and token_burst must not be negative")
	}
	return verifierConfig{Identity: o.identityConfig(), TokenRate: o.TokenRate, TokenBurst: o.TokenBurst}, nil
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
		"list the aud this server's tokens carry with the audience option",
		zap.String("issuer", cfg.Issuer))
}

// options are the OIDC provider subdirectives, which oidc_auth and
// webfinger both take.
func (o *OIDC) options() options {
	return options{
		"issuer":               set(&o.Issuer, oneArg),
		"audience":             allArgs(&o.Audiences),
		"algorithms":           allArgs(&o.Algorithms),
		"insecure":             set(&o.Insecure, flagArg),
		"timeout":              set(&o.Timeout, durationArg),
		"leeway":               set(&o.Leeway, durationArg),
		"opaque_ttl":           set(&o.OpaqueTTL, durationArg),
		"cache_size":           set(&o.CacheSize, positiveIntArg),
		"userinfo_concurrency": set(&o.UserinfoConcurrency, positiveIntArg),
		"token_rate":           o.parseTokenRate,
		"introspection":        set(&o.Introspection, parseIntrospection),
	}
}

// parseTokenRate reads token_rate into o.
func (o *OIDC) parseTokenRate(d *caddyfile.Dispenser) error {
	var err error
	o.TokenRate, o.TokenBurst, err = parseTokenRate(d)
	return err
}

// parseTokenRate reads "token_rate <per_second> [<burst>]".
func parseTokenRate(d *caddyfile.Dispenser) (float64, int, error) {
	args := d.RemainingArgs()
	if len(args) < 1 || len(args) > 2 {
		return 0, 0, d.ArgErr()
	}
	perSecond, err := strconv.ParseFloat(args[0], 64)
	if err != nil || perSecond <= 0 || math.IsInf(perSecond, 0) {
		return 0, 0, d.Errf("token_rate %q must be a positive number of tokens per second", args[0])
	}
	burst := 0
	if len(args) == 2 {
		burst, err = strconv.Atoi(args[1])
		if err != nil || burst < 1 {
			return 0, 0, d.Errf("token_rate burst %q must be a positive number", args[1])
		}
	}
	return perSecond, burst, nil
}

// parseIntrospection reads "introspection <client_id> <client_secret>
// [<endpoint>]".
func parseIntrospection(d *caddyfile.Dispenser) (*Introspection, error) {
	args := d.RemainingArgs()
	if len(args) < 2 || len(args) > 3 {
		return nil, d.ArgErr()
	}
	in := &Introspection{ClientID: args[0], ClientSecret: args[1]}
	if len(args) == 3 {
		in.Endpoint = args[2]
	}
	return in, nil
}
