package davhandler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

// davError is a protocol error answered with the Sabre-style XML error body.
type davError struct {
	status  int
	message string
	cause   error // logged, never sent
	// fault marks the server's own failures, logged at ERROR; anything a
	// client can cause at will (including 501, 502 and a full quota) is not,
	// so that no user can flood the error log.
	fault bool
	// allow lists the methods the resource allows, for a 405.
	allow string
	// condition is a DAV: precondition or postcondition element, as XML
	// with the d: prefix, sent inside d:error (RFC 4918 §16).
	condition string
	// header, when set, names the request header the refusal is about
	// (s:header, as oCIS sends it).
	header string
	// retryAfter, when set, is the Retry-After of a 503 in seconds.
	retryAfter int
	// reason, when set, says which limit refused the request, for the
	// log (refusallog.go); otherwise the cause or status tells.
	reason string
}

// serverFault reports whether the error is the server's fault rather than
// the request's.
func (e *davError) serverFault() bool {
	return e.fault || e.status == http.StatusInternalServerError
}

func (e *davError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%d %s: %v", e.status, e.message, e.cause)
	}
	return fmt.Sprintf("%d %s", e.status, e.message)
}

func (e *davError) Unwrap() error { return e.cause }

// errorf builds a davError with a formatted message.
func errorf(status int, format string, args ...any) *davError {
	return &davError{status: status, message: fmt.Sprintf(format, args...)}
}

// methodNotAllowed builds a 405 naming the methods the resource allows.
func methodNotAllowed(allow, message string) *davError {
	return &davError{status: http.StatusMethodNotAllowed, message: message, allow: allow}
}

const msgNotFound = "Resource not found"

var errNotFound = &davError{status: http.StatusNotFound, message: msgNotFound}

// exceptions names the Sabre exception class for each status the protocol uses.
var exceptions = map[int]string{
	http.StatusBadRequest:                   "BadRequest",
	http.StatusUnauthorized:                 "NotAuthenticated",
	http.StatusForbidden:                    "Forbidden",
	http.StatusNotFound:                     "NotFound",
	http.StatusMethodNotAllowed:             "MethodNotAllowed",
	http.StatusConflict:                     "Conflict",
	http.StatusLengthRequired:               "LengthRequired",
	http.StatusPreconditionFailed:           "PreconditionFailed",
	http.StatusRequestEntityTooLarge:        "RequestEntityTooLarge",
	http.StatusUnsupportedMediaType:         "UnsupportedMediaType",
	http.StatusRequestedRangeNotSatisfiable: "RequestedRangeNotSatisfiable",
	http.StatusLocked:                       "Locked",
	http.StatusNotImplemented:               "NotImplemented",
	http.StatusBadGateway:                   "BadGateway",
	http.StatusServiceUnavailable:           "ServiceUnavailable",
	http.StatusInsufficientStorage:          "InsufficientStorage",
}

// exceptionFor returns the Sabre exception class name for status.
func exceptionFor(status int) string {
	if name, ok := exceptions[status]; ok {
		return `Sabre\DAV\Exception\` + name
	}
	return `Sabre\DAV\Exception`
}

// WriteError answers status with the XML error body, for a refusal made
// in front of the handlers (a forged cross-site request) that must look
// like the handlers' own.
func WriteError(w http.ResponseWriter, r *http.Request, status int, message string) {
	writeErrorBody(w, r, status, message, "", "")
}

// writeErrorBody answers status with the XML error body (no body for HEAD).
func writeErrorBody(w http.ResponseWriter, r *http.Request, status int, message, condition, header string) {
	body := errorBody(status, message, condition, header)
	h := w.Header()
	h.Set("Content-Type", "application/xml; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Del("ETag")
	h.Del("Last-Modified")
	if r.ProtoMajor == 1 && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		// The client has not sent its body and will not: without this,
		// net/http (behind Caddy's body wrappers) would wait to drain it.
		h.Set("Connection", "close")
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		io.WriteString(w, body)
	}
}

func errorBody(status int, message, condition, header string) string {
	var b davxml.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">`)
	b.WriteString(condition)
	b.WriteString(`<s:exception>`)
	b.Text(exceptionFor(status))
	b.WriteString(`</s:exception><s:message>`)
	b.Text(message)
	b.WriteString("</s:message>")
	if header != "" {
		b.WriteString("<s:header>")
		b.Text(header)
		b.WriteString("</s:header>")
	}
	b.WriteString("</d:error>\n")
	return b.String()
}

// statusClientClosedRequest answers a request whose client gave up on it:
// no client reads it, and it is the status Caddy's reverse proxy (and
// nginx) log for one, a 4xx so that a client's cancel never counts as a
// server error.
const statusClientClosedRequest = 499

