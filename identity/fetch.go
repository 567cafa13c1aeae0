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
	return p.do(ctx, url, token, func(body io.Reader) error {
		if err := json.NewDecoder(io.LimitReader(body, maxDocumentBytes)).Decode(dst); err != nil {
			return fmt.Errorf("%w: decoding %s: %v", ErrUnavailable, url, err)
		}
		return nil
	})
}

// get fetches url as getJSON does and returns its answer as it came, at
// most maxDocumentBytes: a longer one is an error, not cut short.
func (p *Provider) get(ctx context.Context, url, token string) ([]byte, error) {
	var body []byte
	err := p.do(ctx, url, token, func(r io.Reader) error {
		var err error
		body, err = io.ReadAll(io.LimitReader(r, maxDocumentBytes+1))
		switch {
		case err != nil:
			return fmt.Errorf("%w: reading %s: %v", ErrUnavailable, url, err)
		case len(body) > maxDocumentBytes:
			return fmt.Errorf("%w: %s is larger than %d bytes", ErrUnavailable, url, maxDocumentBytes)
		}
		return nil
	})
	return body, err
}

// do sends a GET to url and hands a 200 answer's body to read, which
// bounds what it reads; see getJSON for the errors.
func (p *Provider) do(ctx context.Context, url, token string, read func(io.Reader) error) error {
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
	switch {
	case token != "" && refusesToken(resp.StatusCode):
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxDocumentBytes))
		return fmt.Errorf("%w: %s answered %s", ErrInvalidToken, url, resp.Status)
	case resp.StatusCode != http.StatusOK:
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxDocumentBytes))
		return fmt.Errorf("%w: %s answered %s", ErrUnavailable, url, resp.Status)
	}
	return read(resp.Body)
}

func refusesToken(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
		return true
	}
	return false
}
