package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// introspected checks an opaque token at the introspection endpoint
// (RFC 7662) and returns the entry to cache: the answer's claims, until the
// token expires or OpaqueTTL has passed, whichever comes first. The claims
// of the user (the user claim, name, groups) usually come from userinfo
// afterwards, as for a JWT that lacks them.
func (p *Provider) introspected(ctx context.Context, token string, now time.Time) *entry {
	answer, err := p.introspect(ctx, token)
	if err != nil {
		return failed(err, now)
	}
	if err := p.checkIntrospection(answer, now); err != nil {
		return failed(err, now)
	}
	claims := make(map[string]any, len(answer))
	for k, v := range answer {
		if k != "active" {
			claims[k] = v
		}
	}
	expires := now.Add(p.opaqueTTL)
	if exp, ok := answer["exp"].(float64); ok && time.Unix(int64(exp), 0).Before(expires) {
		expires = time.Unix(int64(exp), 0)
	}
	return &entry{id: &Identity{Claims: claims, Expiry: expires}, expires: expires}
}

// checkIntrospection applies RFC 7662 §2.2: only "active": true means the
// token is valid, and the answer's aud or client_id must name this server
// when audiences are configured.
func (p *Provider) checkIntrospection(answer map[string]any, now time.Time) error {
	if active, _ := answer["active"].(bool); !active {
		return fmt.Errorf("%w: introspection says the token is not active", ErrInvalidToken)
	}
	if exp, ok := answer["exp"].(float64); ok && !now.Before(time.Unix(int64(exp), 0).Add(p.leeway)) {
		return fmt.Errorf("%w: introspection says the token expired", ErrInvalidToken)
	}
	// A refresh token, or a DPoP-bound one whose proof this server does not
	// check, is no bearer access token, active or not.
	if typ, ok := answer["token_type"].(string); ok && !strings.EqualFold(typ, "Bearer") && !strings.EqualFold(typ, "access_token") {
		return fmt.Errorf("%w: introspection says the token is a %q token", ErrInvalidToken, typ)
	}
	if len(p.audiences) == 0 {
		return nil
	}
	id := &Identity{Claims: answer}
	if slices.ContainsFunc(id.Strings("aud"), p.acceptsAudience) || p.acceptsAudience(id.String("client_id")) {
		return nil
	}
	return fmt.Errorf("%w: introspection names audience %q and client %q, neither is accepted", ErrInvalidToken, id.Strings("aud"), id.String("client_id"))
}

func (p *Provider) acceptsAudience(aud string) bool { return slices.Contains(p.audiences, aud) }

// introspect asks the introspection endpoint about token. Any answer but
// 200 is ErrUnavailable: the endpoint refuses this server's credentials
// (401) or is down, which says nothing about the token.
func (p *Provider) introspect(ctx context.Context, token string) (_ map[string]any, err error) {
	endpoint, err := p.introspectionEndpoint(ctx)
	if err != nil {
		return nil, err
	}
	ctx, end, err := p.startTokenCall(ctx, opIntrospection, &p.stats.introspections)
	if err != nil {
		return nil, err
	}
	defer func() { end(err) }()
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: introspection: %v", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 §2.3.1: both are form-encoded before they are joined.
	req.SetBasicAuth(url.QueryEscape(p.introspection.ClientID), url.QueryEscape(p.introspection.ClientSecret))
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: introspection: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxDocumentBytes)
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, body)
		return nil, fmt.Errorf("%w: introspection at %s answered %s", ErrUnavailable, endpoint, resp.Status)
	}
	var answer map[string]any
	if err := json.NewDecoder(body).Decode(&answer); err != nil {
		return nil, fmt.Errorf("%w: decoding the introspection answer of %s: %v", ErrUnavailable, endpoint, err)
	}
	return answer, nil
}

// introspectionEndpoint is the configured endpoint or, without one, the
// discovered one.
func (p *Provider) introspectionEndpoint(ctx context.Context) (string, error) {
	if p.introspection.Endpoint != "" {
		return p.introspection.Endpoint, nil
	}
	m, err := p.discovery.metadata(ctx)
	if err != nil {
		return "", err
	}
	if m.IntrospectionEndpoint == "" {
		return "", fmt.Errorf("%w: %s announces no introspection_endpoint; configure one", ErrUnavailable, p.issuer)
	}
	return m.IntrospectionEndpoint, nil
}
