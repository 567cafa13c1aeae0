package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// errMayNotShare is the answer to someone who sees an item but may not
// share it: a viewer, or a recipient (no resharing).
var errMayNotShare = &apiError{http.StatusForbidden, "accessDenied", "You may not share this item or manage its shares"}

// errMayNotManage is the answer to a member who may share an item but
// asks to change or delete someone else's share of it.
var errMayNotManage = &apiError{http.StatusForbidden, "accessDenied", "Only the share's creator or a manager of the space may change or delete it"}

// maxAncestors bounds the walk from an item up to its space's root.
const maxAncestors = storage.MaxNodeDepth

// sharedItem is the item a sharing request names, its space, and the
// caller's role there.
type sharedItem struct {
	space storage.Space
	node  storage.Node
	role  storage.Role
}

// shareableItem resolves the item itemID of drive driveID for u, who must
// be allowed to share it (storage.MayShare): an item u cannot see at all,
// or that does not exist, is 404, the same answer for both; one u sees
// but may not share (a viewer, a recipient of a share) is 403.
func (h *Handler) shareableItem(ctx context.Context, u storage.User, driveID, itemID string) (sharedItem, error) {
	it, err := h.visibleItem(ctx, u, driveID, itemID)
	if err != nil {
		return sharedItem{}, err
	}
	err = h.spaces.MayShare(u, it.space)
	if err == nil {
		return it, nil
	}
	if errors.Is(err, storage.ErrForbidden) {
		return sharedItem{}, errMayNotShare
	}
	received, err := h.receivedItem(ctx, u, it.node)
	if err != nil {
		return sharedItem{}, err
	}
	if received {
		return sharedItem{}, errMayNotShare
	}
	return sharedItem{}, errNotFound
}

// visibleItem finds the item in a space this handler serves, with u's
// role there (RoleNone when u is no member).
func (h *Handler) visibleItem(ctx context.Context, u storage.User, driveID, itemID string) (sharedItem, error) {
	storageID := h.store.StorageID()
	spaceID, ok := parseDriveID(storageID, driveID)
	if !ok {
		return sharedItem{}, errNotFound
	}
	ref, ok := parseItemID(storageID, itemID)
	if !ok || ref.spaceID != spaceID {
		return sharedItem{}, errNotFound
	}
	space, err := h.servedSpace(ctx, spaceID)
	if err != nil {
		return sharedItem{}, err
	}
	node, err := h.store.Node(ctx, spaceID, ref.nodeID)
	if errors.Is(err, storage.ErrNotFound) {
		return sharedItem{}, errNotFound
	}
	if err != nil {
		return sharedItem{}, fmt.Errorf("item %s: %w", itemID, err)
	}
	if reached, err := u.Scope.ReachesNode(ctx, h.store, node); err != nil || !reached {
		return sharedItem{}, cmp.Or(err, error(errNotFound))
	}
	return sharedItem{space: space, node: node, role: space.RoleOf(u)}, nil
}

// servedSpace returns space id if this handler serves it: a personal
// space, or a configured project space. Any other is errNotFound, as in
// davhandler, and so are its shares.
func (h *Handler) servedSpace(ctx context.Context, id string) (storage.Space, error) {
	s, err := h.store.Space(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return storage.Space{}, errNotFound
	}
	if err != nil {
		return storage.Space{}, fmt.Errorf("space %s: %w", id, err)
	}
	if !h.spaces.Serves(s) {
		return storage.Space{}, errNotFound
	}
	return s, nil
}

// receivedItem reports whether a live share with u gives u the item n: a
// share of n itself or of a folder above it.
func (h *Handler) receivedItem(ctx context.Context, u storage.User, n storage.Node) (bool, error) {
	if !u.Scope.ReachesShares() {
		return false, nil
	}
	received, err := h.shares.SharesWith(ctx, u)
	if err != nil {
		return false, fmt.Errorf("shares with %s: %w", u.ID, err)
	}
	shared := map[string]storage.Share{}
	for _, s := range received {
		if s.SpaceID == n.SpaceID {
			shared[s.NodeID] = s
		}
	}
	if len(shared) == 0 {
		return false, nil
	}
	judge := h.newJudge()
	for range maxAncestors {
		if s, ok := shared[n.ID]; ok {
			live, err := judge.Live(ctx, s)
			if err != nil || live {
				return live, err
			}
		}
		if n.ParentID == "" {
			return false, nil
		}
		parent, err := h.store.Node(ctx, n.SpaceID, n.ParentID)
		if err != nil {
			return false, fmt.Errorf("parent of %s: %w", n.ID, err)
		}
		n = parent
	}
	return false, nil
}

// newJudge judges the shares of one request (storage.ShareJudge).
func (h *Handler) newJudge() *storage.ShareJudge {
	return storage.NewShareJudge(shareReader{h.store, h.directory}, time.Now())
}

// shareReader is the store's spaces and the directory's users.
type shareReader struct {
	storage.Store
	storage.Directory
}
