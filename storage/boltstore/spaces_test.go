package boltstore

import (
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func TestPersonalSpaceCreatedOnceConcurrently(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	const n = 20
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			sp, err := s.PersonalSpace(ctx, storage.User{ID: "marie", DisplayName: "Marie Curie"})
			ids[i], errs[i] = sp.ID, err
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("call %d got space %s, call 0 got %s", i, ids[i], ids[0])
		}
	}
	count := 0
	s.view(func(tx *txn) error {
		return tx.spaces().ForEach(func(k, v []byte) error { count++; return nil })
	})
	if count != 1 {
		t.Fatalf("%d spaces stored, want 1", count)
	}
}

func TestPersonalSpace(t *testing.T) {
	f := newFixture(t)
	sp := f.space
	if sp.Type != storage.SpacePersonal || sp.Owner != "einstein" || sp.OwnerDisplayName != "Albert Einstein" ||
		sp.Quota != storage.NoQuota || sp.Members == nil {
		t.Fatalf("space = %+v", sp)
	}
	if sp.RoleOf(storage.User{ID: "einstein"}) != storage.RoleManager {
		t.Fatal("owner is not manager")
	}
	root := f.node(t, sp.ID)
	if root.ID != sp.ID || root.SpaceID != sp.ID || root.ParentID != "" || root.Name != "" ||
		root.Kind != storage.KindFolder || root.ETag == "" || !root.ModTime.Equal(f.clk.Now()) {
		t.Fatalf("root = %+v", root)
	}

	// Same user again: same space, nothing changes.
	again, err := f.s.PersonalSpace(ctx, storage.User{ID: "einstein", DisplayName: "Albert Einstein"})
	if err != nil || again.ID != sp.ID {
		t.Fatalf("second call = %v, %v", again.ID, err)
	}
	// New display name is recorded.
	renamed, err := f.s.PersonalSpace(ctx, storage.User{ID: "einstein", DisplayName: "A. Einstein"})
	if err != nil || renamed.ID != sp.ID || renamed.OwnerDisplayName != "A. Einstein" {
		t.Fatalf("renamed = %+v, %v", renamed, err)
	}
	got, err := f.s.Space(ctx, sp.ID)
	if err != nil || got.OwnerDisplayName != "A. Einstein" {
		t.Fatalf("Space = %+v, %v", got, err)
	}
	// Another user gets another space.
	other, err := f.s.PersonalSpace(ctx, storage.User{ID: "marie"})
	if err != nil || other.ID == sp.ID || other.Owner != "marie" {
		t.Fatalf("other = %+v, %v", other, err)
	}
	_, err = f.s.PersonalSpace(ctx, storage.User{})
	wantErr(t, err, storage.ErrInvalid)
}

func TestPutSpace(t *testing.T) {
	f := newFixture(t)
	s := f.s

	_, err := s.Space(ctx, "project-1")
	wantErr(t, err, storage.ErrNotFound)

	sp, err := s.PutSpace(ctx, storage.Space{ID: "project-1", Name: "Physics", Quota: 1000,
		Members: map[string]storage.Role{"marie": storage.RoleManager, "einstein": storage.RoleEditor}})
	if err != nil {
		t.Fatal(err)
	}
	if sp.Type != storage.SpaceProject || sp.Name != "Physics" || sp.Quota != 1000 || len(sp.Members) != 2 {
		t.Fatalf("created = %+v", sp)
	}
	root, err := s.Node(ctx, "project-1", "project-1")
	if err != nil || !root.IsFolder() || root.SpaceID != "project-1" {
		t.Fatalf("root = %+v, %v", root, err)
	}
	dir, err := s.Mkdir(ctx, "project-1", "project-1", "papers")
	if err != nil {
		t.Fatal(err)
	}

	// Update: name, quota and members replaced, root kept.
	sp, err = s.PutSpace(ctx, storage.Space{ID: "project-1", Type: storage.SpaceProject, Name: "Physics 2", Quota: storage.NoQuota,
		Members: map[string]storage.Role{"bohr": storage.RoleViewer}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Space(ctx, "project-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Physics 2" || got.Quota != storage.NoQuota || len(got.Members) != 1 || got.Members["bohr"] != storage.RoleViewer {
		t.Fatalf("updated = %+v", got)
	}
	if got.RoleOf(storage.User{ID: "marie"}) != storage.RoleNone {
		t.Fatal("old member kept")
	}
	if _, err := s.Node(ctx, "project-1", dir.ID); err != nil {
		t.Fatalf("content lost on update: %v", err)
	}

	// Quota on a personal space can be set; type and owner stay.
	p, err := s.PutSpace(ctx, storage.Space{ID: f.space.ID, Name: "mine", Quota: 42})
	if err != nil || p.Type != storage.SpacePersonal || p.Owner != "einstein" || p.Quota != 42 {
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
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.PutSpace(ctx, tc.sp)
			wantErr(t, err, tc.want)
		})
	}
}
