package davhandler

import "net/http"

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
