package davhandler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// Recipients reach what was shared with them three ways: through the
// Shares drive (/dav/spaces/<shareid.DriveID>/<mount name>/…), through a
// mount point's id (/dav/spaces/<shareid.Mount(share)>/…), and through the
// resource id of the item or of a node below it (/dav/spaces/<id>,
// /dav/meta/<id>). Each way gives what the user's live shares of the item
// allow (shareAccess), never their role in the item's space, and none
// reaches above the item. Every share is accepted at once: there is no
// pending state. Nothing is kept beyond a request, so that a share
// deleted, expired, or whose creator may no longer share is gone at the
// recipient's next request.

// sharingStore is a store that keeps shares and the users who signed in
// (whose groups judge a share's creator): a storage.Backend is one.
type sharingStore interface {
	storage.Store
	storage.Shares
	storage.Directory
}

// shareReach is how a recipient reached a target through a share.
type shareReach struct {
	// root is the shared item the access comes from; "" for a member.
	root string
	// mounted: reached through the Shares drive or a mount point's id,
	// where root is a mount point (oc:permissions "M").
	mounted bool
}

// atNode is access a at node nodeID: at the shared item itself a
// recipient deletes, moves and renames nothing, since the item is its
// owner's and the mount point stays where the share put it.
func (r shareReach) atNode(a access, nodeID string, exists bool) access {
	if r.root != "" && exists && nodeID == r.root {
		a.may &^= permDelete
	}
	return a
}

// union is what a and b allow together: a user's several shares of one
// item (their own and their groups') give the strongest role.
func (a access) union(b access) access {
	return access{may: a.may | b.may, viaShare: a.viaShare || b.viaShare}
}

// received is an item shared with the caller, and what their live shares
// of it give.
type received struct {
	space storage.Space
	item  storage.Node
	// shareIDs are the ids of the caller's live shares of the item, oldest
	// first: the first names its mount point, and each one's mount id
	// reaches it.
	shareIDs []string
	// access is the union of what the shares give (the strongest role).
	access access
	// name is the mount point's name in the Shares drive: the item's,
	// made unique ("name (2)") in the order the shares were made.
	name string
}

// receivedShares returns the items shared with user by others' live
// shares that pick keeps (nil keeps all), as storage.ReceivedItems lists
// them for every protocol, each with what its shares give together.
func (h *Handler) receivedShares(ctx context.Context, user storage.User, pick func(storage.Share) bool) ([]received, error) {
	ss, ok := h.store.(sharingStore)
	if !ok {
		return nil, nil
	}
	items, err := storage.ReceivedItems(ctx, ss, storage.NewShareJudge(ss, time.Now()), user, h.spaces.Serves, pick)
	if err != nil {
		return nil, err
	}
	out := make([]received, len(items))
	for i, it := range items {
		r := received{space: it.Space, item: it.Item, name: it.Name}
		for _, s := range it.Shares {
			r.shareIDs = append(r.shareIDs, s.ID)
			r.access = r.access.union(shareAccess(s.Role))
		}
		out[i] = r
	}
	return out, nil
}

// sharedAccess is what user's live shares give on node nodeID of space,
// a space they are no member of: the shares of the node or of a folder
// above it. errNotFound when none reaches it, so that a node above a
// shared item, or beside it, stays as absent as any other.
func (h *Handler) sharedAccess(ctx context.Context, user storage.User, space storage.Space, nodeID string) (access, shareReach, error) {
	rs, err := h.receivedShares(ctx, user, func(s storage.Share) bool { return s.SpaceID == space.ID })
	if err != nil {
		return access{}, shareReach{}, err
	}
	if len(rs) == 0 {
		return access{}, shareReach{}, errNotFound
	}
	byItem := make(map[string]*received, len(rs))
	for i := range rs {
		byItem[rs[i].item.ID] = &rs[i]
	}
	var best *received
	for id, depth := nodeID, 0; id != ""; depth++ {
		if r := byItem[id]; r != nil && (best == nil || r.access.has(best.access.may)) {
			// The stronger share; of equal ones, the higher item.
			best = r
		}
		if depth == storage.MaxNodeDepth {
			break
		}
		n, err := h.store.Node(ctx, space.ID, id)
		if err != nil {
			return access{}, shareReach{}, err
		}
		id = n.ParentID
	}
	if best == nil {
		return access{}, shareReach{}, errNotFound
	}
	noteSpace(ctx, space.ID)
	return best.access, shareReach{root: best.item.ID}, nil
}

// resolveSharesDrive resolves a path in the Shares drive: its root, a
// mount point by name below it, or (shareID set) a mount point by its id.
func (h *Handler) resolveSharesDrive(ctx context.Context, user storage.User, dp davPath, shareID string) (base, error) {
	if !user.Scope.ReachesShares() {
		return base{}, errNotFound
	}
	var pick func(storage.Share) bool
	if shareID != "" {
		var err error
		if pick, err = h.sameItemAs(ctx, shareID); err != nil {
			return base{}, err
		}
	}
	rs, err := h.receivedShares(ctx, user, pick)
	if err != nil {
		return base{}, err
	}
	b := base{hrefPath: dp.base, segments: dp.segments}
	var mount *received
	switch {
	case shareID != "":
		mount = findMount(rs, func(r *received) bool { return slices.Contains(r.shareIDs, shareID) })
	case len(dp.segments) == 0:
		b.sharesRoot = append([]received{}, rs...)
		return b, nil
	default:
		mount = findMount(rs, func(r *received) bool { return r.name == dp.segments[0] })
		if mount == nil && len(dp.segments) == 1 {
			// A free name in the root: the target of a PUT or MKCOL
			// there, which the root's access refuses.
			b.sharesRoot = append([]received{}, rs...)
			return b, nil
		}
		if mount != nil {
			b.hrefPath += "/" + dp.segments[0]
			b.segments = dp.segments[1:]
		}
	}
	if mount == nil {
		return base{}, errNotFound
	}
	noteSpace(ctx, mount.space.ID)
	b.space, b.nodeID, b.access = mount.space, mount.item.ID, mount.access
	b.share = shareReach{root: mount.item.ID, mounted: true}
	return b, nil
}

// sameItemAs keeps the shares of the item that share shareID shares, so
// that a mount point's id reaches it with the strongest of the caller's
// shares of it. A share the store does not know keeps none.
func (h *Handler) sameItemAs(ctx context.Context, shareID string) (func(storage.Share) bool, error) {
	ss, ok := h.store.(sharingStore)
	if !ok {
		return nil, errNotFound
	}
	s, err := ss.Share(ctx, shareID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("share %s: %w", shareID, err)
	}
	return func(o storage.Share) bool { return o.SpaceID == s.SpaceID && o.NodeID == s.NodeID }, nil
}

func findMount(rs []received, match func(*received) bool) *received {
	for i := range rs {
		if match(&rs[i]) {
			return &rs[i]
		}
	}
	return nil
}
