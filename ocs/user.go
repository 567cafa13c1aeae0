package ocs

import (
	"net/http"

	"github.com/davspaces/davspaces/storage"
)

// cloudUser is the data of cloud/user. Clients build their WebDAV URL
// /remote.php/dav/files/<id>/ from id, so it is the user id davhandler
// checks there.
type cloudUser struct {
	ID          string `json:"id" xml:"id"`
	DisplayName string `json:"display-name" xml:"display-name"`
	Email       string `json:"email" xml:"email"`
}

// serveUser answers cloud/user with the signed-in user.
func (h *Handler) serveUser(w http.ResponseWriter, r *http.Request, v apiVersion, user storage.User) {
	u := cloudUser{ID: user.ID, DisplayName: user.DisplayName}
	if u.DisplayName == "" {
		u.DisplayName = user.ID
	}
	if h.cfg.Email != nil {
		u.Email = h.cfg.Email(r)
	}
	writeOK(w, r, v, u)
}
