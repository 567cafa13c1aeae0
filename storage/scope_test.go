package storage

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewScope(t *testing.T) {
	for _, tc := range []struct {
		space, path string
		want        Scope
		err         error
	}{
		{"", "", Scope{}, nil},
		{"s", "", Scope{Space: "s"}, nil},
		{"s", "/", Scope{Space: "s"}, nil},
		{"s", "Photos", Scope{Space: "s", Path: "/Photos"}, nil},
		{"s", "//Photos/2024/", Scope{Space: "s", Path: "/Photos/2024"}, nil},
		{"", "/Photos", Scope{}, ErrInvalid},
		{"s", "/a/../b", Scope{}, ErrInvalid},
		{"s", "/a/./b", Scope{}, ErrInvalid},
		{"s", "/a\x00b", Scope{}, ErrInvalid},
		{"s", strings.Repeat("/a", MaxPathSegments+1), Scope{}, ErrInvalid},
	} {
		got, err := NewScope(tc.space, tc.path, false)
		if !errors.Is(err, tc.err) || err == nil && got != tc.want {
			t.Errorf("NewScope(%q, %q) = %+v, %v; want %+v, %v", tc.space, tc.path, got, err, tc.want, tc.err)
		}
	}
}

func TestScopeReaches(t *testing.T) {
	whole := Scope{}
	space := Scope{Space: "s"}
	folder := Scope{Space: "s", Path: "/Photos/2024"}
	for _, tc := range []struct {
		scope Scope
		space string
		names []string
		want  bool
	}{
		{whole, "s", nil, true},
		{whole, "t", []string{"x"}, true},
		{space, "s", nil, true},
		{space, "s", []string{"a", "b"}, true},
		{space, "t", nil, false},
		{space, "t", []string{"a"}, false},
		{folder, "s", []string{"Photos", "2024"}, true},
		{folder, "s", []string{"Photos", "2024", "x.jpg"}, true},
		{folder, "s", []string{"Photos", "2024", "a", "b"}, true},
		// The ancestors, the space's root among them, are not reached.
		{folder, "s", nil, false},
		{folder, "s", []string{"Photos"}, false},
		// Neighbours whose names begin alike are not either.
		{folder, "s", []string{"Photos", "2024-old"}, false},
		{folder, "s", []string{"Photos", "202"}, false},
		{folder, "s", []string{"Photos2024"}, false},
		{folder, "s", []string{"Other", "2024"}, false},
		{folder, "t", []string{"Photos", "2024"}, false},
	} {
		if got := tc.scope.Reaches(tc.space, tc.names); got != tc.want {
			t.Errorf("%+v.Reaches(%q, %q) = %v, want %v", tc.scope, tc.space, tc.names, got, tc.want)
		}
	}
}

func TestScopeMethodsAndRoles(t *testing.T) {
	ro := Scope{ReadOnly: true}
	for _, m := range []string{"GET", "HEAD", "OPTIONS", "PROPFIND", "REPORT", "SEARCH"} {
		if !ro.AllowsMethod(m) {
			t.Errorf("read-only refuses %s", m)
		}
	}
	for _, m := range []string{"PUT", "POST", "PATCH", "DELETE", "MKCOL", "MOVE", "COPY", "PROPPATCH", "LOCK", "UNLOCK", "get", "BREW"} {
		if ro.AllowsMethod(m) {
			t.Errorf("read-only lets %s through", m)
		}
		if !(Scope{}).AllowsMethod(m) {
			t.Errorf("the zero scope refuses %s", m)
		}
	}

	personal := Space{ID: "p", Type: SpacePersonal, Owner: "alice"}
	project := Space{ID: "lab", Type: SpaceProject, Members: map[string]Role{"alice": RoleEditor, "group:admins": RoleManager}}
	for _, tc := range []struct {
		scope Scope
		space Space
		want  Role
	}{
		{Scope{}, personal, RoleManager},
		{Scope{ReadOnly: true}, personal, RoleViewer},
		{Scope{Space: "p"}, personal, RoleManager},
		{Scope{Space: "p", Path: "/x"}, personal, RoleManager},
		{Scope{Space: "p"}, project, RoleNone},
		{Scope{Space: "lab", ReadOnly: true}, project, RoleViewer},
		{Scope{Space: "lab"}, project, RoleEditor},
		{Scope{Space: "lab"}, personal, RoleNone},
	} {
		u := User{ID: "alice", Scope: tc.scope}
		if got := tc.space.RoleOf(u); got != tc.want {
			t.Errorf("%s.RoleOf(alice, %+v) = %v, want %v", tc.space.ID, tc.scope, got, tc.want)
		}
	}
	if got := project.RoleOf(User{ID: "bob", Groups: []string{"admins"}, Scope: Scope{ReadOnly: true}}); got != RoleViewer {
		t.Errorf("a group's manager through a read-only scope: %v", got)
	}
	if (Scope{Space: "s"}).ReachesShares() || !(Scope{ReadOnly: true}).ReachesShares() {
		t.Error("shares are reached exactly by scopes without a space")
	}
}

