package boltstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// seedInlineFiles adds n files of a few bytes, kept inline, below parent
// in one transaction, with the sizes of parent and of the space's root
// and the node counter grown to match: a tree the check finds nothing
// wrong with. Their names are long, so that the records fill many pages.
func (f *fixture) seedInlineFiles(t testing.TB, parent string, n int) {
	t.Helper()
	long := strings.Repeat("a-long-file-name-", 12)
	err := f.s.update(func(tx *txn) error {
		var total int64
		for i := range n {
			content := []byte(fmt.Sprint(i))
			key, err := tx.putInline(content)
			if err != nil {
				return err
			}
			w := checksum.NewWriter()
			w.Write(content)
			r := rec{Node: storage.Node{
				ID:          uuid.NewString(),
				SpaceID:     f.space.ID,
				ParentID:    parent,
				Name:        fmt.Sprintf("%s%06d.txt", long, i),
				Kind:        storage.KindFile,
				Size:        int64(len(content)),
				ModTime:     tx.now,
				ContentType: "text/plain",
				Checksums:   w.Sums(),
			}, Inline: key}
			r.ETag = tx.etag(r.ID)
			if err := tx.placeNode(&r); err != nil {
				return err
			}
			total += r.Size
		}
		for _, id := range []string{parent, f.space.ID} {
			r, err := tx.nodeIn(f.space.ID, id)
			if err != nil {
				return err
			}
			r.Size += total
			if err := tx.putNode(&r); err != nil {
				return err
			}
		}
		return tx.countNodes(f.space.ID, int64(n))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// peakMapped samples the resident kB of the store's database mapping
// until stop is called, which returns the largest sample. It looks the
// mapping up once, without a transaction of its own, which the trim loop
// would count as a use: nothing may grow the database meanwhile.
func (s *Store) peakMapped(t *testing.T) (stop func() (int, error)) {
	t.Helper()
	var prefix string
	if err := s.db.View(func(*bolt.Tx) error {
		prefix = fmt.Sprintf("%x-", s.db.Info().Data)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var (
		wg   sync.WaitGroup
		peak int
		err  error
	)
	wg.Go(func() {
		for err == nil {
			var kb int
			kb, err = residentKB(prefix)
			peak = max(peak, kb)
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	return func() (int, error) {
		close(done)
		wg.Wait()
		return peak, err
	}
}

// TestWalksKeepMappingBounded checks that a check and a search, which read
// the whole database or the whole name index of a space, in snapshots
// that last, keep the part of the database's mapping resident in the
// process within the walks' bound, lowered here so that a small database
// shows it. The store is opened as the check command opens it when no
// server holds it (Inspect), where no trim loop runs: the walks bound
// themselves, as a server's trim loop may look too late.
func TestWalksKeepMappingBounded(t *testing.T) {
	const (
		files   = 12000
		boundKB = 1 << 10 // the walks' bound, lowered
		limitKB = 6 << 10 // what may be resident at most: the bound and what is mapped before a walk looks
	)
	f := newInlineFixture(t, 0)
	dir := f.mkdir(t, f.root(), "dir")
	f.seedInlineFiles(t, dir.ID, files)
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(f.dir, Options{Inspect: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f.s = s
	info := f.lowerWalkBound(t, boundKB, limitKB)
	tests := []struct {
		name string
		walk func() error
	}{
		{"search", func() error {
			found, err := f.s.SearchNames(ctx, storage.SearchScope{SpaceID: f.space.ID, Under: f.root(), Limit: 10}, "004321.txt")
			if err == nil && (found.Total != 1 || len(found.Nodes) != 1) {
				err = fmt.Errorf("found %d of %d, want the one file", len(found.Nodes), found.Total)
			}
			return err
		}},
		{"check", func() error {
			var problems []string
			sum, err := f.s.Check(ctx, storage.CheckOptions{}, func(p storage.Problem) { problems = append(problems, p.String()) })
			if err == nil && (sum.Nodes < files || len(problems) > 0) {
				err = fmt.Errorf("checked %d nodes, found %q", sum.Nodes, problems)
			}
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := f.s.trimMapping(); err != nil {
				t.Fatal(err)
			}
			stop := f.s.peakMapped(t)
			err := tt.walk()
			peak, sampled := stop()
			if err != nil || sampled != nil {
				t.Fatal(err, sampled)
			}
			t.Logf("%d kB of the %d kB database mapped at the peak", peak, info.Size()>>10)
			if peak > limitKB {
				t.Errorf("%d kB of the database mapped at the peak of the %s, of %d kB in all, want at most %d", peak, tt.name, info.Size()>>10, limitKB)
			}
		})
	}
}

// trashFiles moves the files of folder parent, n of them at most, into
// the trash of the fixture's space, each an item of its own, in one
// transaction.
func (f *fixture) trashFiles(t testing.TB, parent string, n int) {
	t.Helper()
	err := f.s.update(func(tx *txn) error {
		var files []rec
		if err := tx.scanChildren(parent, "", n, func(r rec) error {
			files = append(files, r)
			return nil
		}); err != nil {
			return err
		}
		for _, r := range files {
			if err := tx.discard(f.space.ID, r); err != nil {
				return err
			}
			if err := tx.propagate(r.ParentID, -r.Size); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTrashListingKeepsMappingBounded checks that listing a trash of many
// items, each of whose nodes is a lookup at random in the database, keeps
// the part of the mapping resident in the process within the walks'
// bound, lowered here as in TestWalksKeepMappingBounded, in a store
// opened for inspection, where no trim loop runs.
func TestTrashListingKeepsMappingBounded(t *testing.T) {
	const (
		files   = 12000
		trashed = 3000
		boundKB = 1 << 10
		limitKB = 6 << 10
	)
	f := newInlineFixture(t, 0)
	dir := f.mkdir(t, f.root(), "dir")
	f.seedInlineFiles(t, dir.ID, files)
	f.trashFiles(t, dir.ID, trashed)
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(f.dir, Options{Inspect: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f.s = s
	f.s.files.walkLimit.Store(boundKB << 10)
	if err := f.s.trimMapping(); err != nil {
		t.Fatal(err)
	}
	stop := f.s.peakMapped(t)
	items, err := storage.AllTrashItems(ctx, f.s, f.space.ID)
	peak, sampled := stop()
	if err != nil || sampled != nil {
		t.Fatal(err, sampled)
	}
	if len(items) != trashed {
		t.Fatalf("listed %d items, want %d", len(items), trashed)
	}
	t.Logf("%d kB of the database mapped at the peak", peak)
	if peak > limitKB {
		t.Errorf("%d kB of the database mapped at the peak of the listing, want at most %d", peak, limitKB)
	}
}

// lowerWalkBound lowers the walks' bound to boundKB after checking that
// the database is large enough (five times limitKB) for a test's limit on
// what stays mapped to show it, and returns the database file's info.
func (f *fixture) lowerWalkBound(t *testing.T, boundKB, limitKB int64) os.FileInfo {
	t.Helper()
	info, err := os.Stat(filepath.Join(f.dir, dbFile))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() < 5*limitKB<<10 {
		t.Fatalf("the database has %d bytes, too few to show the bound", info.Size())
	}
	f.s.files.walkLimit.Store(boundKB << 10)
	return info
}
