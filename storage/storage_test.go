package storage

import "testing"

func TestRoleOf(t *testing.T) {
	personal := Space{Type: SpacePersonal, Owner: "alice", Members: map[string]Role{"bob": RoleViewer}}
	project := Space{Type: SpaceProject, Members: map[string]Role{
		"bob":              RoleViewer,
		"group:developers": RoleEditor,
		"group:admins":     RoleManager,
	}}
	tests := []struct {
		name  string
		space Space
		user  User
		want  Role
	}{
		{"owner", personal, User{ID: "alice"}, RoleManager},
		{"member of a personal space", personal, User{ID: "bob"}, RoleViewer},
		{"stranger", personal, User{ID: "carol"}, RoleNone},
		{"direct role", project, User{ID: "bob"}, RoleViewer},
		{"group role is stronger", project, User{ID: "bob", Groups: []string{"developers"}}, RoleEditor},
		{"strongest group wins", project, User{ID: "alice", Groups: []string{"developers", "admins"}}, RoleManager},
		{"unknown group", project, User{ID: "carol", Groups: []string{"sales"}}, RoleNone},
		{"a user id is not a group", project, User{ID: "group:admins"}, RoleNone},
		{"a group named like a user is not the user", project, User{ID: "carol", Groups: []string{"bob"}}, RoleNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.space.RoleOf(tt.user); got != tt.want {
				t.Fatalf("RoleOf(%+v) = %v, want %v", tt.user, got, tt.want)
			}
		})
	}
}

func TestIsHexID(t *testing.T) {
	tests := map[string]bool{
		"0123456789abcdef0123456789abcdef":  true,
		"0123456789ABCDEF0123456789abcdef":  false, // upper case is not what the stores make
		"0123456789abcdef0123456789abcde":   false,
		"0123456789abcdef0123456789abcdef0": false,
		"../../../../../../../../../etc/pa": false,
		"":                                  false,
	}
	for id, want := range tests {
		if got := IsHexID(id); got != want {
			t.Errorf("IsHexID(%q) = %v, want %v", id, got, want)
		}
	}
}
