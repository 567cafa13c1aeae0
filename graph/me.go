package graph

import (
	"cmp"
	"net/http"

	"github.com/davspaces/davspaces/storage"
)

// meBody is the answer of /graph/v1.0/me. The user id doubles as the
// account name: davspaces knows users by that one id. There is no mail
// field because the user function does not provide one.
type meBody struct {
	ID                       string `json:"id"`
	DisplayName              string `json:"displayName"`
	Mail                     string `json:"mail,omitempty"`
	OnPremisesSamAccountName string `json:"onPremisesSamAccountName"`
}

// me answers the signed-in user.
func (h *Handler) me(w http.ResponseWriter, r *http.Request, u storage.User) error {
	h.writeJSON(w, r, http.StatusOK, meBody{
		ID:                       u.ID,
		DisplayName:              cmp.Or(u.DisplayName, u.ID),
		OnPremisesSamAccountName: u.ID,
	})
	return nil
}
