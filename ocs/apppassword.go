package ocs

import (
	"errors"
	"net/http"

	"github.com/davspaces/davspaces/apppass"
	"github.com/davspaces/davspaces/storage"
)

// Nextcloud's app password endpoints below /ocs/v{1,2}.php (nextcloud/server
// core/Controller/AppPasswordController.php): GET getapppassword makes
// one named after the client's User-Agent, which a request signed in with
// an app password may not (403); DELETE apppassword revokes the one the
// request signed in with (403 for any other sign-in).
const (
	getAppPasswordEndpoint    = "/core/getapppassword"
	deleteAppPasswordEndpoint = "/core/apppassword"
)

// appPasswordRoute returns the handler of an app password endpoint, or
// false for another endpoint or without Config.AppPasswords.
func (h *Handler) appPasswordRoute(v apiVersion, endpoint string) (http.Handler, bool) {
	if h.cfg.AppPasswords == nil {
		return nil, false
	}
	var method string
	var serve func(http.ResponseWriter, *http.Request, apiVersion, storage.User)
	switch endpoint {
	case getAppPasswordEndpoint:
		method, serve = http.MethodGet, h.serveGetAppPassword
	case deleteAppPasswordEndpoint:
		method, serve = http.MethodDelete, h.serveDeleteAppPassword
	default:
		return nil, false
	}
	return h.signedIn(v, serve, method), true
}

func (h *Handler) serveGetAppPassword(w http.ResponseWriter, r *http.Request, v apiVersion, user storage.User) {
	_, password, err := h.cfg.AppPasswords.Create(r, user, r.UserAgent(), 0, apppass.ScopeRequest{})
	switch {
	case errors.Is(err, apppass.ErrAppPasswordInUse):
		writeError(w, r, v, http.StatusForbidden, "You cannot request an new apppassword with an apppassword")
	case errors.Is(err, storage.ErrInsufficientStorage):
		writeError(w, r, v, http.StatusInsufficientStorage, err.Error())
	case err != nil:
		writeError(w, r, v, http.StatusInternalServerError, "app passwords are unavailable")
	default:
		w.Header().Set("Cache-Control", "no-store")
		writeOK(w, r, v, struct {
			AppPassword string `json:"apppassword" xml:"apppassword"`
		}{password})
	}
}

func (h *Handler) serveDeleteAppPassword(w http.ResponseWriter, r *http.Request, v apiVersion, user storage.User) {
	id := h.cfg.AppPasswords.UsedPassword(r)
	if id == "" {
		writeError(w, r, v, http.StatusForbidden, "no app password in use")
		return
	}
	err := h.cfg.AppPasswords.Delete(r.Context(), user, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		writeError(w, r, v, http.StatusForbidden, "could not remove apptoken")
	case err != nil:
		writeError(w, r, v, http.StatusInternalServerError, "app passwords are unavailable")
	default:
		writeOK(w, r, v, emptyData{})
	}
}
