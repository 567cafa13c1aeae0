package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxDocumentBytes bounds what is read from the provider.
const maxDocumentBytes = 1 << 20

// getJSON fetches url (with an optional bearer token) and decodes its JSON
// answer into dst. Any failure is ErrUnavailable except a refusal of a
// request carrying a token, which is ErrInvalidToken: RFC 6750 §3.1 answers
// a malformed token 400 (invalid_request), an unknown or expired one 401
// and one without the needed scope 403.
func (p *Provider) getJSON(ctx context.Context, url, token string, dst any) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxDocumentBytes)
	switch {
	case token != "" && refusesToken(resp.StatusCode):
		io.Copy(io.Discard, body)
		return fmt.Errorf("%w: %s answered %s", ErrInvalidToken, url, resp.Status)
	case resp.StatusCode != http.StatusOK:
		io.Copy(io.Discard, body)
		return fmt.Errorf("%w: %s answered %s", ErrUnavailable, url, resp.Status)
	}
	if err := json.NewDecoder(body).Decode(dst); err != nil {
		return fmt.Errorf("%w: decoding %s: %v", ErrUnavailable, url, err)
	}
	return nil
}

func refusesToken(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
		return true
	}
	return false
}
