package storage

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTrashKey(t *testing.T) {
	at := time.Unix(1700000000, 123456789)
	key := TrashKey(at, "node-1")
	if key != "1700000000123456789.node-1" {
		t.Fatalf("TrashKey = %q", key)
	}
	if err := ValidTrashKey(key); err != nil {
		t.Fatalf("ValidTrashKey of a TrashKey: %v", err)
	}
	if ids := TrashKey(at, "a.b.c"); ValidTrashKey(ids) != nil {
		t.Fatalf("a node id with dots makes an invalid key %q", ids)
	}
	if TrashKey(at, "n") == TrashKey(at.Add(time.Nanosecond), "n") {
		t.Fatal("two deletions of one node a nanosecond apart share a key")
	}
	if TrashKey(at, "n") >= TrashKey(at.Add(time.Second), "n") {
		t.Fatal("keys do not sort by deletion time")
	}
}

func TestValidTrashKey(t *testing.T) {
	for _, tc := range []struct {
		key   string
		valid bool
	}{
		{"1700000000123456789.node-1", true},
		{"0.x", true},
		{"1.a.b", true},
		{"", false},
		{".", false},
		{"1.", false},
		{".node", false},
		{"node", false},
		{"x.node", false},
		{"1.5e3.node", true}, // the id may hold dots
		{"1e3.node", false},
		{"1/2.node", false},
		{"1.node/child", false},
		{"../1.node", false},
		{"1.no\x00de", false},
		{"1." + strings.Repeat("n", MaxNameLen), false},
		{"99999999999999999999999.node", false}, // past int64
	} {
		err := ValidTrashKey(tc.key)
		if tc.valid && err != nil {
			t.Errorf("ValidTrashKey(%q) = %v, want valid", tc.key, err)
		}
		if !tc.valid && !errors.Is(err, ErrNotFound) {
			t.Errorf("ValidTrashKey(%q) = %v, want ErrNotFound", tc.key, err)
		}
	}
}

func TestTrashLocation(t *testing.T) {
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"f"}, "f"},
		{[]string{"a", "b", "c.txt"}, "a/b/c.txt"},
	} {
		if got := TrashLocation(tc.names); got != tc.want {
			t.Errorf("TrashLocation(%q) = %q, want %q", tc.names, got, tc.want)
		}
	}
}

// A location past MaxTrashLocationBytes, in a tree made deep by moves,
// keeps its last names only: one node's trash entry stays bounded.
func TestTrashLocationBounded(t *testing.T) {
	long := strings.Repeat("n", 255)
	fits := slices.Repeat([]string{long}, MaxTrashLocationBytes/256)
	if got := TrashLocation(fits); got != strings.Join(fits, "/") {
		t.Fatalf("a location of %d bytes was cut", len(strings.Join(fits, "/")))
	}
	deep := append(slices.Repeat([]string{long}, 1000), "last")
	got := TrashLocation(deep)
	if len(got) > MaxTrashLocationBytes || !strings.HasPrefix(got, "…/") || !strings.HasSuffix(got, "/"+long+"/last") {
		t.Fatalf("a location 1,000 folders deep became %d bytes: %.40q…%.40q", len(got), got, got[max(len(got)-40, 0):])
	}
}

func TestSortTrash(t *testing.T) {
	t0 := time.Unix(1000, 0)
	items := []TrashItem{
		{Key: "b", Deleted: t0},
		{Key: "c", Deleted: t0.Add(time.Hour)},
		{Key: "a", Deleted: t0},
		{Key: "d", Deleted: t0.Add(-time.Hour)},
	}
	SortTrash(items)
	var keys []string
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	if want := []string{"c", "a", "b", "d"}; !slices.Equal(keys, want) {
		t.Fatalf("SortTrash = %v, want %v", keys, want)
	}
}

func TestReviving(t *testing.T) {
	t0 := time.Unix(1000, 0)
	file := func(key, parent, name string, deleted time.Time) TrashItem {
		return TrashItem{Key: key, Node: Node{ID: key, ParentID: parent, Name: name, Kind: KindFile}, Deleted: deleted}
	}
	folder := TrashItem{Key: "folder", Node: Node{ID: "folder", ParentID: "p", Name: "f", Kind: KindFolder}, Deleted: t0.Add(time.Hour)}
	items := []TrashItem{
		file("old", "p", "f", t0),
		folder,
		file("new", "p", "f", t0.Add(time.Minute)),
		file("elsewhere", "q", "f", t0.Add(2*time.Hour)),
		file("other-name", "p", "F", t0.Add(2*time.Hour)),
	}
	for _, tc := range []struct {
		parent, name string
		want         string // key, "" for none
	}{
		{"p", "f", "new"},
		{"q", "f", "elsewhere"},
		{"p", "F", "other-name"},
		{"p", "g", ""},
		{"r", "f", ""},
	} {
		got, ok := Reviving(items, tc.parent, tc.name)
		if ok != (tc.want != "") || got.Key != tc.want {
			t.Errorf("Reviving(%q, %q) = %q, %v; want %q", tc.parent, tc.name, got.Key, ok, tc.want)
		}
	}
	if _, ok := Reviving(nil, "p", "f"); ok {
		t.Error("Reviving found an item in an empty trash")
	}
	if _, ok := Reviving([]TrashItem{folder}, "p", "f"); ok {
		t.Error("a file revived a folder")
	}
}
