package storage

import (
	"errors"
	"testing"
)

// TestSpacePolicy pins who reaches a space: served or not, by role, and
// through a scoped app password. nil is allowed; ErrNotFound and
// ErrForbidden are what the front-ends answer 404 and 403 for.
func TestSpacePolicy(t *testing.T) {
	p := NewSpacePolicy([]string{"lab", "", "lab"})
	lab := Space{ID: "lab", Type: SpaceProject, Members: map[string]Role{
		"mgr": RoleManager, "ed": RoleEditor, "view": RoleViewer, GroupPrefix + "physicists": RoleEditor,
	}}
	dropped := lab
	dropped.ID = "dropped" // in the store, no longer configured
	home := Space{ID: "home-ada", Type: SpacePersonal, Owner: "ada"}
	other := Space{ID: "other", Type: "virtual", Members: map[string]Role{"mgr": RoleManager}}
	user := func(id string, scope Scope) User { return User{ID: id, Scope: scope} }
	lise := User{ID: "lise", Groups: []string{"physicists"}}
	created := Share{ID: "s1", Creator: "ed"}
	foreign := Share{ID: "s2", Creator: "someone"}
	nf, fb := ErrNotFound, ErrForbidden

	tests := []struct {
		name                  string
		space                 Space
		user                  User
		visible, share        error
		manageOwn, manageElse error // MayManageShare of created, of foreign
	}{
		{"manager", lab, user("mgr", Scope{}), nil, nil, nil, nil},
		{"editor", lab, user("ed", Scope{}), nil, nil, nil, fb},
		{"editor through a group", lab, lise, nil, nil, fb, fb},
		{"viewer", lab, user("view", Scope{}), nil, fb, fb, fb},
		{"stranger", lab, user("eve", Scope{}), nf, nf, nf, nf},
		{"manager, not served", dropped, user("mgr", Scope{}), nf, nf, nf, nf},
		{"manager, unknown type", other, user("mgr", Scope{}), nf, nf, nf, nf},
		{"owner", home, user("ada", Scope{}), nil, nil, nil, nil},
		{"stranger to a personal space", home, user("eve", Scope{}), nf, nf, nf, nf},
		{"manager, scoped to the space", lab, user("mgr", Scope{Space: "lab"}), nil, nil, nil, nil},
		{"manager, scoped to a folder", lab, user("mgr", Scope{Space: "lab", Path: "/a"}), nil, nil, nil, nil},
		{"manager, scoped to another space", lab, user("mgr", Scope{Space: "home-mgr"}), nf, nf, nf, nf},
		{"manager, read-only", lab, user("mgr", Scope{ReadOnly: true}), nil, fb, fb, fb},
		{"editor, read-only", lab, user("ed", Scope{Space: "lab", ReadOnly: true}), nil, fb, fb, fb},
		{"owner, scoped elsewhere", home, user("ada", Scope{Space: "lab"}), nf, nf, nf, nf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(what string, got, want error) {
				t.Helper()
				if want == nil && got != nil || want != nil && !errors.Is(got, want) {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("Visible", p.Visible(tt.user, tt.space), tt.visible)
			check("MayShare", p.MayShare(tt.user, tt.space), tt.share)
			check("MayManageShare(own)", p.MayManageShare(tt.user, tt.space, created), tt.manageOwn)
			check("MayManageShare(else)", p.MayManageShare(tt.user, tt.space, foreign), tt.manageElse)
		})
	}
}

func TestSpacePolicyServes(t *testing.T) {
	p := NewSpacePolicy([]string{"b", "a", "", "b"})
	if got := p.ProjectSpaces(); len(got) != 2 || got[0] != "b" || got[1] != "a" {
		t.Errorf("ProjectSpaces = %q, want [b a]", got)
	}
	var zero SpacePolicy
	for _, tc := range []struct {
		p     SpacePolicy
		space Space
		want  bool
	}{
		{p, Space{ID: "a", Type: SpaceProject}, true},
		{p, Space{ID: "c", Type: SpaceProject}, false},
		{p, Space{ID: "a", Type: "virtual"}, false},
		{p, Space{ID: "u", Type: SpacePersonal}, true},
		{zero, Space{ID: "u", Type: SpacePersonal}, true},
		{zero, Space{ID: "a", Type: SpaceProject}, false},
	} {
		if got := tc.p.Serves(tc.space); got != tc.want {
			t.Errorf("Serves(%+v) = %v, want %v", tc.space, got, tc.want)
		}
	}
}
