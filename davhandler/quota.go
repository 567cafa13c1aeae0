package davhandler

import (
	"context"
	"fmt"
	"net/http"

	"github.com/davspaces/davspaces/storage"
)

// checkFreeQuota refuses growing the space by growth bytes when its free
// quota (the quota less the tree size of its root) cannot hold them. It is
// an early answer for a size announced before the bytes arrive; the store
// checks again when it commits them.
func (h *Handler) checkFreeQuota(ctx context.Context, space storage.Space, growth int64) error {
	if space.Quota < 0 || growth <= 0 {
		return nil
	}
	free, _, err := h.freeQuota(ctx, space)
	if err != nil {
		return err
	}
	if growth > free {
		return &davError{status: http.StatusInsufficientStorage, message: msgQuotaExceeded,
			cause: fmt.Errorf("%d of %d bytes free, %d more", free, space.Quota, growth)}
	}
	return nil
}

// freeQuota returns what the space's quota leaves free (never negative)
// after its files, dead properties and the reservations of unfinished
// uploads; limited=false when the space has no quota. PUT, PROPFIND, TUS
// and the chunked uploads all ask it.
func (h *Handler) freeQuota(ctx context.Context, space storage.Space) (free int64, limited bool, err error) {
	if space.Quota < 0 {
		return 0, false, nil
	}
	u, err := h.store.Usage(ctx, space.ID)
	if err != nil {
		return 0, true, fmt.Errorf("reading the usage of space %s: %w", space.ID, err)
	}
	free, limited = u.Free(space.Quota)
	return free, limited, nil
}
