package davhandler

import (
	"context"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

// A space's free quota, as every request that writes or tells of it sees
// it. The sum itself is the store contract's (storage.Usage.Free and
// Check, which the stores and the Graph API use too); here it is only
// read. PROPFIND's quota properties use the same Usage, read once per
// request (propContext.spaceUsage).

// checkFreeQuota refuses growing the space by growth bytes and nodes new
// nodes when its quota cannot hold them (the bytes even once its trash
// and versions are given up; the nodes under the cap the quota sets,
// storage.NodeCap), with storage.ErrInsufficientStorage (507). It is an
// early answer for a size announced before the bytes arrive, so that a
// client does not send a body the commit would refuse; the store checks
// again when it commits them, purging the oldest trash and versions where
// that makes room. A space without a quota is capped by the store alone.
func (h *Handler) checkFreeQuota(ctx context.Context, space storage.Space, growth, nodes int64) error {
	if space.Quota < 0 || growth <= 0 && nodes <= 0 {
		return nil // nothing to refuse: spare the read
	}
	u, err := h.spaceUsage(ctx, space)
	if err != nil {
		return err
	}
	if err := u.CheckRoom(space.Quota, growth); err != nil {
		return err
	}
	return storage.CheckNodes(u.Nodes, storage.NodeCap(space.Quota, 0), nodes)
}

// freeQuota returns the room the space's quota leaves an upload (never
// negative): after its files, dead properties and the reservations of
// unfinished uploads, with the trash and versions it would give up for
// the upload (storage.Usage.Room); limited=false when the space has no
// quota. TUS (Tus-Max-Size) and the chunked uploads ask it.
func (h *Handler) freeQuota(ctx context.Context, space storage.Space) (free int64, limited bool, err error) {
	if space.Quota < 0 {
		return 0, false, nil // no limit: spare the read
	}
	u, err := h.spaceUsage(ctx, space)
	if err != nil {
		return 0, true, err
	}
	free, limited = u.Room(space.Quota)
	return free, limited, nil
}

// spaceUsage reads what space holds against its quota.
func (h *Handler) spaceUsage(ctx context.Context, space storage.Space) (storage.Usage, error) {
	u, err := h.store.Usage(ctx, space.ID)
	if err != nil {
		return u, fmt.Errorf("reading the usage of space %s: %w", space.ID, err)
	}
	return u, nil
}
