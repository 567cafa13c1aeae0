package storage

import (
	"context"
	"errors"
	"slices"
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

// spaceMap is a SpaceReader of fixed spaces; the personal space of u has
// the id "home-" + u.ID.
type spaceMap map[string]Space

func (m spaceMap) PersonalSpace(_ context.Context, u User) (Space, error) {
	return m.Space(context.Background(), "home-"+u.ID)
}

func (m spaceMap) Space(_ context.Context, id string) (Space, error) {
	if s, ok := m[id]; ok {
		return s, nil
	}
	if id == "broken" {
		return Space{}, ErrUnavailable
	}
	return Space{}, ErrNotFound
}

// TestSpacesOf: the personal space, then the served project spaces the
// user sees, in the configuration's order; unknown ids are skipped, a
// store that cannot answer is an error.
func TestSpacesOf(t *testing.T) {
	ctx := context.Background()
	store := spaceMap{
		"home-ada": {ID: "home-ada", Type: SpacePersonal, Owner: "ada"},
		"b":        {ID: "b", Type: SpaceProject, Members: map[string]Role{"ada": RoleViewer}},
		"a":        {ID: "a", Type: SpaceProject, Members: map[string]Role{"ada": RoleEditor}},
		"c":        {ID: "c", Type: SpaceProject, Members: map[string]Role{"bob": RoleEditor}},
		"unserved": {ID: "unserved", Type: SpaceProject, Members: map[string]Role{"ada": RoleEditor}},
	}
	ids := func(spaces []Space) []string {
		var out []string
		for _, s := range spaces {
			out = append(out, s.ID)
		}
		return out
	}
	p := NewSpacePolicy([]string{"b", "gone", "a", "c"})
	for _, tc := range []struct {
		name string
		user User
		want []string
	}{
		{"member", User{ID: "ada"}, []string{"home-ada", "b", "a"}},
		{"scoped to a project", User{ID: "ada", Scope: Scope{Space: "a"}}, []string{"a"}},
		{"scoped to the home", User{ID: "ada", Scope: Scope{Space: "home-ada"}}, []string{"home-ada"}},
	} {
		got, err := p.SpacesOf(ctx, store, tc.user)
		if err != nil || !slices.Equal(ids(got), tc.want) {
			t.Errorf("%s: SpacesOf = %q, %v; want %q", tc.name, ids(got), err, tc.want)
		}
	}
	if _, err := NewSpacePolicy([]string{"broken"}).SpacesOf(ctx, store, User{ID: "ada"}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("SpacesOf over a store that cannot answer: %v", err)
	}
}
