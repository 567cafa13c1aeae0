package davhandler

import (
	"net/http"

	"github.com/davspaces/davspaces/storage"
)

// allowedMethods are the methods the interface implements.
const allowedMethods = "OPTIONS, GET, HEAD, PUT, DELETE, MKCOL, PROPFIND, PROPPATCH, REPORT, COPY, MOVE"

// The methods an existing resource allows, for the Allow header of a 405.
// MKCOL is never among them (the resource exists); a space root can be
// neither deleted, copied, moved nor replaced.
const (
	allowedOnFile   = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT, COPY, MOVE"
	allowedOnFolder = "OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, REPORT, COPY, MOVE"
	allowedOnRoot   = "OPTIONS, GET, HEAD, PROPFIND, PROPPATCH, REPORT"
	// allowedOnVirtual: the collections above the spaces only answer OPTIONS.
	allowedOnVirtual = "OPTIONS"
)

// allowedOn returns the methods node n allows.
func allowedOn(n storage.Node) string {
	switch {
	case n.ParentID == "":
		return allowedOnRoot
	case n.IsFolder():
		return allowedOnFolder
	}
	return allowedOnFile
}

// lockMethods are the methods locking adds to every resource.
const lockMethods = ", LOCK, UNLOCK"

// unlockable are the allow lists of what cannot be locked: the
// collections above the spaces, and uploads.
var unlockable = map[string]bool{
	allowedOnVirtual: true, allowedOnUploads: true,
	allowedOnChunkedUpload: true, allowedOnChunk: true, allowedOnAssemble: true,
	allowedOnTrash: true, allowedOnTrashItem: true, allowedInTrashItem: true,
	allowedOnMeta: true, allowedOnVersion: true,
	allowedOnPublic: true,
}

// withLocks adds LOCK and UNLOCK to a list of allowed methods when the
// handler offers locking.
func (h *Handler) withLocks(allow string) string {
	if h.locks == nil || unlockable[allow] {
		return allow
	}
	return allow + lockMethods
}

// The compliance classes advertised: 1 (RFC 4918), 2 (locking) and 3 (the
// RFC 4918 revision); class 2 only when there is a lock store.
const (
	davClasses          = "1, 3"
	davClassesWithLocks = "1, 2, 3"
)

// davClasses returns the DAV header of this handler.
func (h *Handler) davClasses() string {
	if h.locks == nil {
		return davClasses
	}
	return davClassesWithLocks
}

// allowedMethods lists the methods of the interface, with LOCK and UNLOCK
// when locking is offered and POST (TUS creation) when uploads are.
func (h *Handler) allowedMethods() string {
	allow := h.withLocks(allowedMethods)
	if h.uploads != nil {
		allow += ", POST"
	}
	return allow
}

// handleOptions answers without authentication so clients can discover the
// server, and whether it takes resumable uploads, before they log in.
func (h *Handler) handleOptions(w http.ResponseWriter, r *http.Request, dp davPath, perr *davError) error {
	hdr := w.Header()
	hdr.Set("Allow", h.allowedMethods())
	if (dp.kind == baseUploads || dp.kind == basePublicUpload) && h.uploads != nil {
		hdr.Set("Allow", allowedOnUploads)
	}
	if allow, ok := undoAllow(dp); ok {
		hdr.Set("Allow", allow)
	}
	if dp.kind == baseBulk {
		hdr.Set("Allow", allowedOnBulk)
	}
	hdr.Set("DAV", h.davClasses())
	if dp.kind == basePublic {
		hdr.Set("Allow", allowedOnPublic)
		if h.uploads != nil {
			hdr.Set("Allow", allowedOnPublic+", POST")
		}
		hdr.Set("DAV", davClasses)
	}
	hdr.Set("MS-Author-Via", "DAV")
	if h.uploads != nil && dp.kind != baseTrash && dp.kind != baseMeta {
		setTusDiscovery(hdr)
		if perr == nil {
			h.setOptionsMaxSize(r, hdr, dp)
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// undoAllow returns the methods of a trash-bin or meta path; ok is false
// for any other path.
func undoAllow(dp davPath) (allow string, ok bool) {
	switch {
	case dp.kind == baseTrash:
		return trashAllow(dp.segments), true
	case dp.kind != baseMeta:
		return "", false
	case len(dp.segments) == 0:
		return allowedOnMeta, true
	case len(dp.segments) == 1:
		return allowedOnVersions, true
	}
	return allowedOnVersion, true
}
