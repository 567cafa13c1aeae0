package davhandler

import (
	"context"
	"errors"
	"net/http"

	"github.com/davspaces/davspaces/storage"
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
