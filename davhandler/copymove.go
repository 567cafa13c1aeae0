package davhandler

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

func (h *Handler) handleCopyMove(w http.ResponseWriter, r *http.Request, req *request) error {
	move := r.Method == "MOVE"
	overwrite, err := parseOverwrite(r)
	if err != nil {
		return err
	}
	shallow, err := parseTransferDepth(r, move)
	if err != nil {
		return err
	}
	dstPath, err := parseDestination(r)
	if err != nil {
		return err
	}
	src, err := h.resolveExisting(r.Context(), req.user, req.path)
	if err != nil {
		return err
	}
	dst, err := h.resolve(r.Context(), req.user, dstPath)
	if err != nil {
		return err
	}
	tr, err := transferOf(src, dst, move)
	if err != nil {
		return err
	}
	tr.Overwrite, tr.Shallow = overwrite, shallow
	// The preconditions are about the request URI, the source; the store
	// checks them again atomically with the transfer.
	if tr.Conditions, err = h.changeConditions(r, req, src, transferred(src, dst, move)...); err != nil {
		return err
	}
	if dst.exists && !overwrite {
		return errorf(http.StatusPreconditionFailed, "The destination exists and Overwrite is F")
	}
	counted := func(bool) {}
	if dst.exists {
		if counted, err = h.brakeDelete(r, req.user, dst.space, dst.node); err != nil {
			return err
		}
	}
	var node storage.Node
	var replaced bool
	if move {
		node, replaced, err = h.store.Move(r.Context(), src.space.ID, tr)
	} else {
		node, replaced, err = h.store.Copy(r.Context(), src.space.ID, tr)
	}
	counted(err == nil && replaced)
	if errors.Is(err, storage.ErrConflict) {
		// The destination's parent was checked above, so the store refused
		// to put a folder inside itself.
		return &davError{status: http.StatusConflict, message: "can not " + strings.ToLower(r.Method) + " a folder into one of its children", cause: err}
	}
	if err != nil {
		return err
	}
	h.answerPlaced(r.Context(), w, node, replaced)
	return nil
}

// answerPlaced answers a request that put node in place (COPY, MOVE, a
// restore from the trash): 204 when it replaced an existing target, 201
// when it created one.
func (h *Handler) answerPlaced(ctx context.Context, w http.ResponseWriter, node storage.Node, replaced bool) {
	h.setNodeHeaders(ctx, w, node)
	if replaced {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusCreated)
	}
}

// placement names where a transfer to dst lands: in place of the node it
// replaces, or under its new name in the existing parent. COPY, MOVE and a
// restore from the trash place the same way once their own checks passed.
func (dst *target) placement() (parentID, name string, err error) {
	switch {
	case dst.exists && dst.isBase:
		return dst.node.ParentID, dst.node.Name, nil
	case !dst.hasParent:
		return "", "", errorf(http.StatusConflict, "The parent collection of the destination does not exist")
	}
	return dst.parent.ID, dst.name, nil
}

// transferOf checks a COPY or MOVE from src to dst and names its target.
func transferOf(src, dst *target, move bool) (storage.Transfer, error) {
	tr := storage.Transfer{NodeID: src.node.ID}
	switch {
	case dst.space.ID != src.space.ID:
		return tr, errorf(http.StatusBadGateway, "cross-space copies and moves are not supported: use copy and delete")
	case src.node.ParentID == "":
		return tr, errorf(http.StatusForbidden, "the root of a space can not be copied or moved")
	case dst.exists && dst.node.ID == src.node.ID:
		return tr, errorf(http.StatusForbidden, "source and destination are the same resource")
	case dst.exists && dst.node.ParentID == "":
		return tr, errorf(http.StatusForbidden, "the root of a space can not be replaced")
	}
	var err error
	if tr.NewParentID, tr.NewName, err = dst.placement(); err != nil {
		return tr, err
	}
	if !dst.mayPlace(true) || (move && !src.access.mayDelete()) {
		return tr, errReadOnly
	}
	return tr, nil
}

// parseOverwrite reads the Overwrite header: T (the default) or F.
func parseOverwrite(r *http.Request) (bool, error) {
	switch v := strings.TrimSpace(r.Header.Get("Overwrite")); strings.ToUpper(v) {
	case "", "T":
		return true, nil
	case "F":
		return false, nil
	default:
		return false, errorf(http.StatusBadRequest, "Overwrite header must be T or F, got %q", v)
	}
}

// parseTransferDepth reads Depth for COPY (0 copies a folder without its
// children) and MOVE (only infinity).
func parseTransferDepth(r *http.Request, move bool) (shallow bool, err error) {
	depth, err := parseDepth(r, depthInfinity)
	if err != nil {
		return false, err
	}
	switch {
	case depth == depthInfinity:
		return false, nil
	case depth == 0 && !move:
		return true, nil
	}
	return false, errorf(http.StatusBadRequest, "Depth %s is not allowed for %s", r.Header.Get("Depth"), r.Method)
}

// parseDestination reads the Destination header, an absolute URI or path on
// this server under any of the WebDAV base paths.
func parseDestination(r *http.Request) (davPath, error) {
	v := r.Header.Get("Destination")
	if v == "" {
		return davPath{}, errorf(http.StatusBadRequest, "the Destination header is missing")
	}
	u, err := url.Parse(v)
	if err != nil {
		return davPath{}, errorf(http.StatusBadRequest, "malformed Destination header: %v", err)
	}
	if err := pathSizeError(u.Path, http.StatusBadRequest); err != nil {
		err.header = "Destination"
		return davPath{}, err
	}
	if u.Host != "" && !strings.EqualFold(u.Host, r.Host) {
		return davPath{}, errorf(http.StatusBadGateway, "the Destination %s is on another server", u.Host)
	}
	dp, ok, perr := parseDAVPath(u.Path)
	if perr != nil {
		return davPath{}, perr
	}
	if !ok {
		return davPath{}, errorf(http.StatusBadRequest, "the Destination %s is not a WebDAV path of this server", u.Path)
	}
	if dp.kind == baseTrash || dp.kind == baseMeta {
		// Nothing is moved into a trash-bin or onto a version: a DELETE
		// trashes, a COPY of a version restores it.
		return davPath{}, errorf(http.StatusBadRequest, "the Destination %s is not a file or folder path", u.Path)
	}
	return dp, nil
}
