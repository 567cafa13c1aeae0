// Package identity turns OpenID Connect access tokens into verified claims.
//
// A Provider discovers its issuer lazily (never while a configuration loads),
// verifies JWT access tokens locally against the issuer's JWKS, checks
// opaque tokens at the RFC 7662 introspection endpoint when configured (or
// else, without audiences, at userinfo), and resolves claims a token lacks
// through the userinfo endpoint.
// Results are cached per token, bounded in number and never past the token's
// expiry, so a burst of requests with one token costs one round trip.
package identity

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// ErrInvalidToken means the token is not acceptable: malformed, expired,
// signed by an unknown key or with a refused algorithm, issued by another
// issuer or for another audience, refused by the userinfo endpoint, or
// inactive according to the introspection endpoint. Callers answer 401.
var ErrInvalidToken = errors.New("invalid token")

// ErrUnavailable means the provider could not be asked: discovery, JWKS or
// userinfo failed for reasons that say nothing about the token (network
// errors, timeouts, 5xx answers). Callers answer 503, never 401, so clients
// keep their valid tokens.
var ErrUnavailable = errors.New("identity provider unavailable")

// ErrTooManyTokens means a client presented more tokens the cache does not
// know than its budget allows (see ClientLimiter), so the token was not
// checked. Callers answer 429 with Retry-After, never 401: the token may be
// fine, and a 401 would make its client drop it.
var ErrTooManyTokens = errors.New("too many new tokens from this client")

// TooManyTokensError is ErrTooManyTokens with the time until the client's
// next token will be checked.
type TooManyTokensError struct {
	Wait time.Duration
}

func (e *TooManyTokensError) Error() string {
	return fmt.Sprintf("%v; retry in %v", ErrTooManyTokens, e.Wait.Round(time.Millisecond))
}

func (e *TooManyTokensError) Unwrap() error { return ErrTooManyTokens }

// RetryAfter is the Retry-After header's value: the wait in whole seconds,
// at least 1.
func (e *TooManyTokensError) RetryAfter() int {
	return max(1, int(math.Ceil(e.Wait.Seconds())))
}

// Defaults of Config.
const (
	DefaultTimeout   = 10 * time.Second
	DefaultLeeway    = 30 * time.Second
	DefaultCacheSize = 10000
	DefaultOpaqueTTL = time.Minute
	// DefaultUserinfoConcurrency bounds the userinfo requests in flight:
	// enough for a burst of new users, too few to flood the provider.
	DefaultUserinfoConcurrency = 16
)

// DefaultAlgorithms are the signature algorithms accepted unless configured.
// Symmetric (HS*) algorithms are absent on purpose: the key would be a secret
// shared with every client.
var DefaultAlgorithms = []string{
	"RS256", "RS384", "RS512",
	"PS256", "PS384", "PS512",
	"ES256", "ES384", "ES512",
	"EdDSA",
}

// Config configures a Provider. The zero value of each optional field means
// its default.
type Config struct {
	// Issuer is the issuer URL; discovery reads
	// <Issuer>/.well-known/openid-configuration. Required.
	Issuer string
	// Audiences, when set, are this server's identifiers (RFC 9068 §4): a
	// JWT's aud must name one of them, and an opaque token is accepted only
	// through Introspection, whose answer's aud or client_id must name one
	// of them (userinfo cannot say whom a token was issued to). Empty: any
	// token of the issuer.
	Audiences []string
	// Introspection, when its ClientID is set, checks opaque tokens at the
	// provider's RFC 7662 introspection endpoint before userinfo is asked
	// for their claims.
	Introspection Introspection
	// Algorithms are the accepted JWS algorithms. Default: DefaultAlgorithms.
	Algorithms []string
	// Insecure skips TLS certificate verification toward the provider only.
	Insecure bool
	// Timeout bounds every request to the provider. Default: DefaultTimeout.
	Timeout time.Duration
	// Leeway tolerates clock skew on exp, nbf and iat. Default: DefaultLeeway.
	Leeway time.Duration
	// CacheSize bounds the number of cached tokens. Default: DefaultCacheSize.
	CacheSize int
	// OpaqueTTL is how long the claims of an opaque token are cached (at
	// most until the exp an introspection answer names).
	// Default: DefaultOpaqueTTL.
	OpaqueTTL time.Duration
	// UserinfoConcurrency bounds the userinfo and introspection requests
	// in flight together; a token that finds no free slot within Timeout
	// is answered ErrUnavailable.
	// Default: DefaultUserinfoConcurrency.
	UserinfoConcurrency int
	// Now returns the current time; nil means time.Now. For tests.
	Now func() time.Time `json:"-"`
}

// Introspection is this server's access to the provider's token
// introspection endpoint (RFC 7662).
type Introspection struct {
	// ClientID and ClientSecret authenticate the requests (HTTP Basic,
	// RFC 6749 §2.3.1). An empty ClientID means no introspection.
	ClientID     string
	ClientSecret string
	// Endpoint is the introspection URL; empty means the
	// introspection_endpoint the provider's discovery document announces.
	Endpoint string
}

// Identity is what a verified token says about its user.
type Identity struct {
	// Claims are the token's claims, completed from userinfo when needed.
	Claims map[string]any
	// Expiry is when the token stops being valid (for opaque tokens: when
	// the cached answer does).
	Expiry time.Time
}

// String returns the claim as a string: strings as they are, numbers and
// booleans formatted; "" when the claim is missing or structured.
func (id *Identity) String(claim string) string {
	s, _ := ClaimString(id.Claims[claim])
	return s
}

// Strings returns the claim as a list: the scalars of an array claim, or a
// single scalar claim as a one-element list.
func (id *Identity) Strings(claim string) []string {
	switch v := id.Claims[claim].(type) {
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := ClaimString(e); ok {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return v
	case nil:
		return nil
	default:
		if s, ok := ClaimString(v); ok {
			return []string{s}
		}
	}
	return nil
}

// ClaimString formats a scalar claim the way it was written: strings as
// they are, booleans as true/false, and numbers decoded as float64 keep
// their digits (12345678, not 1.2345678e+07), so a numeric user id stays
// the same id. Structured claims (lists, objects) and nil report false.
func ClaimString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 32), true
	case int:
		return strconv.Itoa(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case json.Number:
		return v.String(), true
	}
	return "", false
}
