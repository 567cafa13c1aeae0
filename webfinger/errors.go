package webfinger

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/davspaces/davspaces/identity"
)

// apiError is an error answer: an OAuth-style JSON body (RFC 6749 §5.2
// field names, which clients of bearer-protected endpoints already parse).
type apiError struct {
	status      int
	code        string
	description string
	// retryAfter is the Retry-After of a 429 or 503 in seconds; 0 means
	// the default, retryAfter.
	retryAfter int
}

var (
	errBadResource   = &apiError{status: http.StatusBadRequest, code: "invalid_request", description: "absent or malformed 'resource' parameter"}
	errBadQuery      = &apiError{status: http.StatusBadRequest, code: "invalid_request", description: "malformed query string"}
	errMethod        = &apiError{status: http.StatusMethodNotAllowed, code: "invalid_request", description: "method not allowed; use GET or HEAD"}
	errMalformedAuth = &apiError{status: http.StatusUnauthorized, code: "invalid_token", description: "malformed bearer token"}
	errInvalidToken  = &apiError{status: http.StatusUnauthorized, code: "invalid_token", description: "the access token is invalid or expired"}
	errUnavailable   = &apiError{status: http.StatusServiceUnavailable, code: "temporarily_unavailable", description: "the identity provider is unavailable; retry later"}
)

// tooManyTokens answers a client over its budget of new tokens: 429, not
// 401, since the token was not even looked at.
func tooManyTokens(err *identity.TooManyTokensError) *apiError {
	return &apiError{
		status:      http.StatusTooManyRequests,
		code:        "temporarily_unavailable",
		description: "too many new tokens from this client; retry later",
		retryAfter:  err.RetryAfter(),
	}
}

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
	case http.StatusServiceUnavailable, http.StatusTooManyRequests:
		h.Set("Retry-After", strconv.Itoa(cmp.Or(e.retryAfter, retryAfter)))
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
