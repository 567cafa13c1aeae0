package boltstore

import (
	"fmt"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// A database from before the name index gets one at Open, with every live
// node in it and nothing of the trash.
func TestBuildNameIndexOfOlderDatabase(t *testing.T) {
	f := newFixture(t)
	dir := f.mkdir(t, f.root(), "Needle Folder")
	f.put(t, dir.ID, "needle.txt", "x")
	f.put(t, f.root(), "NEEDLE live", "y")
	gone := f.put(t, f.root(), "gone needle", "z")
	if err := f.s.Remove(ctx, f.space.ID, gone.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	f.s.Close()
	db, err := bolt.Open(f.dir+"/"+dbFile, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketNames); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Delete(keyNameIndex)
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	s := openStore(t, f.dir, f.clk)
	found, err := s.SearchNames(ctx, storage.SearchScope{SpaceID: f.space.ID}, "needle")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range found.Nodes {
		names = append(names, n.Name)
	}
	if want := []string{"Needle Folder", "NEEDLE live", "needle.txt"}; !slices.Equal(names, want) || found.Total != 3 {
		t.Fatalf("found %q (total %d), want %q", names, found.Total, want)
	}
}

// seedSearchSpace fills the space with folders of files, files folders
// times in all, named file-00000.txt and on in each folder.
func (f *fixture) seedSearchSpace(b *testing.B, folders, files int) {
	b.Helper()
	for i := range folders {
		dir := f.mkdir(b, f.root(), fmt.Sprintf("folder %03d", i))
		f.seedFiles(b, dir.ID, files/folders)
	}
}

// BenchmarkSearchNames100000 searches a space of 100,000 files in 100
// folders: a pattern matching 100 of them, and one matching them all
// answering its first page of 100 with the total.
func BenchmarkSearchNames100000(b *testing.B) {
	f := newFixture(b)
	f.seedSearchSpace(b, 100, 100000)
	for _, tc := range []struct {
		pattern string
		total   int
	}{
		{"00042", 100},
		{"FILE", 100000},
	} {
		b.Run(tc.pattern, func(b *testing.B) {
			scope := storage.SearchScope{SpaceID: f.space.ID, Limit: 100}
			b.ReportAllocs()
			for b.Loop() {
				found, err := f.s.SearchNames(ctx, scope, tc.pattern)
				if err != nil || found.Total != tc.total {
					b.Fatalf("SearchNames = %d, %v", found.Total, err)
				}
			}
		})
	}
}
