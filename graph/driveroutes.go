package graph

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/davspaces/davspaces/internal/origin"
	"github.com/davspaces/davspaces/shareid"
	"github.com/davspaces/davspaces/storage"
)

// drivePrefixes are where a single drive is read: ownCloud Web asks
// v1beta1 (packages/web-client/src/graph/drives), other clients v1.0.
var drivePrefixes = []string{drivesPrefix, "/graph/v1.0/drives/"}

// driveRoute finds the endpoint of GET drives/{drive} and GET
// drives/{drive}/items/{item}; ok is false for any other path.
func (h *Handler) driveRoute(method, p string) (endpoint, string, bool) {
	var rest string
	found := false
	for _, prefix := range drivePrefixes {
		if rest, found = strings.CutPrefix(p, prefix); found {
			break
		}
	}
	if !found {
		return nil, "", false
	}
	var ep endpoint
	switch seg := strings.Split(rest, "/"); {
	case len(seg) == 1 && seg[0] != "":
		ep = func(w http.ResponseWriter, r *http.Request, u storage.User) error { return h.getDrive(w, r, u, seg[0]) }
	case len(seg) == 3 && seg[0] != "" && seg[1] == "items" && seg[2] != "":
		ep = func(w http.ResponseWriter, r *http.Request, u storage.User) error {
			return h.getDriveItem(w, r, u, seg[0], seg[2])
		}
	default:
		return nil, "", false
	}
	if method != http.MethodGet && method != http.MethodHead {
		return nil, allowRead, true
	}
	return ep, allowRead, true
}

// getDrive answers one drive u sees, as /me/drives lists it: a space u
// is a member of, the Shares drive, or the mount point of an item shared
// with u. Any other id is 404, whether or not the space exists.
func (h *Handler) getDrive(w http.ResponseWriter, r *http.Request, u storage.User, id string) error {
	ctx, base := r.Context(), origin.Of(r)
	if shareID, inJail := shareid.Parse(id); inJail {
		if shareID == "" {
			h.writeJSON(w, r, http.StatusOK, h.sharesDrive(base))
			return nil
		}
		mounts, err := h.mountDrives(ctx, base, u)
		if err != nil {
			return err
		}
		for _, d := range mounts {
			if d.ID == id {
				h.writeJSON(w, r, http.StatusOK, d)
				return nil
			}
		}
		return errNotFound
	}
	spaceID, ok := parseDriveID(h.store.StorageID(), id)
	if !ok {
		return errNotFound
	}
	s, ok, err := h.visibleSpace(ctx, u, spaceID)
	if err != nil || !ok {
		return orNotFound(err)
	}
	d, err := h.drive(ctx, base, s)
	if err != nil {
		return err
	}
	h.writeJSON(w, r, http.StatusOK, d)
	return nil
}

// visibleSpace finds spaceID among the spaces /me/drives lists for u, so
// that a drive read alone is answered exactly when it is listed.
func (h *Handler) visibleSpace(ctx context.Context, u storage.User, spaceID string) (storage.Space, bool, error) {
	spaces, err := h.visibleSpaces(ctx, u)
	if err != nil {
		return storage.Space{}, false, err
	}
	for _, s := range spaces {
		if s.ID == spaceID {
			return s, true, nil
		}
	}
	return storage.Space{}, false, nil
}

// orNotFound is err, or errNotFound when there is none.
func orNotFound(err error) error {
	if err != nil {
		return err
	}
	return errNotFound
}

// getDriveItem answers one item: in the Shares drive, a mount point as
// sharedWithMe lists it (ownCloud Web opens "Shared with me" entries so);
// elsewhere an item of a space u is a member of, or one shared with u.
func (h *Handler) getDriveItem(w http.ResponseWriter, r *http.Request, u storage.User, driveID, itemID string) error {
	ctx, base := r.Context(), origin.Of(r)
	if _, inJail := shareid.Parse(driveID); inJail {
		mounts, err := h.received(ctx, u)
		if err != nil {
			return err
		}
		names := h.names(ctx)
		for _, m := range mounts {
			if m.id == itemID {
				h.writeJSON(w, r, http.StatusOK, h.mountItem(m, base, names))
				return nil
			}
		}
		return errNotFound
	}
	it, err := h.visibleItem(ctx, u, driveID, itemID)
	if err != nil {
		return err
	}
	if it.role == storage.RoleNone {
		received, err := h.receivedItem(ctx, u, it.node)
		if err != nil || !received {
			return orNotFound(err)
		}
	}
	d, err := h.spaceItem(ctx, base, it)
	if err != nil {
		return err
	}
	h.writeJSON(w, r, http.StatusOK, d)
	return nil
}

// spaceItem describes an item in its own space, with its parent.
func (h *Handler) spaceItem(ctx context.Context, base string, it sharedItem) (driveItem, error) {
	storageID := h.store.StorageID()
	d := driveItem{
		ID:              formatItemID(storageID, it.space.ID, it.node.ID),
		ParentReference: &itemReference{DriveID: formatDriveID(storageID, it.space.ID), DriveType: string(it.space.Type)},
		WebDavURL:       base + "/dav/spaces/" + formatItemID(storageID, it.space.ID, it.node.ID),
	}
	itemFacts(&d, it.node)
	if it.node.ParentID != "" {
		d.ParentReference.ID = formatItemID(storageID, it.space.ID, it.node.ParentID)
		if it.role != storage.RoleNone {
			// The path tells where the item is: only for members.
			parent, err := h.parentPath(ctx, it.node)
			if err != nil {
				return driveItem{}, fmt.Errorf("item %s: %w", d.ID, err)
			}
			d.ParentReference.Path = parent
		}
	}
	return d, nil
}
