package webfinger

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// apiError is an error answer: an OAuth-style JSON body (RFC 6749 §5.2
// field names, which clients of bearer-protected endpoints already parse).
type apiError struct {
	status      int
	code        string
	description string
}

var (
	errBadResource   = &apiError{http.StatusBadRequest, "invalid_request", "absent or malformed 'resource' parameter"}
	errBadQuery      = &apiError{http.StatusBadRequest, "invalid_request", "malformed query string"}
	errMethod        = &apiError{http.StatusMethodNotAllowed, "invalid_request", "method not allowed; use GET or HEAD"}
	errMalformedAuth = &apiError{http.StatusUnauthorized, "invalid_token", "malformed bearer token"}
	errInvalidToken  = &apiError{http.StatusUnauthorized, "invalid_token", "the access token is invalid or expired"}
	errUnavailable   = &apiError{http.StatusServiceUnavailable, "temporarily_unavailable", "the identity provider is unavailable; retry later"}
	errTooManyTokens = &apiError{http.StatusTooManyRequests, "temporarily_unavailable", "too many new tokens from this client; retry later"}
)

// retryAfter is the Retry-After of a 503: long enough for a flapping
// provider to recover, short enough that a client does not give up on the
// sign-in.
const retryAfter = 5

// writeError answers with e. Descriptions are constants free of quotes and
// control characters, so they can go into WWW-Authenticate unescaped.
func writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	h := w.Header()
	switch e.status {
	case http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer error="`+e.code+`", error_description="`+e.description+`"`)
	case http.StatusServiceUnavailable:
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	case http.StatusTooManyRequests:
		if h.Get("Retry-After") == "" {
			h.Set("Retry-After", strconv.Itoa(retryAfter))
		}
	}
	body, _ := json.Marshal(struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}{e.code, e.description})
	body = append(body, '\n')
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(e.status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}
