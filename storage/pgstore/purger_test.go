package pgstore

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// purgesDone waits until no trash item of s is being purged.
func purgesDone(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var purging int
		if err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM trash_items WHERE purging`).Scan(&purging); err != nil {
			t.Fatal(err)
		}
		if purging == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d purges still under way", purging)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requireTreeClean fails on any problem a check finds but missing
// content: the tests' big folders have objects never written.
func requireTreeClean(t *testing.T, s *Store) {
	t.Helper()
	problems, _ := runCheck(t, s, storage.CheckOptions{})
	for _, p := range problems {
		if p.Kind != storage.ProblemMissingContent {
			t.Errorf("unexpected problem: %s", p)
		}
	}
}

// watchTransactions samples the longest transaction on s's database
// (longestTransaction) until the returned function is called, which
// returns it.
func watchTransactions(t *testing.T, s *Store) func() (time.Duration, string) {
	stop := make(chan struct{})
	var (
		wg        sync.WaitGroup
		longest   time.Duration
		statement string
	)
	wg.Go(func() { longest, statement = longestTransaction(t, s, stop) })
	var once sync.Once
	end := func() {
		once.Do(func() { close(stop) })
		wg.Wait()
	}
	t.Cleanup(end) // before the store closes, which waits for its connection
	return func() (time.Duration, string) {
		end()
		return longest, statement
	}
}

// bigFolderFiles is the size of the trees these tests remove and evict.
const bigFolderFiles = 20_000

// TestRemoveWithoutTrashInParts: in a space that keeps no trash, the
// remove of a folder of 20,000 files hides the tree in one short
// transaction and destroys it in parts after, none of which holds a
// transaction open for a second or for more than a small share of the
// whole; when the remove returns, the tree is gone, the space's usage
// back to nothing, and the store checks clean.
func TestRemoveWithoutTrashInParts(t *testing.T) {
	s := openTestStore(t, checkOpts)
	s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{VersionsOff: true}})
	sp := personal(t, s)
	ctx := t.Context()
	id := bigFolder(t, s, sp.ID, bigFolderFiles)

	longest := watchTransactions(t, s)
	start := time.Now()
	if err := s.Remove(ctx, sp.ID, id, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	tx, statement := longest()
	t.Logf("remove of %d files: %v; longest transaction %v (%s)", bigFolderFiles, took, tx, statement)
	wantShortTransactions(t, tx, took, statement)
	purgesDone(t, s)
	var left int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE id LIKE 'big-%'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("after the remove: %d of its nodes left (%v)", left, err)
	}
	if u, err := s.Usage(ctx, sp.ID); err != nil || u != (storage.Usage{}) {
		t.Errorf("after the remove: Usage = %+v, %v; want nothing", u, err)
	}
	if !swept(t, s, "files/big-1") {
		t.Error("the destroyed files' objects are not handed to the sweep")
	}
	requireTreeClean(t, s)
}

// wantShortTransactions fails when the longest transaction of a change
// that took took lasted a second, or more than a fifth of the whole (one
// transaction for all of it takes all of it, on a slow machine too).
func wantShortTransactions(t *testing.T, longest, took time.Duration, statement string) {
	t.Helper()
	if longest > time.Second || longest > took/5 {
		t.Errorf("longest transaction %v of %v, running %s; want none over 1 s or a fifth of the whole",
			longest, took, strings.TrimSpace(statement))
	}
}

// TestEvictionHidesThenPurgesInParts: an upload that needs the room of a
// trash item of 20,000 files hides the item in its own transaction, its
// room free at once, and purges it in parts once that commits, none of
// which holds a transaction open for long; the quota holds throughout
// and the store checks clean.
func TestEvictionHidesThenPurgesInParts(t *testing.T) {
	s := openTestStore(t, checkOpts)
	sp := personal(t, s)
	ctx := t.Context()
	bigTrashItem(t, s, sp.ID, bigFolderFiles)
	// The upload replaces a file and keeps no version: it needs bytes,
	// not nodes, which the SQL made beyond the space's node cap.
	s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{Trash: time.Hour, VersionsOff: true}})
	put(t, s, sp.ID, sp.ID, "new", "x")
	u, err := s.Usage(ctx, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	quota := u.Used() + bigFolderFiles/4
	s.SetPersonalQuota(quota)

	longest := watchTransactions(t, s)
	content := strings.Repeat("x", bigFolderFiles/2) // needs the item's room
	start := time.Now()
	put(t, s, sp.ID, sp.ID, "new", content)
	took := time.Since(start)
	tx, statement := longest()
	t.Logf("upload evicting %d files: %v; longest transaction %v (%s)", bigFolderFiles, took, tx, statement)
	wantShortTransactions(t, tx, took, statement)
	purgesDone(t, s)
	u, err = s.Usage(ctx, sp.ID)
	if err != nil || u.Trash != 0 || u.Files != int64(len(content)) || u.Used() > quota {
		t.Errorf("after the upload: Usage = %+v, %v; want the item's room free, within %d", u, err, quota)
	}
	var left int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE id LIKE 'big-%'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("after the upload: %d of its nodes left (%v)", left, err)
	}
	requireTreeClean(t, s)
}

// TestEvictionWithinQuotaWhileHidden: between the transaction of an
// upload that evicts a trash item and the purge of its parts, the space
// holds the upload and not the item, within its quota; a node that stops
// there leaves the item to the sweep.
func TestEvictionWithinQuotaWhileHidden(t *testing.T) {
	s := openTestStore(t, checkOpts)
	sp := personal(t, s)
	ctx := t.Context()
	f := put(t, s, sp.ID, sp.ID, "old", "old content")
	if err := s.Remove(ctx, sp.ID, f.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	u, err := s.Usage(ctx, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	quota := u.Used() + 2
	s.SetPersonalQuota(quota)
	var held storage.Usage
	err = s.change(ctx, sp.ID, func(c *change) error {
		if err := s.makeRoom(ctx, c, sp.ID, 5); err != nil {
			return err
		}
		held, _, err = s.spaceUsage(ctx, c.tx, sp.ID)
		s.takePurges([]pgx.Tx{c.tx}, false) // the node stops before the parts
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if held.Trash != 0 || held.Used()+5 > quota {
		t.Errorf("in the upload's transaction: Usage = %+v; want the item's room free for 5 bytes within %d", held, quota)
	}
	if items, err := storage.AllTrashItems(ctx, s, sp.ID); err != nil || len(items) != 0 {
		t.Errorf("hidden: %d trash items (%v); want none shown", len(items), err)
	}
	requireTreeClean(t, s)
	if _, err := s.ExpireUndo(ctx); err != nil {
		t.Fatal(err)
	}
	purgesDone(t, s)
	if _, ok, err := nodeByID(ctx, s.pool, f.ID); err != nil || ok {
		t.Errorf("after the sweep: the evicted file is still there (%v)", err)
	}
	requireTreeClean(t, s)
}
