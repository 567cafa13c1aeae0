package davhandler

import "net/http"

// Page answers browsers that navigate to a folder: the web page of the
// folder instead of its empty WebDAV body. The page decides which
// requests ask for it; the handler decides what the URL names.
type Page interface {
	// WantsPage reports whether r asks for a page rather than the
	// WebDAV answer.
	WantsPage(r *http.Request) bool
	// ServeFolder answers the page of the folder r names.
	ServeFolder(w http.ResponseWriter, r *http.Request)
	// ServeNotFound answers that r names nothing the user may see.
	ServeNotFound(w http.ResponseWriter, r *http.Request)
}

// servePage answers a browser's GET of t (resolved with err) with the page
// when there is one to show: the folder's page, or the "not found" page
// for anything that is not there for this user (a space the user is no
// member of included, so that the page hints at nothing). Files, and every
// other refusal, keep their WebDAV answers; served=false leaves them to
// the caller.
func (h *Handler) servePage(w http.ResponseWriter, r *http.Request, t *target, err error) (served bool) {
	if h.page == nil || !h.page.WantsPage(r) || linkOf(r.Context()) != nil {
		// A link's browser page is /s/{token}, not its WebDAV paths.
		return false
	}
	switch {
	case err != nil && storageError(err).status == http.StatusNotFound:
		h.page.ServeNotFound(w, r)
	case err == nil && t.node.IsFolder():
		h.page.ServeFolder(w, r)
	default:
		return false
	}
	return true
}
