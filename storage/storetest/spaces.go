package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// spaceTests check PersonalSpace, PutSpace and Space.
var spaceTests = []conformanceTest{
	{"PersonalSpace", testPersonalSpace},
	{"PersonalSpaceCreatedOnceConcurrently", testPersonalSpaceOnce},
	{"PutSpace", testPutSpace},
}

func testPersonalSpace(t *testing.T, f *fixture) {
	sp := f.space
	if sp.Type != storage.SpacePersonal || sp.Owner != user.ID || sp.OwnerDisplayName != user.DisplayName ||
		sp.Quota != storage.NoQuota || sp.Members == nil {
		t.Fatalf("space = %+v", sp)
	}
	root := f.node(t, sp.ID)
	if root.ID != sp.ID || root.SpaceID != sp.ID || root.ParentID != "" || root.Name != "" ||
		root.Kind != storage.KindFolder || root.ETag == "" || root.ModTime.IsZero() {
		t.Fatalf("root = %+v", root)
	}
	again, err := f.s.PersonalSpace(f.ctx, user)
	if err != nil || again.ID != sp.ID {
		t.Fatalf("second call = %v, %v", again.ID, err)
	}
	renamed, err := f.s.PersonalSpace(f.ctx, storage.User{ID: user.ID, DisplayName: "A. Einstein"})
	if err != nil || renamed.ID != sp.ID || renamed.OwnerDisplayName != "A. Einstein" {
		t.Fatalf("renamed = %+v, %v", renamed, err)
	}
	if got, err := f.s.Space(f.ctx, sp.ID); err != nil || got.OwnerDisplayName != "A. Einstein" {
		t.Fatalf("Space = %+v, %v", got, err)
	}
	other, err := f.s.PersonalSpace(f.ctx, storage.User{ID: "marie"})
	if err != nil || other.ID == sp.ID || other.Owner != "marie" || other.Name != "marie" {
		t.Fatalf("other = %+v, %v", other, err)
	}
	_, err = f.s.PersonalSpace(f.ctx, storage.User{})
	wantErr(t, "PersonalSpace of no one", err, storage.ErrInvalid)
	// An id no store could hold, or one that would be another path
	// segment, is refused as invalid (a 4xx), never a 500.
	for _, id := range []string{"ein\x00stein", ".", "..", "a/b", "tab\tid", "\xff", strings.Repeat("x", 5000)} {
		_, err = f.s.PersonalSpace(f.ctx, storage.User{ID: id})
		wantErr(t, fmt.Sprintf("PersonalSpace of %.20q", id), err, storage.ErrInvalid)
	}
}

func testPersonalSpaceOnce(t *testing.T, f *fixture) {
	const n = 20
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			sp, err := f.s.PersonalSpace(f.ctx, storage.User{ID: "marie", DisplayName: "Marie Curie"})
			ids[i], errs[i] = sp.ID, err
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || ids[i] != ids[0] {
			t.Fatalf("call %d: space %s, %v; call 0 got %s", i, ids[i], errs[i], ids[0])
		}
	}
	if _, err := f.s.Node(f.ctx, ids[0], ids[0]); err != nil {
		t.Fatalf("root of the space: %v", err)
	}
}

func testPutSpace(t *testing.T, f *fixture) {
	s := f.s
	_, err := s.Space(f.ctx, "project-1")
	wantErr(t, "Space before PutSpace", err, storage.ErrNotFound)
	sp, err := s.PutSpace(f.ctx, storage.Space{ID: "project-1", Name: "Physics", Quota: 1000,
		Members: map[string]storage.Role{"marie": storage.RoleManager, "einstein": storage.RoleEditor}})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Type != storage.SpaceProject || sp.Name != "Physics" || sp.Quota != 1000 || len(sp.Members) != 2 {
		t.Fatalf("created = %+v", sp)
	}
	root, err := s.Node(f.ctx, "project-1", "project-1")
	if err != nil || !root.IsFolder() || root.SpaceID != "project-1" {
		t.Fatalf("root = %+v, %v", root, err)
	}
	dir, err := s.Mkdir(f.ctx, "project-1", "project-1", "papers")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.PutSpace(f.ctx, storage.Space{ID: "project-1", Type: storage.SpaceProject, Name: "Physics 2", Quota: storage.NoQuota,
		Members: map[string]storage.Role{"bohr": storage.RoleViewer}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Space(f.ctx, "project-1")
	if err != nil || got.Name != "Physics 2" || got.Quota != storage.NoQuota || len(got.Members) != 1 ||
		got.Members["bohr"] != storage.RoleViewer {
		t.Fatalf("updated = %+v, %v", got, err)
	}
	if _, err := s.Node(f.ctx, "project-1", dir.ID); err != nil {
		t.Fatalf("content lost on update: %v", err)
	}
	p, err := s.PutSpace(f.ctx, storage.Space{ID: f.space.ID, Name: "mine", Quota: 42})
	if err != nil || p.Type != storage.SpacePersonal || p.Owner != user.ID || p.Quota != 42 {
		t.Fatalf("put personal = %+v, %v", p, err)
	}
	for _, tc := range []struct {
		name string
		sp   storage.Space
		want error
	}{
		{"empty id", storage.Space{Name: "x"}, storage.ErrInvalid},
		{"slash in id", storage.Space{ID: "a/b"}, storage.ErrInvalid},
		{"new personal", storage.Space{ID: "p2", Type: storage.SpacePersonal}, storage.ErrInvalid},
		{"type change", storage.Space{ID: "project-1", Type: storage.SpacePersonal}, storage.ErrConflict},
		{"id of a node", storage.Space{ID: dir.ID}, storage.ErrConflict},
	} {
		_, err := s.PutSpace(f.ctx, tc.sp)
		wantErr(t, "PutSpace "+tc.name, err, tc.want)
	}
}
