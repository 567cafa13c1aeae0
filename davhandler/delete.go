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
	if err := h.checkLocks(r, req, t, removed(t)...); err != nil {
		return err
	}
	cond, err := checkPreconditions(r, t)
	if err != nil {
		return err
	}
	cond.Locks = h.heldTokens(r, req)
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
