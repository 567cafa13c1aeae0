package boltstore

import (
	"fmt"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// The expiry pass reads a space's trash in the order it was deleted and
// stops at the first item it keeps: an item after it, here one that
// cannot even be read, is not looked at, and the next space's expired
// items are found all the same.
func TestExpiredTrashStopsAtTheFirstKept(t *testing.T) {
	f := newFixture(t)
	f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{Trash: 90 * time.Minute, VersionsFor: time.Hour, VersionsMax: 10}})
	project, err := f.s.PutSpace(ctx, storage.Space{ID: "project", Name: "P", Quota: storage.NoQuota})
	if err != nil {
		t.Fatal(err)
	}
	spaces := []*fixture{f, f.inSpace(project.ID)}
	var want []string
	for hour := range 3 {
		for _, g := range spaces {
			n := g.put(t, g.root(), fmt.Sprintf("f%d", hour), "content") // a name of its own: the same one would revive the deleted file
			if err := f.s.Remove(ctx, g.space.ID, n.ID, storage.Conditions{}); err != nil {
				t.Fatal(err)
			}
			if hour == 0 {
				want = append(want, g.space.ID+"/"+storage.TrashKey(f.clk.Now(), n.ID))
			}
		}
		f.clk.Advance(time.Hour)
	}
	f.corrupt(t, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTrash).Put(trashItemKey(f.space.ID, storage.TrashKey(f.clk.Now(), "unreadable")), []byte{0xff})
	})
	var got []string
	err = f.s.view(func(tx *txn) error {
		tx.now = f.clk.Now().Add(-time.Hour) // two hours after the first deletes
		expired, err := tx.expiredTrash(expireBatch)
		for _, e := range expired {
			got = append(got, e.spaceID+"/"+e.kept.TrashKey)
		}
		return err
	})
	slices.Sort(got)
	slices.Sort(want)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("expired = %v, %v; want %v", got, err, want)
	}
}

// An expiry pass reads a bounded number of versions and the next one goes
// on from there: expired versions go over several passes, none read twice
// while others wait, and a pass after the last file starts again at the
// first.
func TestExpiryReadsVersionsInParts(t *testing.T) {
	f := newFixture(t)
	f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{Trash: time.Hour, VersionsFor: time.Hour, VersionsMax: 10}})
	f.s.versionSweep.budget = 2
	var files []storage.Node
	for i := range 3 {
		for v := range 3 { // two versions each
			files = append(files, f.put(t, f.root(), fmt.Sprintf("f%d", i), fmt.Sprint("content ", v)))
		}
	}
	f.clk.Advance(time.Hour)
	for pass, want := range []int{2, 2, 2, 0} {
		if n, err := f.s.ExpireUndo(ctx); err != nil || n != want {
			t.Fatalf("pass %d: ExpireUndo = %d, %v; want %d", pass, n, err, want)
		}
	}
	f.put(t, f.root(), "f0", "a new content")
	f.clk.Advance(time.Hour)
	if n, err := f.s.ExpireUndo(ctx); err != nil || n != 1 {
		t.Fatalf("ExpireUndo after the last file = %d, %v; want 1", n, err)
	}
	for _, n := range files {
		if vs, err := f.s.FileVersions(ctx, f.space.ID, n.ID); err != nil || len(vs) > 0 {
			t.Fatalf("versions of %s: %v, %v", n.Name, vs, err)
		}
	}
}
