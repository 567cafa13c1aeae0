package davhandler

import "net/http"

// allowedMethods are the methods the interface implements.
const allowedMethods = "OPTIONS, GET, HEAD, PUT, DELETE, MKCOL, PROPFIND, PROPPATCH, COPY, MOVE"

// davClasses are the compliance classes advertised: 1 (RFC 4918 without
// locks) and 3 (the RFC 4918 revision). Class 2 comes with locks.
const davClasses = "1, 3"

// handleOptions answers without authentication so clients can discover the
// server before they log in.
func (h *Handler) handleOptions(w http.ResponseWriter, _ *http.Request) error {
	hdr := w.Header()
	hdr.Set("Allow", allowedMethods)
	hdr.Set("DAV", davClasses)
	hdr.Set("MS-Author-Via", "DAV")
	w.WriteHeader(http.StatusNoContent)
	return nil
}
