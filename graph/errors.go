package graph

import (
	"errors"
	"net/http"

	"go.uber.org/zap"
)

// apiError is an answer in the Graph error shape:
// {"error":{"code":...,"message":...}}.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

var (
	errUnauthenticated = &apiError{http.StatusUnauthorized, "unauthenticated", "Authentication is required"}
	errNotFound        = &apiError{http.StatusNotFound, "itemNotFound", "The resource could not be found"}
	errMethod          = &apiError{http.StatusMethodNotAllowed, "notAllowed", "The method is not allowed for the resource"}
	errInternal        = &apiError{http.StatusInternalServerError, "generalException", "An internal error occurred"}
)

// errorBody is the JSON of an apiError.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// fail answers err; anything that is not an apiError is logged and
// answered as a 500 that does not reveal it.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		h.logger.Error("graph request failed",
			zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Error(err))
		ae = errInternal
	}
	var body errorBody
	body.Error.Code = ae.code
	body.Error.Message = ae.message
	h.writeJSON(w, r, ae.status, body)
}
