package davhandler

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// Resolution of a public link's paths: the link a request acts through
// (carried in its context) and the target a path below the link names.
// Serving a link (its password, file drop, uploads) is publiclink.go.

type linkKey struct{}

// withLink notes that the request acts through link: resolve then serves
// its public paths, and no other.
func withLink(ctx context.Context, link *storage.Share) context.Context {
	return context.WithValue(ctx, linkKey{}, link)
}

// linkOf returns the link a request acts through, nil for a user's.
func linkOf(ctx context.Context) *storage.Share {
	l, _ := ctx.Value(linkKey{}).(*storage.Share)
	return l
}

// linkCaller is the pseudo user a request through link acts as.
func linkCaller(link *storage.Share) storage.User {
	return storage.User{ID: linkCallerPrefix + link.ID, DisplayName: link.DisplayName}
}

// resolvePublic resolves a public path of the request's link: its item
// and the names below it, with the link's access. The item itself cannot
// be deleted, moved or replaced through its link. In a file drop a name
// that is taken is replaced with a free one ("name (2).ext"), as oCIS
// does, so that an upload never learns what the drop holds.
func (h *Handler) resolvePublic(ctx context.Context, dp davPath) (*target, error) {
	link := linkOf(ctx)
	if link == nil || link.Token != dp.token {
		return nil, errNotFound
	}
	drop := link.Role == storage.ShareFileDrop
	if drop && len(dp.segments) > 1 {
		return nil, errNotFound
	}
	space, err := h.linkSpace(ctx, link)
	if err != nil {
		return nil, err
	}
	nodes, err := h.walk(ctx, space.ID, link.NodeID, dp.segments)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	t := newTarget(space, linkAccess(link.Role), dp, nodes)
	if t.isBase {
		t.access.may &^= permDelete
	}
	if drop && t.exists && !t.isBase {
		if err := h.takeFreeName(ctx, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// linkSpace loads the space of a link's item: one this handler serves.
func (h *Handler) linkSpace(ctx context.Context, link *storage.Share) (storage.Space, error) {
	space, err := h.store.Space(ctx, link.SpaceID)
	if errors.Is(err, storage.ErrNotFound) {
		return space, errNotFound
	}
	if err != nil {
		return space, err
	}
	if !h.spaces.Serves(space) {
		return space, errNotFound
	}
	noteSpace(ctx, space.ID)
	return space, nil
}

// maxFreeNameTries bounds the search for a free name in a file drop.
const maxFreeNameTries = 1000

// takeFreeName turns t, a taken name in a folder, into the first free
// one of "name (2).ext", "name (3).ext"…
func (h *Handler) takeFreeName(ctx context.Context, t *target) error {
	stem, ext := splitExt(t.name)
	for i := 2; i < maxFreeNameTries; i++ {
		name := fmt.Sprintf("%s (%d)%s", stem, i, ext)
		if len(name) > maxNameBytes {
			break
		}
		_, err := h.store.Child(ctx, t.space.ID, t.parent.ID, name)
		if errors.Is(err, storage.ErrNotFound) {
			t.hrefPath = strings.TrimSuffix(t.hrefPath, t.name) + name
			t.name, t.exists, t.node = name, false, storage.Node{}
			return nil
		}
		if err != nil {
			return err
		}
	}
	return errorf(http.StatusPreconditionFailed, "No free name is left for this file in the drop")
}

// splitExt splits a file name before its extension; a leading dot is no
// extension's.
func splitExt(name string) (stem, ext string) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return name, ""
	}
	return name[:i], name[i:]
}

// linkCallerPrefix starts the pseudo user id of a request through a link:
// no user id contains a slash (storage.ValidUserID), so uploads, and
// whatever else is kept per user, of a link are never anybody's.
const linkCallerPrefix = "link/"
