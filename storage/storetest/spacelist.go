package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// spaceListTests pin storage.SpaceLister, which the administrator's
// commands list the spaces with.
var spaceListTests = []conformanceTest{
	{"SpacesListsEverySpaceByID", testSpacesListsEverySpace},
}

// Spaces returns the personal and project spaces, ordered by id, each as
// Space returns it (with its effective quota), and no trash of any kind.
func testSpacesListsEverySpace(t *testing.T, f *fixture) {
	f.s.SetPersonalQuota(1 << 20)
	bob, err := f.s.PersonalSpace(f.ctx, storage.User{ID: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	project, err := f.s.PutSpace(f.ctx, storage.Space{ID: "physics", Name: "Physics", Quota: 5000,
		Members: map[string]storage.Role{"einstein": storage.RoleManager, "group:physicists": storage.RoleViewer}})
	if err != nil {
		t.Fatal(err)
	}
	// A deleted file puts something in the space's trash, which must not
	// show as a space of its own.
	gone := f.put(t, f.root(), "gone.txt", "bye")
	if err := f.s.Remove(f.ctx, f.space.ID, gone.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.Spaces(f.ctx)
	if err != nil {
		t.Fatalf("Spaces: %v", err)
	}
	var ids []string
	for _, sp := range got {
		ids = append(ids, sp.ID)
	}
	want := []string{f.space.ID, bob.ID, project.ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("Spaces lists %v, want %v", ids, want)
	}
	if !slices.IsSortedFunc(got, func(a, b storage.Space) int { return strings.Compare(a.ID, b.ID) }) {
		t.Fatal("Spaces are not ordered by id")
	}
	for _, sp := range got {
		one, err := f.s.Space(f.ctx, sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if sp.Name != one.Name || sp.Type != one.Type || sp.Owner != one.Owner || sp.Quota != one.Quota || len(sp.Members) != len(one.Members) {
			t.Errorf("Spaces lists %+v, Space returns %+v", sp, one)
		}
	}
}
