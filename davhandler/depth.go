package davhandler

import (
	"net/http"
	"strings"
)

// The Depth header (RFC 4918 §10.2), read by PROPFIND, COPY, MOVE, LOCK
// and the listing of a chunked upload.

// depthInfinity stands for Depth: infinity.
const depthInfinity = -1

// parseDepth reads the Depth header; def applies when it is absent.
func parseDepth(r *http.Request, def int) (int, error) {
	v := r.Header.Get("Depth")
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "":
		return def, nil
	case "0":
		return 0, nil
	case "1":
		return 1, nil
	case "infinity":
		return depthInfinity, nil
	}
	return 0, errorf(http.StatusBadRequest, "Invalid Depth header value: %s", v)
}

// listingDepth reads the Depth of a PROPFIND of what has no deeper levels
// than its children: infinity is refused as elsewhere when the handler
// refuses it, and otherwise answered as 1.
func (h *Handler) listingDepth(r *http.Request) (int, error) {
	depth, err := parseDepth(r, depthInfinity)
	if err != nil {
		return 0, err
	}
	if depth == depthInfinity {
		if !h.depthInfinity {
			return 0, errorf(http.StatusBadRequest, "Depth infinity is disabled on this server: send Depth 0 or 1 (a missing Depth header means infinity)")
		}
		depth = 1
	}
	return depth, nil
}

// readListingPropfind reads a PROPFIND of a listing (the trash, versions):
// its Depth as listingDepth reads it, then its body.
func (h *Handler) readListingPropfind(w http.ResponseWriter, r *http.Request) (int, propfindRequest, error) {
	depth, err := h.listingDepth(r)
	if err != nil {
		return 0, propfindRequest{}, err
	}
	pf, err := h.readPropfind(w, r)
	return depth, pf, err
}
