package pgstore

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// TestCommitsQueuedForASpaceShareATransaction holds a space's row lock
// while commits of new files arrive: they wait in the store behind one
// transaction, not in PostgreSQL each, and then land in one group, the
// file that exists already refused and the others standing.
func TestCommitsQueuedForASpaceShareATransaction(t *testing.T) {
	// Fewer than the pool's connections: without groups each would hold one.
	const commits = 12
	s := openTestStore(t, Options{Sweep: time.Hour})
	ctx := t.Context()
	sp := personal(t, s)
	put(t, s, sp.ID, sp.ID, "f00", "there before")

	held, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Rollback(ctx)
	if _, err := held.Exec(ctx, `SELECT 1 FROM spaces WHERE id = $1 FOR UPDATE`, sp.ID); err != nil {
		t.Fatal(err)
	}

	errs := make([]error, commits)
	var wg sync.WaitGroup
	for i := range commits {
		u, err := s.NewUpload(ctx, sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(u, strings.NewReader(fmt.Sprintf("file %02d", i))); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			c := storage.Commit{ParentID: sp.ID, Name: fmt.Sprintf("f%02d", i), Conditions: storage.Conditions{IfNoneMatch: true}}
			_, _, errs[i] = u.Commit(ctx, c)
		})
	}
	waitFor(t, "the commits' objects", func() bool {
		var n int
		s.pool.QueryRow(ctx, `SELECT count(*) FROM object_sweep WHERE written`).Scan(&n)
		return n == commits
	})
	time.Sleep(300 * time.Millisecond) // on to the space's lock
	var waiting int
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting)
	if err != nil || waiting != 1 {
		t.Errorf("%d sessions wait for the space's lock (%v), want 1: the others queue in the store", waiting, err)
	}
	held.Rollback(ctx)
	wg.Wait()

	var files int64
	for i, err := range errs {
		switch {
		case i == 0 && !errors.Is(err, storage.ErrPrecondition):
			t.Errorf("commit of the existing f00 = %v, want ErrPrecondition", err)
		case i > 0 && err != nil:
			t.Errorf("commit of f%02d: %v", i, err)
		case i > 0:
			files += int64(len("file 00"))
		}
	}
	root, err := s.Node(ctx, sp.ID, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := files + int64(len("there before")); root.Size != want {
		t.Errorf("root's size %d, want %d", root.Size, want)
	}
	entries, err := s.ReadDir(ctx, sp.ID, sp.ID, "", 0)
	if err != nil || len(entries) != commits {
		t.Errorf("ReadDir = %d entries, %v; want %d", len(entries), err, commits)
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}
