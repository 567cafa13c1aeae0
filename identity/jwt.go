package identity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// verifyJWT checks a JWT access token's signature against the provider's
// keys and its registered claims, and returns its claims.
func (p *Provider) verifyJWT(ctx context.Context, token string, now time.Time) (*Identity, error) {
	tok, err := jwt.ParseSigned(token, p.algorithms)
	if err != nil {
		// Also the answer to "alg": "none" and to algorithms not allowed.
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if len(tok.Headers) != 1 {
		return nil, fmt.Errorf("%w: expected one signature", ErrInvalidToken)
	}
	m, err := p.discovery.metadata(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := p.keys.key(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return nil, err
	}
	var registered jwt.Claims
	var claims map[string]any
	verifyErr := errors.New("no key")
	for _, k := range keys {
		if verifyErr = tok.Claims(k.Key, &registered, &claims); verifyErr == nil {
			break
		}
	}
	if verifyErr != nil {
		// A signature no key verifies, or claims of the wrong types.
		return nil, fmt.Errorf("%w: no key of %s accepts the token: %v", ErrInvalidToken, p.issuer, verifyErr)
	}
	if err := p.checkClaims(registered, m.Issuer, now); err != nil {
		return nil, err
	}
	if err := p.checkAudience(registered.Audience); err != nil {
		return nil, err
	}
	return &Identity{Claims: claims, Expiry: registered.Expiry.Time()}, nil
}

// checkClaims applies the rules for access tokens: the issuer (exactly as
// discovery announced it), a lifetime (exp is required) and a subject.
func (p *Provider) checkClaims(c jwt.Claims, issuer string, now time.Time) error {
	if c.Expiry == nil {
		return fmt.Errorf("%w: no exp claim", ErrInvalidToken)
	}
	if c.Subject == "" {
		return fmt.Errorf("%w: no sub claim", ErrInvalidToken)
	}
	err := c.ValidateWithLeeway(jwt.Expected{Issuer: issuer, Time: now}, p.leeway)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return fmt.Errorf("%w: issuer %q is not %q", ErrInvalidToken, c.Issuer, issuer)
	}
	return fmt.Errorf("%w: %v", ErrInvalidToken, err)
}

// checkAudience accepts a token meant for this server: its aud names one of
// the configured audiences (RFC 9068 §4). The client it was issued to (azp,
// client_id) is not enough: a token of this server's own client for another
// API names that API in aud, and must not be usable here. Without a list
// every token of the issuer is accepted (the operator was warned).
func (p *Provider) checkAudience(aud jwt.Audience) error {
	if len(p.audiences) == 0 || slices.ContainsFunc(p.audiences, aud.Contains) {
		return nil
	}
	return fmt.Errorf("%w: audience %q is not accepted", ErrInvalidToken, []string(aud))
}
