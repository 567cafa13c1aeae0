package ocs

import (
	"net/http"
	"strconv"
)

// AppListPath is where ownCloud Web asks, before anybody signs in, which
// applications open which file types (oCIS' app registry). davspaces
// offers no office or other external applications, so the list is empty;
// it must be answered without a token all the same: Web takes a failure
// for a broken configuration and never starts its sign-in.
const AppListPath = "/app/list"

// appListBody is the empty list, under the key Web reads
// (web-pkg services/appProvider: data["mime-types"]).
const appListBody = `{"mime-types":[]}` + "\n"

func (h *Handler) serveAppList(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("Content-Length", strconv.Itoa(len(appListBody)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write([]byte(appListBody))
}
