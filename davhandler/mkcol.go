package davhandler

import (
	"errors"
	"net/http"

	"github.com/davspaces/davspaces/storage"
)

const msgExists = "The resource you tried to create already exists"

func (h *Handler) handleMkcol(w http.ResponseWriter, r *http.Request, req *request) error {
	if hasBody(r) {
		return errorf(http.StatusUnsupportedMediaType, "MKCOL with a request body (extended-mkcol) is not supported")
	}
	t, err := h.resolve(r.Context(), req.user, req.path)
	if err != nil {
		return err
	}
	switch {
	case t.exists:
		return methodNotAllowed(allowedOn(t.node), msgExists)
	case !t.hasParent:
		return errorf(http.StatusConflict, "The parent collection of %s does not exist", t.name)
	case !t.access.mayCreate():
		return errReadOnly
	}
	if err := h.checkLocks(r, req, t, written(t)...); err != nil {
		return err
	}
	node, err := h.store.Mkdir(r.Context(), t.space.ID, t.parent.ID, t.name)
	if errors.Is(err, storage.ErrExists) {
		// Created meanwhile, as a file or a folder: both allow these.
		return methodNotAllowed(allowedOnFolder, msgExists)
	}
	if err != nil {
		return err
	}
	// ETag, OC-ETag and OC-FileId, as for a PUT: the ownCloud and
	// Nextcloud clients read the new folder's etag and id from them.
	h.setNodeHeaders(r.Context(), w, node)
	w.WriteHeader(http.StatusCreated)
	return nil
}
