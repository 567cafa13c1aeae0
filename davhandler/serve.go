package davhandler

import "net/http"

// The dispatcher: a routed request goes to the public-link, upload, trash,
// meta or bulk branch by its path, else to the handler of its method.

// Route returns the handler of a request whose path belongs to the WebDAV
// interface, bound to that parsed path; ok=false leaves the request to the
// next handler.
func (h *Handler) Route(r *http.Request) (handler http.Handler, ok bool) {
	dp, ok, perr := parseDAVPath(r.URL.Path)
	if !ok {
		return nil, false
	}
	return &routedRequest{h: h, path: dp, pathErr: perr}, true
}

// ServeHTTP answers one WebDAV request; a path outside the interface is 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, ok := h.Route(r)
	if !ok {
		h.fail(w, r, errNotFound)
		return
	}
	route.ServeHTTP(w, r)
}

// routedRequest is a request path parsed once, with the refusal its
// parsing produced, if any.
type routedRequest struct {
	h       *Handler
	path    davPath
	pathErr *davError
}

func (rr *routedRequest) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = withParties(r)
	if err := rr.h.serve(w, r, rr.path, rr.pathErr); err != nil {
		rr.h.fail(w, r, err)
	}
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, dp davPath, perr *davError) error {
	if r.Method == http.MethodOptions {
		return h.handleOptions(w, r, dp, perr)
	}
	if dp.kind == basePublic || dp.kind == basePublicUpload {
		// The link is the caller: a user the request may have is ignored.
		return h.servePublic(w, r, dp, perr)
	}
	user, ok := h.user(r)
	if own, isOwn := ownFiles(r, dp, user.ID); isOwn {
		dp, perr = own, nil
	}
	if perr != nil && !isAllSpacesReport(r, dp) {
		return perr
	}
	if !ok || user.ID == "" {
		return errorf(http.StatusUnauthorized, "No valid credentials were provided")
	}
	noteUser(r.Context(), user.ID)
	if !user.Scope.AllowsMethod(r.Method) {
		return errScopeReadOnly
	}
	if dp.notCaller(user.ID) {
		return errNotFound
	}
	req := &request{user: user, path: dp}
	switch dp.kind {
	case baseRestore:
		return errRestoreTarget
	case baseCorePreview:
		return h.serveCorePreview(w, r, req)
	case baseUploads:
		return h.serveUpload(w, r, req)
	case baseChunked:
		return h.serveChunkedUpload(w, r, req)
	case baseTrash:
		return h.serveTrash(w, r, req)
	case baseMassDeletes:
		return h.serveMassDeletes(w, r, req)
	case baseMeta:
		return h.serveMeta(w, r, req)
	case baseBulk:
		return h.serveBulk(w, r, req)
	case baseAllSpaces:
		return h.handleReportAllSpaces(w, r, req)
	}
	if handle := h.treeMethod(r.Method); handle != nil {
		return handle(w, r, req)
	}
	switch r.Method {
	case "LOCK":
		if h.locks != nil {
			return h.handleLock(w, r, req)
		}
	case "UNLOCK":
		if h.locks != nil {
			return h.handleUnlock(w, r, req)
		}
	}
	return h.handleUnsupported(w, r, req)
}

// treeMethod returns the handler of a method that reads or changes the
// tree, as both a member's paths and a public link's serve them; nil for
// the others (locks, and what is not implemented).
func (h *Handler) treeMethod(method string) func(http.ResponseWriter, *http.Request, *request) error {
	switch method {
	case "PROPFIND":
		return h.handlePropfind
	case "PROPPATCH":
		return h.handleProppatch
	case "REPORT":
		return h.handleReport
	case "MKCOL":
		return h.handleMkcol
	case http.MethodGet, http.MethodHead:
		return h.handleGet
	case http.MethodPut:
		return h.handlePut
	case http.MethodDelete:
		return h.handleDelete
	case "COPY", "MOVE":
		return h.handleCopyMove
	case http.MethodPost:
		if h.uploads != nil {
			return h.handleTusCreate
		}
	}
	return nil
}

// handleUnsupported answers a method the server does not implement. The
// target is resolved first: a space the user may not see stays as absent as
// it is for every other method.
func (h *Handler) handleUnsupported(w http.ResponseWriter, r *http.Request, req *request) error {
	if _, err := h.resolve(r.Context(), req.user, req.path); err != nil {
		return err
	}
	w.Header().Set("Allow", h.allowedMethods())
	return errorf(http.StatusNotImplemented, "%s is not implemented", r.Method)
}
