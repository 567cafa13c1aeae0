package graph

import (
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// apiError is an answer in the Graph error shape:
// {"error":{"code":...,"message":...}}.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

// invalidRequest is a 400 for a query the endpoint cannot answer.
func invalidRequest(message string) *apiError {
	return &apiError{http.StatusBadRequest, "invalidRequest", message}
}

var (
	errUnauthenticated = &apiError{http.StatusUnauthorized, "unauthenticated", "Authentication is required"}
	errScopeReadOnly   = &apiError{http.StatusForbidden, "accessDenied", "This app password is read-only"}
	errNotFound        = &apiError{http.StatusNotFound, "itemNotFound", "The resource could not be found"}
	errMethod          = &apiError{http.StatusMethodNotAllowed, "notAllowed", "The method is not allowed for the resource"}
	errInternal        = &apiError{http.StatusInternalServerError, "generalException", "An internal error occurred"}
	errUnavailable     = &apiError{http.StatusServiceUnavailable, "serviceNotAvailable", "The storage is temporarily unavailable, please retry shortly"}
	errPathSize        = &apiError{http.StatusRequestURITooLong, "invalidRequest",
		fmt.Sprintf("A path has at most %d bytes and %d names", storage.MaxPathBytes, storage.MaxPathSegments)}
)

// unavailableRetryAfter is the Retry-After, in seconds, of a 503 for a
// storage outage, as the WebDAV handler answers it.
const unavailableRetryAfter = "5"

// errorBody is the JSON of an apiError.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// fail answers err; anything that is not an apiError is logged and
// answered as a 500 that does not reveal it, or as a 503 asking to retry
// when the store's backend cannot be reached.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		h.logger.Error("graph request failed",
			zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Error(err))
		ae = errInternal
		if errors.Is(err, storage.ErrUnavailable) {
			ae = errUnavailable
			w.Header().Set("Retry-After", unavailableRetryAfter)
		}
	}
	var body errorBody
	body.Error.Code = ae.code
	body.Error.Message = ae.message
	h.writeJSON(w, r, ae.status, body)
}