const msgClientClosed = "The client closed the request before it was answered"

// clientClosed is the answer to a request whose client has gone away (its
// context is cancelled: the connection closed, or the HTTP/2 stream was
// reset) when it would otherwise be the server's fault: a store call that
// the cancellation cut short has not failed.
func clientClosed(r *http.Request, de *davError) *davError {
	if !de.serverFault() || !errors.Is(r.Context().Err(), context.Canceled) {
		return de
	}
	return &davError{status: statusClientClosedRequest, message: msgClientClosed, cause: de}
}

const msgQuotaExceeded = "The space quota would be exceeded"

// msgTooManyUploads refuses a new upload past the open uploads cap.
const msgTooManyUploads = "Too many unfinished uploads: finish or cancel one first"

const msgUnavailable = "The storage is temporarily unavailable, please retry shortly"

// unavailableRetryAfter is the Retry-After, in seconds, of a 503 for a
// backend outage: short, since most outages are a failover or a restart.
const unavailableRetryAfter = 5

const msgDiskFull = "There is not enough space on the server to store the file"

// storageError maps a store error to the protocol error a client sees.
// Conflict-type messages are taken from the caller because the right words
// depend on the method.
func storageError(err error) *davError {
	var de *davError
	var locked *storage.LockedError
	switch {
	case errors.As(err, &de):
		return de
	case errors.As(err, &locked):
		// The store found a lock the handler's check did not see yet.
		de := tokenNotSubmitted(storage.Lock{Root: locked.Root})
		de.cause = err
		return de
	case errors.Is(err, storage.ErrNotFound):
		return &davError{status: http.StatusNotFound, message: msgNotFound, cause: err}
	case errors.Is(err, storage.ErrExists):
		return &davError{status: http.StatusPreconditionFailed, message: "The destination already exists and Overwrite is F", cause: err}
	case errors.Is(err, storage.ErrPrecondition):
		return &davError{status: http.StatusPreconditionFailed, message: "The resource has changed: precondition failed", cause: err}
	case errors.Is(err, storage.ErrConflict):
		return &davError{status: http.StatusConflict, message: "The parent collection does not exist or is not a collection", cause: err}
	case errors.Is(err, storage.ErrTooManyUploads):
		return &davError{status: http.StatusInsufficientStorage, message: msgTooManyUploads, cause: err}
	case errors.Is(err, storage.ErrNoSpace):
		// The operator must hear about a full disk; a quota is the user's.
		return &davError{status: http.StatusInsufficientStorage, message: msgDiskFull, cause: err, fault: true}
	case errors.Is(err, storage.ErrInsufficientStorage):
		return &davError{status: http.StatusInsufficientStorage, message: msgQuotaExceeded, cause: err}
	case errors.Is(err, storage.ErrCrossSpace):
		return &davError{status: http.StatusBadGateway, message: "cannot move across spaces", cause: err}
	case errors.Is(err, storage.ErrUnavailable):
		// A backend outage is the operator's to hear about, and a client
		// should come back rather than treat the request as failed.
		return &davError{status: http.StatusServiceUnavailable, message: msgUnavailable, cause: err, fault: true, retryAfter: unavailableRetryAfter}
	case errors.Is(err, storage.ErrInvalid):
		return &davError{status: http.StatusBadRequest, message: "invalid request: " + err.Error(), cause: err}
	}
	return &davError{status: http.StatusInternalServerError, message: "internal server error", cause: err}
}

// withCause returns a copy of de that logs cause.
func withCause(de *davError, cause error) *davError {
	c := *de
	c.cause = cause
	return &c
}

// tokenNotSubmitted is the 423 of a change to what l locks, naming its root
// (RFC 4918 §16, lock-token-submitted).
func tokenNotSubmitted(l storage.Lock) *davError {
	var b davxml.Builder
	b.WriteString("<d:lock-token-submitted><d:href>")
	b.Text(l.Root)
	b.WriteString("</d:href></d:lock-token-submitted>")
	return &davError{status: http.StatusLocked, condition: b.String(),
		message: "The resource is locked: submit the lock's token in an If header"}
}

// bodyReadError answers a body the client did not send in full: 413 when a
// size limit (http.MaxBytesReader, Caddy's request_body max_size) cut it,
// 499 when the client abandoned it.
func bodyReadError(err error) error {
	if tooLarge, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &davError{status: http.StatusRequestEntityTooLarge, cause: err,
			message: fmt.Sprintf("The request body is larger than the server accepts (%d bytes)", tooLarge.Limit)}
	}
	if streamCancelled(err) {
		return &davError{status: statusClientClosedRequest, message: msgClientClosed, cause: err}
	}
	return &davError{status: http.StatusBadRequest, message: "reading request body: " + err.Error(), cause: err}
}
