package davhandler

import "net/http"

func (h *Handler) handleDelete(w http.ResponseWriter, r *http.Request, req *request) error {
	t, err := h.resolveExisting(r.Context(), req.user, req.path)
	if err != nil {
		return err
	}
	switch {
	case t.node.ParentID == "":
		return methodNotAllowed(allowedOnRoot, "deleting spaces via dav is not allowed")
	case !t.access.mayDelete():
		return errReadOnly
	}
	cond, err := h.changeConditions(r, req, t, removed(t)...)
	if err != nil {
		return err
	}
	counted, err := h.brakeDelete(r, req.user, t.space, t.node)
	if err != nil {
		return err
	}
	err = h.store.Remove(r.Context(), t.space.ID, t.node.ID, cond)
	counted(err == nil)
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
