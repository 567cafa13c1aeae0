package boltstore

import (
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func TestWalk(t *testing.T) {
	f := newFixture(t)
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, a.ID, "b")
	file := f.put(t, b.ID, "file", "x")
	other, err := f.s.PutSpace(ctx, storage.Space{ID: "other", Quota: storage.NoQuota})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		spaceID string
		from    string
		names   []string
		want    []string // ids
		err     error
	}{
		{"the node alone", f.space.ID, f.root(), nil, []string{f.root()}, nil},
		{"a whole path", f.space.ID, f.root(), []string{"a", "b", "file"}, []string{f.root(), a.ID, b.ID, file.ID}, nil},
		{"from a folder below the root", f.space.ID, a.ID, []string{"b"}, []string{a.ID, b.ID}, nil},
		{"stops at a missing name", f.space.ID, f.root(), []string{"a", "nope", "file"}, []string{f.root(), a.ID}, nil},
		{"stops below a file", f.space.ID, f.root(), []string{"a", "b", "file", "x"}, []string{f.root(), a.ID, b.ID, file.ID}, nil},
		{"an invalid name", f.space.ID, f.root(), []string{"a", ".."}, nil, storage.ErrInvalid},
		{"an invalid name below a file is not looked up", f.space.ID, file.ID, []string{".."}, []string{file.ID}, nil},
		{"a missing node", f.space.ID, "missing", []string{"a"}, nil, storage.ErrNotFound},
		{"a node of another space", other.ID, a.ID, nil, nil, storage.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes, err := f.s.Walk(ctx, tc.spaceID, tc.from, tc.names)
			wantErr(t, err, tc.err)
			var ids []string
			for _, n := range nodes {
				ids = append(ids, n.ID)
			}
			if len(ids) != len(tc.want) {
				t.Fatalf("walked %v, want %v", ids, tc.want)
			}
			for i := range ids {
				if ids[i] != tc.want[i] {
					t.Fatalf("walked %v, want %v", ids, tc.want)
				}
			}
		})
	}
}
