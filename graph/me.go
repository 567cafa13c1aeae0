package graph

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// meBody is the answer of /graph/v1.0/me. The user id doubles as the
// account name: davspaces knows users by that one id. Mail is there when
// the sign-in gave an address; memberOf when $expand asks for it.
type meBody struct {
	ID                       string         `json:"id"`
	DisplayName              string         `json:"displayName"`
	Mail                     string         `json:"mail,omitempty"`
	OnPremisesSamAccountName string         `json:"onPremisesSamAccountName"`
	MemberOf                 *[]identitySet `json:"memberOf,omitempty"`
}

// me answers the signed-in user.
func (h *Handler) me(w http.ResponseWriter, r *http.Request, u storage.User) error {
	body := meBody{
		ID:                       u.ID,
		DisplayName:              cmp.Or(u.DisplayName, u.ID),
		OnPremisesSamAccountName: u.ID,
	}
	if h.email != nil {
		body.Mail = h.email(r)
	}
	if expands(r, "memberOf") {
		groups := memberOf(u)
		body.MemberOf = &groups
	}
	h.writeJSON(w, r, http.StatusOK, body)
	return nil
}

// expands says whether $expand names property (a comma-separated list).
func expands(r *http.Request, property string) bool {
	return slices.Contains(strings.Split(r.URL.Query().Get("$expand"), ","), property)
}

// memberOf lists u's groups, from the token: a group's id is its name, as
// the members of a space name it, so that ownCloud Web can tell which
// spaces the user is in through a group.
func memberOf(u storage.User) []identitySet {
	groups := make([]identitySet, 0, len(u.Groups))
	for _, g := range u.Groups {
		groups = append(groups, identitySet{ID: g, DisplayName: g})
	}
	return groups
}
