package graph

import (
	"cmp"
	"slices"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// permission is a libre-graph permission on a drive's root: one member and
// the unified role it has.
type permission struct {
	ID          string             `json:"id"`
	GrantedToV2 sharePointIdentity `json:"grantedToV2"`
	Roles       []string           `json:"roles"`
}

// sharePointIdentity names a user or a group; ownCloud Web keys a space's
// members by the id of either.
type sharePointIdentity struct {
	User  *identitySet `json:"user,omitempty"`
	Group *identitySet `json:"group,omitempty"`
}

// memberPermissions lists the members of s, managers first, then by id:
// the owner of a personal space as its manager (as oCIS lists it), the
// users and groups of a project space with their roles. Users and groups
// are named by their ids, which is all the Caddyfile gives; a group's id
// is its name as in the token's groups, so that Web finds the signed-in
// user's groups among the members.
func memberPermissions(s storage.Space) []permission {
	if s.Type == storage.SpacePersonal {
		owner := &identitySet{ID: s.Owner, DisplayName: cmp.Or(s.OwnerDisplayName, s.Owner)}
		return []permission{{ID: "u:" + s.Owner, GrantedToV2: sharePointIdentity{User: owner}, Roles: []string{RoleManagerID}}}
	}
	perms := make([]permission, 0, len(s.Members))
	for member, role := range s.Members {
		if role == storage.RoleNone {
			continue
		}
		p := permission{Roles: []string{spaceRoleID(role)}}
		if group, ok := strings.CutPrefix(member, storage.GroupPrefix); ok {
			p.ID = "g:" + group
			p.GrantedToV2.Group = &identitySet{ID: group, DisplayName: group}
		} else {
			p.ID = "u:" + member
			p.GrantedToV2.User = &identitySet{ID: member, DisplayName: member}
		}
		perms = append(perms, p)
	}
	rank := map[string]int{RoleManagerID: 0, RoleSpaceEditorID: 1, RoleSpaceViewerID: 2}
	slices.SortFunc(perms, func(a, b permission) int {
		return cmp.Or(cmp.Compare(rank[a.Roles[0]], rank[b.Roles[0]]), cmp.Compare(a.ID, b.ID))
	})
	return perms
}
