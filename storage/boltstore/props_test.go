package boltstore

import (
	"slices"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func prop(ns, local, user, value string) storage.Property {
	return storage.Property{Name: storage.PropName{Space: ns, Local: local}, User: user, Value: value}
}

func set(p storage.Property) storage.PropPatch { return storage.PropPatch{Property: p} }
func remove(p storage.Property) storage.PropPatch {
	return storage.PropPatch{Property: p, Remove: true}
}

func TestProps(t *testing.T) {
	f := newFixture(t)
	f.keepNoUndo() // what is removed or replaced is destroyed at once
	dir := f.mkdir(t, f.root(), "dir")
	file := f.put(t, dir.ID, "f", "x")
	other := f.put(t, dir.ID, "other", "y")
	const oc = "http://owncloud.org/ns"
	color := prop("urn:x", "color", "", "<b>red</b>")
	favE := prop(oc, "favorite", "einstein", "1")
	favM := prop(oc, "favorite", "marie", "1")
	before := f.chain(t, file.ID)

	if err := f.s.PatchProps(ctx, f.space.ID, file.ID, []storage.PropPatch{set(color), set(favE), set(favM), remove(prop("urn:x", "absent", "", ""))}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.PatchProps(ctx, f.space.ID, other.ID, []storage.PropPatch{set(prop("urn:x", "color", "", "blue"))}); err != nil {
		t.Fatal(err)
	}
	// Dead properties do not change etags or times.
	for _, b := range before {
		if a := f.node(t, b.ID); a != b {
			t.Fatalf("%q changed: %+v → %+v", b.Name, b, a)
		}
	}
	for _, tc := range []struct {
		user string
		want []storage.Property
	}{
		{"", []storage.Property{color}},
		{"einstein", []storage.Property{color, favE}},
		{"marie", []storage.Property{color, favM}},
		{"bohr", []storage.Property{color}},
	} {
		got, err := f.s.Props(ctx, f.space.ID, file.ID, tc.user)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Fatalf("Props(%q) = %+v, %v; want %+v", tc.user, got, err, tc.want)
		}
	}
	// Update and remove.
	color2 := prop("urn:x", "color", "", "green")
	if err := f.s.PatchProps(ctx, f.space.ID, file.ID, []storage.PropPatch{set(color2), remove(favE)}); err != nil {
		t.Fatal(err)
	}
	got, _ := f.s.Props(ctx, f.space.ID, file.ID, "einstein")
	if !slices.Equal(got, []storage.Property{color2}) {
		t.Fatalf("after update = %+v", got)
	}
	// All or nothing: an invalid patch applies none.
	err := f.s.PatchProps(ctx, f.space.ID, file.ID, []storage.PropPatch{set(prop("urn:x", "new", "", "v")), set(prop("urn:x", "", "", "v"))})
	wantErr(t, err, storage.ErrInvalid)
	got, _ = f.s.Props(ctx, f.space.ID, file.ID, "")
	if !slices.Equal(got, []storage.Property{color2}) {
		t.Fatalf("after failed patch = %+v", got)
	}
	// Properties survive a move.
	if _, _, err := f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: dir.ID, NewParentID: f.root(), NewName: "moved"}); err != nil {
		t.Fatal(err)
	}
	got, _ = f.s.Props(ctx, f.space.ID, file.ID, "marie")
	if !slices.Equal(got, []storage.Property{color2, favM}) {
		t.Fatalf("after move = %+v", got)
	}
	// And go with a remove; the sibling keeps its own.
	if err := f.s.Remove(ctx, f.space.ID, file.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.Props(ctx, f.space.ID, file.ID, "")
	wantErr(t, err, storage.ErrNotFound)
	f.s.view(func(tx *txn) error {
		if n := tx.props().Stats().KeyN; n != 1 {
			t.Errorf("%d properties stored, want 1", n)
		}
		return nil
	})
	got, _ = f.s.Props(ctx, f.space.ID, other.ID, "")
	if len(got) != 1 || got[0].Value != "blue" {
		t.Fatalf("sibling props = %+v", got)
	}
	err = f.s.PatchProps(ctx, f.space.ID, "missing", []storage.PropPatch{set(color)})
	wantErr(t, err, storage.ErrNotFound)
}

// A node id that is a prefix of another must not see its properties.
func TestPropsPrefixIsolation(t *testing.T) {
	f := newFixture(t)
	if _, err := f.s.PutSpace(ctx, storage.Space{ID: "ab", Quota: storage.NoQuota}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.PutSpace(ctx, storage.Space{ID: "a", Quota: storage.NoQuota}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.PatchProps(ctx, "ab", "ab", []storage.PropPatch{set(prop("", "p", "", "v"))}); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.Props(ctx, "a", "a", "")
	if err != nil || len(got) != 0 {
		t.Fatalf("props of a = %+v, %v", got, err)
	}
	// Same for children: folder "a" must not list children of "ab".
	if _, err := f.s.Mkdir(ctx, "ab", "ab", "x"); err != nil {
		t.Fatal(err)
	}
	nodes, err := f.s.ReadDir(ctx, "a", "a", "", 0)
	if err != nil || len(nodes) != 0 {
		t.Fatalf("children of a = %+v, %v", nodes, err)
	}
}

// TestPropReaderAcrossNodes reads the properties of several nodes with one
// reader, as a listing does: each node's are its own, whatever the
// neighbours, the order of reading and users whose ids share a prefix.
func TestPropReaderAcrossNodes(t *testing.T) {
	f := newFixture(t)
	dir := f.mkdir(t, f.root(), "dir")
	const oc = "http://owncloud.org/ns"
	color := prop("urn:x", "color", "", "red")
	favE := prop(oc, "favorite", "einstein", "1")
	favEin := prop(oc, "favorite", "ein", "1")
	favM := prop(oc, "favorite", "marie", "1")
	nodes := map[string][]storage.Property{
		"none":        nil,
		"shared":      {color},
		"mine":        {favE},
		"both":        {color, favE, favM},
		"others only": {favEin, favM},
	}
	ids := map[string]string{}
	for name, props := range nodes {
		n := f.put(t, dir.ID, name, "x")
		ids[name] = n.ID
		var patches []storage.PropPatch
		for _, p := range props {
			patches = append(patches, set(p))
		}
		if err := f.s.PatchProps(ctx, f.space.ID, n.ID, patches); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		node, user string
		want       []storage.Property
	}{
		{"none", "einstein", nil},
		{"both", "einstein", []storage.Property{color, favE}},
		{"shared", "einstein", []storage.Property{color}},
		{"mine", "einstein", []storage.Property{favE}},
		{"others only", "einstein", nil},
		{"others only", "ein", []storage.Property{favEin}},
		{"both", "", []storage.Property{color}},
		{"both", "marie", []storage.Property{color, favM}},
		{"mine", "", nil},
		{"none", "marie", nil},
	}
	err := f.s.view(func(tx *txn) error {
		r := tx.newPropReader()
		for _, tt := range tests {
			got, err := r.read(ids[tt.node], tt.user)
			if err != nil {
				return err
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("%s as %q: %+v, want %+v", tt.node, tt.user, got, tt.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
