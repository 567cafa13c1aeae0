package boltstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// expiredFolderFiles is the size of the trash item the expiry tests
// expire: more than a part of a purge.
const expiredFolderFiles = 3 * purgeNodesPerTxn

// partRecords bounds the records one transaction of a purge writes: a
// part destroys purgeNodesPerTxn nodes at most, each a few records (its
// record, its entry by id, its content reference), and the counters.
const partRecords = 4 * purgeNodesPerTxn

// txnMeter is a store's clock that also measures the records each write
// transaction writes: a write transaction reads the clock as it starts
// (writeTxn), once the one before it has committed and counted its own.
type txnMeter struct {
	clk   *clock
	store atomic.Pointer[Store]
	mu    sync.Mutex
	last  int64  // the records written when the clock was last read
	most  int64  // the most records written between two reads
	then  func() // called at each read, if set
}

func (m *txnMeter) now() time.Time {
	if s := m.store.Load(); s != nil {
		m.mu.Lock()
		w := s.RecordsWritten()
		m.most = max(m.most, w-m.last)
		m.last = w
		then := m.then
		m.mu.Unlock()
		if then != nil {
			then()
		}
	}
	return m.clk.Now()
}

// start measures the transactions of s from now on and calls then (nil:
// nothing) at the start of each.
func (m *txnMeter) start(s *Store, then func()) {
	m.mu.Lock()
	m.last, m.most, m.then = s.RecordsWritten(), 0, then
	m.mu.Unlock()
	m.store.Store(s)
}

// stop ends the measure and returns the most records a transaction wrote.
func (m *txnMeter) stop() int64 {
	m.now() // counts the last transaction
	m.store.Store(nil)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.most
}

// newMeteredFixture is newFixture with a store whose clock measures its
// transactions, trash items kept an hour.
func newMeteredFixture(t *testing.T) (*fixture, *txnMeter) {
	t.Helper()
	m := &txnMeter{clk: newClock()}
	f := newFixtureWith(t, m.clk, Options{InlineLimit: -1, Now: m.now})
	f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{Trash: time.Hour, VersionsFor: time.Hour, VersionsMax: 10}})
	return f, m
}

// wantExpired fails unless the trash item of folder dir is gone for good
// and the space holds nothing.
func (f *fixture) wantExpired(t *testing.T, dir storage.Node, when string) {
	t.Helper()
	f.put(t, f.root(), "new", strings.Repeat("x", 1000)) // wantEvicted's upload
	f.wantEvicted(t, dir, when)
	if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u.Trash != 0 || u.Files != 1000 || u.Nodes != 1 {
		t.Errorf("%s: Usage = %+v, %v; want the upload alone", when, u, err)
	}
}

// An expired trash item of many files goes in parts: the expiry commits
// several transactions, none writing more than a part, and leaves the
// item gone, the space's usage back to nothing and a store that checks
// clean.
func TestExpiryPurgesATrashItemInParts(t *testing.T) {
	f, m := newMeteredFixture(t)
	dir := f.bigTrashItem(t, expiredFolderFiles)
	f.clk.Advance(2 * time.Hour)
	before := f.s.WriteCommits()
	m.start(f.s, nil)
	n, err := f.s.ExpireUndo(ctx)
	most := m.stop()
	if err != nil || n != 1 {
		t.Fatalf("ExpireUndo = %d, %v; want the expired item", n, err)
	}
	commits := f.s.WriteCommits() - before
	t.Logf("the expiry of %d files committed %d transactions, the biggest writing %d records",
		expiredFolderFiles, commits, most)
	if commits < 3 {
		t.Errorf("the expiry of %d files committed %d transactions; want parts", expiredFolderFiles, commits)
	}
	if most > partRecords {
		t.Errorf("a transaction of the expiry wrote %d records; want %d at most", most, partRecords)
	}
	f.wantExpired(t, dir, "after the expiry")
	wantCheckClean(t, f.s, "after the expiry")
}

// A restore of an expired trash item and the expiry of it are decided by
// one of them, whole: the restore either brings back every file or finds
// nothing, and the item is then gone for good. The restore comes between
// two transactions of the expiry's purge, or races the expiry.
func TestRestoreRacingTheExpiryIsDecidedWhole(t *testing.T) {
	for _, tc := range []struct {
		name string
		race func(t *testing.T, f *fixture, m *txnMeter, restore func() error) error
	}{{
		name: "between two parts",
		race: func(t *testing.T, f *fixture, m *txnMeter, restore func() error) error {
			f.stopAfterOnePart(t, m, expiredFolderFiles, func(stopped context.Context) error {
				_, err := f.s.ExpireUndo(stopped)
				return err
			})
			return restore()
		},
	}, {
		name: "concurrently",
		race: func(t *testing.T, f *fixture, m *txnMeter, restore func() error) error {
			expired := make(chan error, 1)
			go func() {
				_, err := f.s.ExpireUndo(ctx)
				expired <- err
			}()
			err := restore()
			if err := <-expired; err != nil {
				t.Fatalf("ExpireUndo = %v", err)
			}
			return err
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f, m := newMeteredFixture(t)
			dir := f.bigTrashItem(t, expiredFolderFiles)
			item := f.onlyTrashItem(t)
			f.clk.Advance(2 * time.Hour)
			var back storage.Node
			err := tc.race(t, f, m, func() (err error) {
				back, _, err = f.s.RestoreTrash(ctx, f.space.ID, item.Key, storage.Transfer{NewParentID: f.root(), NewName: "back"})
				return err
			})
			if _, err := f.s.ExpireUndo(ctx); err != nil { // finishes what the race left
				t.Fatal(err)
			}
			switch {
			case errors.Is(err, storage.ErrNotFound):
				f.wantExpired(t, dir, "after the expiry won")
			case err != nil:
				t.Fatalf("restore: %v", err)
			default:
				files, err := f.s.ReadDir(ctx, f.space.ID, back.ID, "", 0)
				if err != nil || len(files) != expiredFolderFiles || back.Size != dir.Size {
					t.Errorf("restored: %d files of %d bytes, %v; want %d files of %d bytes",
						len(files), back.Size, err, expiredFolderFiles, dir.Size)
				}
				if u, err := f.s.Usage(ctx, f.space.ID); err != nil || u.Trash != 0 || u.Files != dir.Size {
					t.Errorf("restored: Usage = %+v, %v; want the folder's %d bytes", u, err, dir.Size)
				}
			}
			t.Logf("the restore: %v", err)
			wantCheckClean(t, f.s, "after the race")
		})
	}
}
