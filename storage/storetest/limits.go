package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func testPropNameLimit(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "x")
	long := strings.Repeat("n", storage.MaxPropNameBytes)
	tests := []struct {
		name string
		prop storage.Property
		want error
	}{
		{"longest namespace", prop(long, "a", "", "1"), nil},
		{"longest local name", prop("urn:x", long, "", "1"), nil},
		{"namespace too long", prop(long+"n", "a", "", "1"), storage.ErrInvalid},
		{"local name too long", prop("urn:x", long+"n", "", "1"), storage.ErrInvalid},
		{"far too long", prop("urn:x", strings.Repeat("n", 40<<10), user.ID, "1"), storage.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, remove := range []bool{false, true} {
				err := f.s.PatchProps(f.ctx, f.space.ID, file.ID, []storage.PropPatch{{Property: tt.prop, Remove: remove}})
				wantErr(t, fmt.Sprint("PatchProps remove=", remove), err, tt.want)
			}
		})
	}
	if props, err := f.s.Props(f.ctx, f.space.ID, file.ID, user.ID); err != nil || len(props) != 0 {
		t.Fatalf("props left = %d, %v", len(props), err)
	}
}

// countProps returns how many properties node id has for user.
func (f *fixture) countProps(t *testing.T, id, who string) int {
	t.Helper()
	props, err := f.s.Props(f.ctx, f.space.ID, id, who)
	if err != nil {
		t.Fatalf("Props: %v", err)
	}
	return len(props)
}

func numbered(n int, user, value string) []storage.PropPatch {
	patches := make([]storage.PropPatch, n)
	for i := range patches {
		patches[i] = set(prop("urn:x", fmt.Sprint("p", i), user, value))
	}
	return patches
}

// Each scope of a node (the shared properties, each user's) holds at most
// MaxPropsPerNode properties of MaxPropBytesPerNode bytes; a patch going
// over changes nothing, and one that shrinks always succeeds.
func testPropLimits(t *testing.T, f *fixture) {
	full := f.put(t, f.root(), "full", "x")
	f.patch(t, full.ID, numbered(storage.MaxPropsPerNode, "", "v")...)
	err := f.s.PatchProps(f.ctx, f.space.ID, full.ID, []storage.PropPatch{set(prop("urn:x", "one-more", "", "v"))})
	wantErr(t, "property over the count", err, storage.ErrInsufficientStorage)
	// Replacing and removing still work; another scope has its own count.
	f.patch(t, full.ID, set(prop("urn:x", "p0", "", "new value")))
	f.patch(t, full.ID, set(prop(ocNS, "favorite", user.ID, "1")))
	f.patch(t, full.ID, storage.PropPatch{Property: prop("urn:x", "p1", "", ""), Remove: true},
		set(prop("urn:x", "instead", "", "v")))
	if got := f.countProps(t, full.ID, ""); got != storage.MaxPropsPerNode {
		t.Fatalf("%d shared properties, want %d", got, storage.MaxPropsPerNode)
	}

	big := f.put(t, f.root(), "big", "x")
	name := prop("urn:x", "v", "", "")
	fits := strings.Repeat("v", storage.MaxPropBytesPerNode-len(name.Name.Space)-len(name.Name.Local))
	err = f.s.PatchProps(f.ctx, f.space.ID, big.ID, []storage.PropPatch{set(prop("urn:x", "v", "", fits+"v"))})
	wantErr(t, "property over the size", err, storage.ErrInsufficientStorage)
	f.patch(t, big.ID, set(prop("urn:x", "v", "", fits)))
	err = f.s.PatchProps(f.ctx, f.space.ID, big.ID, []storage.PropPatch{set(prop("urn:x", "w", "", ""))})
	wantErr(t, "property over the size", err, storage.ErrInsufficientStorage)
	f.patch(t, big.ID, set(prop("urn:x", "w", user.ID, fits[:1000])))
	f.patch(t, big.ID, set(prop("urn:x", "v", "", "small")), set(prop("urn:x", "w", "", fits[:1000])))
	if got := f.countProps(t, big.ID, user.ID); got != 3 {
		t.Fatalf("%d properties, want 3", got)
	}

	// All or nothing: a patch going over in any scope applies nothing.
	fresh := f.put(t, f.root(), "fresh", "x")
	patches := append(numbered(storage.MaxPropsPerNode+1, user.ID, "v"), set(prop("urn:x", "shared", "", "v")))
	err = f.s.PatchProps(f.ctx, f.space.ID, fresh.ID, patches)
	wantErr(t, "patch over the count", err, storage.ErrInsufficientStorage)
	if got := f.countProps(t, fresh.ID, user.ID); got != 0 {
		t.Fatalf("failed patch left %d properties", got)
	}
}

// A personal space without a quota of its own has the store's default,
// which can change while the store is open.
func testPersonalQuota(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "file", "12345")
	project, err := f.s.PutSpace(f.ctx, storage.Space{ID: "storetest-project", Name: "P", Quota: storage.NoQuota})
	if err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	f.s.SetPersonalQuota(10)
	f.checkQuota(t, 10)
	if sp, err := f.s.Space(f.ctx, project.ID); err != nil || sp.Quota != storage.NoQuota {
		t.Fatalf("project space quota = %d, %v", sp.Quota, err)
	}
	_, _, err = f.commit(f.space.ID, "123456", storage.Commit{ParentID: f.root(), Name: "over"})
	wantErr(t, "commit over the quota", err, storage.ErrInsufficientStorage)
	f.put(t, f.root(), "fits", "12345")
	_, _, err = f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "copy"})
	wantErr(t, "copy over the quota", err, storage.ErrInsufficientStorage)
	if _, err := f.s.PutSpace(f.ctx, storage.Space{ID: f.space.ID, Name: f.space.Name, Quota: 100}); err != nil {
		t.Fatalf("PutSpace personal: %v", err)
	}
	f.checkQuota(t, 100)
	if _, err := f.s.PutSpace(f.ctx, storage.Space{ID: f.space.ID, Name: f.space.Name, Quota: storage.NoQuota}); err != nil {
		t.Fatalf("PutSpace personal: %v", err)
	}
	f.checkQuota(t, 10)

	f.s.SetPersonalQuota(0)
	f.checkQuota(t, storage.NoQuota)
	if _, _, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "copy"}); err != nil {
		t.Fatalf("copy without quota: %v", err)
	}
}

// checkQuota checks the quota Space and PersonalSpace report.
func (f *fixture) checkQuota(t *testing.T, want int64) {
	t.Helper()
	sp, err := f.s.Space(f.ctx, f.space.ID)
	if err != nil || sp.Quota != want {
		t.Fatalf("Space quota = %d, %v; want %d", sp.Quota, err, want)
	}
	sp, err = f.s.PersonalSpace(f.ctx, user)
	if err != nil || sp.Quota != want {
		t.Fatalf("PersonalSpace quota = %d, %v; want %d", sp.Quota, err, want)
	}
}