// nodeTree is a NodeReader of fixed nodes.
type nodeTree map[string]Node

func (tr nodeTree) Node(_ context.Context, _, id string) (Node, error) {
	n, ok := tr[id]
	if !ok {
		return Node{}, ErrNotFound
	}
	return n, nil
}

func TestScopeReachesNode(t *testing.T) {
	tree := nodeTree{
		"s":    {ID: "s", SpaceID: "s", Kind: KindFolder},
		"ph":   {ID: "ph", SpaceID: "s", ParentID: "s", Name: "Photos", Kind: KindFolder},
		"y24":  {ID: "y24", SpaceID: "s", ParentID: "ph", Name: "2024", Kind: KindFolder},
		"img":  {ID: "img", SpaceID: "s", ParentID: "y24", Name: "a.jpg", Kind: KindFile},
		"doc":  {ID: "doc", SpaceID: "s", ParentID: "s", Name: "doc.txt", Kind: KindFile},
		"lost": {ID: "lost", SpaceID: "s", ParentID: "gone", Name: "x"},
	}
	folder := Scope{Space: "s", Path: "/Photos/2024"}
	for id, want := range map[string]bool{"s": false, "ph": false, "y24": true, "img": true, "doc": false} {
		got, err := folder.ReachesNode(context.Background(), tree, tree[id])
		if err != nil || got != want {
			t.Errorf("ReachesNode(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
	if _, err := folder.ReachesNode(context.Background(), tree, tree["lost"]); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReachesNode below a missing folder: %v", err)
	}
	// Without a folder nothing is read.
	if got, err := (Scope{Space: "s"}).ReachesNode(context.Background(), nil, tree["lost"]); err != nil || !got {
		t.Errorf("a space scope: %v, %v", got, err)
	}
}

func TestSignInIdle(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	seen := func(ago time.Duration) DirectoryEntry { return DirectoryEntry{ID: "alice", Seen: now.Add(-ago)} }
	for _, tc := range []struct {
		name  string
		entry DirectoryEntry
		found bool
		idle  time.Duration
		want  bool
	}{
		{"off", seen(365 * 24 * time.Hour), true, 0, false},
		{"off, never signed in", DirectoryEntry{}, false, 0, false},
		{"signed in lately", seen(24 * time.Hour), true, 30 * 24 * time.Hour, false},
		{"exactly idle", seen(30 * 24 * time.Hour), true, 30 * 24 * time.Hour, false},
		{"idle too long", seen(30*24*time.Hour + time.Second), true, 30 * 24 * time.Hour, true},
		{"never signed in", DirectoryEntry{}, false, 30 * 24 * time.Hour, true},
	} {
		if got := SignInIdle(tc.entry, tc.found, tc.idle, now); got != tc.want {
			t.Errorf("%s: SignInIdle = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// fakeTrash is a Trash of fixed items, recording what it purged.
type fakeTrash struct {
	Trash
	items  []TrashItem
	purged []string
}

// TrashItems pages through the items in their given order.
func (f *fakeTrash) TrashItems(_ context.Context, _, after string, limit int) ([]TrashItem, error) {
	start := 0
	if after != "" {
		start = slices.IndexFunc(f.items, func(it TrashItem) bool { return it.Key == after }) + 1
	}
	end := min(start+limit, len(f.items))
	return append([]TrashItem(nil), f.items[start:end]...), nil
}

func (f *fakeTrash) TrashNode(_ context.Context, _, key string, _ []string) (TrashItem, Node, error) {
	for _, it := range f.items {
		if it.Key == key {
			return it, it.Node, nil
		}
	}
	return TrashItem{}, Node{}, ErrNotFound
}

func (f *fakeTrash) PurgeTrash(_ context.Context, _, key string) error {
	f.purged = append(f.purged, key)
	return nil
}

func (f *fakeTrash) RestoreTrash(context.Context, string, string, Transfer) (Node, bool, error) {
	return Node{}, false, nil
}

func TestScopedTrash(t *testing.T) {
	ctx := context.Background()
	f := &fakeTrash{items: []TrashItem{
		{Key: "in", Location: "Photos/a.jpg"},
		{Key: "folder", Location: "Photos"},
		{Key: "out", Location: "Photos-old.txt"},
		{Key: "root", Location: "doc.txt"},
		{Key: "elided", Location: "…/Photos/a.jpg"},
	}}
	if got := ScopedTrash(f, Scope{Space: "s"}); got != Trash(f) {
		t.Error("a space scope wraps the trash")
	}
	st := ScopedTrash(f, Scope{Space: "s", Path: "/Photos"})
	items, err := AllTrashItems(ctx, st, "s")
	if err != nil || len(items) != 2 || items[0].Key != "in" || items[1].Key != "folder" {
		t.Fatalf("TrashItems = %+v, %v", items, err)
	}
	for key, want := range map[string]error{"in": nil, "folder": nil, "out": ErrNotFound, "root": ErrNotFound, "elided": ErrNotFound, "gone": ErrNotFound} {
		if _, _, err := st.TrashNode(ctx, "s", key, nil); !errors.Is(err, want) {
			t.Errorf("TrashNode(%s) = %v, want %v", key, err, want)
		}
		if _, _, err := st.RestoreTrash(ctx, "s", key, Transfer{}); !errors.Is(err, want) {
			t.Errorf("RestoreTrash(%s) = %v, want %v", key, err, want)
		}
	}
	if err := st.PurgeTrash(ctx, "s", "out"); !errors.Is(err, ErrNotFound) {
		t.Errorf("PurgeTrash of an item outside = %v", err)
	}
	if _, _, err := ScopedTrash(f, Scope{Space: "s", Path: "/Photos"}).TrashNode(ctx, "t", "in", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("TrashNode in another space = %v", err)
	}
	f.purged = nil
	if err := st.EmptyTrash(ctx, "s"); err != nil || len(f.purged) != 2 || f.purged[0] != "in" || f.purged[1] != "folder" {
		t.Errorf("EmptyTrash purged %v, %v; want the two inside", f.purged, err)
	}
}

// TestScopedTrashPages checks that a scope's pages are full until the
// last however many items the scope leaves out between them.
func TestScopedTrashPages(t *testing.T) {
	ctx := context.Background()
	f := &fakeTrash{items: []TrashItem{
		{Key: "9.a", Location: "Photos/a.jpg"},
		{Key: "8.b", Location: "elsewhere"},
		{Key: "7.c", Location: "elsewhere/too"},
		{Key: "6.d", Location: "Photos/d.jpg"},
		{Key: "5.e", Location: "Photos/e.jpg"},
		{Key: "4.f", Location: "doc.txt"},
	}}
	st := ScopedTrash(f, Scope{Space: "s", Path: "/Photos"})
	var pages [][]string
	after := ""
	for range len(f.items) {
		page, err := st.TrashItems(ctx, "s", after, 2)
		if err != nil {
			t.Fatalf("TrashItems after %q: %v", after, err)
		}
		var keys []string
		for _, it := range page {
			keys = append(keys, it.Key)
		}
		pages = append(pages, keys)
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].Key
	}
	want := [][]string{{"9.a", "6.d"}, {"5.e"}}
	if !reflect.DeepEqual(pages, want) {
		t.Errorf("pages = %q, want %q", pages, want)
	}
	for _, bad := range []struct {
		after string
		limit int
	}{{"", 0}, {"", -1}, {"not-a-key", 2}, {"x.y", 2}} {
		if _, err := st.TrashItems(ctx, "s", bad.after, bad.limit); !errors.Is(err, ErrInvalid) {
			t.Errorf("TrashItems(after %q, limit %d) = %v, want ErrInvalid", bad.after, bad.limit, err)
		}
	}
}
