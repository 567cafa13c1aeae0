package davhandler

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/davspaces/davspaces/storage"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// The reasons a refusal is logged with: the settings and rules a user
// may ask an administrator about, each a fixed word an administrator can
// search the log for.
const (
	reasonQuota            = "quota"
	reasonDiskFull         = "disk_full"
	reasonMaxOpenUploads   = "max_open_uploads"
	reasonLocked           = "locked"
	reasonLocksPerUser     = "locks_per_user"
	reasonLockBytesPerUser = "lock_bytes_per_user"
	reasonLocksPerResource = "locks_per_resource"
	reasonLockOwnerMax     = "lock_owner_max"
	reasonMaxXMLBody       = "max_xml_body"
	reasonXMLDepth         = "xml_depth"
	reasonUploadLength     = "upload_length"
	reasonBodyTooLarge     = "request_body_max_size"
	reasonLinkPasswords    = "link_password_failures"
	reasonPasswordChecks   = "password_checks"
	reasonPathSize         = "path_size"
	reasonOther            = "other"
)

// withReason marks de as a refusal for reason, for the log.
func withReason(de *davError, reason string) *davError {
	de.reason = reason
	return de
}

// refusalReason says why a request was refused: the reason its davError
// carries, else what the store's error or the status tells.
func refusalReason(de *davError, err error) string {
	if de.reason != "" {
		return de.reason
	}
	for _, r := range []struct {
		err    error
		reason string
	}{
		// The specific limits before the ErrInsufficientStorage and
		// ErrLocked they wrap.
		{storage.ErrTooManyUploads, reasonMaxOpenUploads},
		{storage.ErrLockBytesQuota, reasonLockBytesPerUser},
		{storage.ErrLockQuota, reasonLocksPerUser},
		{storage.ErrTooManyLocks, reasonLocksPerResource},
		{storage.ErrNoSpace, reasonDiskFull},
	} {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	switch de.status {
	case http.StatusInsufficientStorage:
		return reasonQuota
	case http.StatusLocked:
		return reasonLocked
	case http.StatusRequestEntityTooLarge:
		return reasonBodyTooLarge
	}
	return reasonOther
}

// requestParties are who made a request and in which space, noted as the
// request is served so that the log of its refusal can name them. They
// are ids only: never a token, a password or a file's content.
type requestParties struct {
	user, space string
}

type partiesKey struct{}

// withParties returns r carrying the parties of the request, to be noted.
func withParties(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), partiesKey{}, new(requestParties)))
}

// partiesOf returns the parties noted in ctx, or nil.
func partiesOf(ctx context.Context) *requestParties {
	p, _ := ctx.Value(partiesKey{}).(*requestParties)
	return p
}

// noteUser notes the authenticated user of the request.
func noteUser(ctx context.Context, userID string) {
	if p := partiesOf(ctx); p != nil {
		p.user = userID
	}
}

// noteSpace notes the space the request acts in, once the user may see
// it: the log then never names a space to the wrong request.
func noteSpace(ctx context.Context, spaceID string) {
	if p := partiesOf(ctx); p != nil {
		p.space = spaceID
	}
}

// fail answers err. Protocol errors get their own status; anything else is a
// server fault, answered as 500.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	de := clientClosed(r, storageError(err))
	h.logFailure(r, de, err)
	if de.status == http.StatusMethodNotAllowed {
		// RFC 9110 §15.5.6: a 405 must say what is allowed.
		w.Header().Set("Allow", h.withLocks(cmp.Or(de.allow, allowedOnVirtual)))
	}
	if de.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(de.retryAfter))
	}
	writeErrorBody(w, r, de.status, de.message, de.condition, de.header)
}

// logFailure logs the server's own faults at ERROR and the refusals of bad
// requests at DEBUG, each with the user and space it concerns and the
// reason, so that an administrator can answer "why was I refused". The
// path is logged without its query, which is no business of the log.
func (h *Handler) logFailure(r *http.Request, de *davError, err error) {
	level, msg := zapcore.DebugLevel, "webdav request refused"
	if de.serverFault() && r.Context().Err() == nil {
		// A failure after the client went away is no fault to report.
		level, msg = zapcore.ErrorLevel, "webdav request failed"
	}
	c := h.logger.Check(level, msg)
	if c == nil {
		return
	}
	var parties requestParties
	if p := partiesOf(r.Context()); p != nil {
		parties = *p
	}
	c.Write(zap.String("method", r.Method), zap.String("path", r.URL.Path),
		zap.Int("status", de.status), zap.String("user", parties.user), zap.String("space", parties.space),
		zap.String("reason", refusalReason(de, err)), zap.Error(err))
}
