package storage

import (
	"errors"
	"testing"
)

func TestPreparePutSpace(t *testing.T) {
	members := map[string]Role{"alice": RoleManager}
	sp, err := PreparePutSpace(Space{ID: "s1", Members: members})
	if err != nil {
		t.Fatalf("PreparePutSpace: %v", err)
	}
	members["bob"] = RoleManager
	if len(sp.Members) != 1 {
		t.Fatalf("members follow the caller's map: %v", sp.Members)
	}
	if sp, err := PreparePutSpace(Space{ID: "s2"}); err != nil || sp.Members == nil {
		t.Fatalf("PreparePutSpace without members = %+v, %v", sp, err)
	}
	for _, id := range []string{"", "a/b", "a\x00b"} {
		if _, err := PreparePutSpace(Space{ID: id}); !errors.Is(err, ErrInvalid) {
			t.Errorf("PreparePutSpace(%q) = %v, want ErrInvalid", id, err)
		}
	}
}

func TestCheckPutSpace(t *testing.T) {
	personal := Space{ID: "s", Type: SpacePersonal}
	project := Space{ID: "s", Type: SpaceProject}
	tests := []struct {
		name   string
		sp     Space
		old    Space
		exists bool
		want   error
	}{
		{"create without a type", Space{ID: "s"}, Space{}, false, nil},
		{"create a project", project, Space{}, false, nil},
		{"create a personal space", personal, Space{}, false, ErrInvalid},
		{"update without a type", Space{ID: "s"}, personal, true, nil},
		{"update keeping the type", personal, personal, true, nil},
		{"update changing the type", project, personal, true, ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := CheckPutSpace(tt.sp, tt.old, tt.exists); !errors.Is(err, tt.want) {
				t.Fatalf("CheckPutSpace = %v, want %v", err, tt.want)
			}
		})
	}
}
