package pgstore

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// TestCompletionKeepsItsSessionUntilItCommits: a TUS completion that
// waits for its space (another change holds the space's row lock) still
// has its session, and so its reservation, while it waits; the row goes
// in the commit's own transaction. Issue 17, finding 4: the session went
// first, in a transaction of its own, and an upload created in between
// took its room.
func TestCompletionKeepsItsSessionUntilItCommits(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	insertTree(t, s, "sp")
	us := newTestSession(t, s, "sp", 3)
	if _, err := s.AppendSession(ctx, us.ID, 0, strings.NewReader("abc"), nil); err != nil {
		t.Fatalf("AppendSession: %v", err)
	}
	holder, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, `SELECT 1 FROM spaces WHERE id = 'sp' FOR UPDATE`); err != nil {
		t.Fatalf("locking the space: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := s.CompleteSession(ctx, us.ID, nil, time.Time{})
		done <- err
	}()
	waitForLockWaiter(t, s)
	var sessions int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM upload_sessions WHERE id = $1`, us.ID).Scan(&sessions); err != nil {
		t.Fatalf("counting sessions: %v", err)
	}
	u, err := s.Usage(ctx, "sp")
	if sessions != 1 || err != nil || u.Reserved != 3 {
		t.Fatalf("while the completion waits for its space: %d session rows, usage %+v, %v; want the session and its 3 bytes reserved",
			sessions, u, err)
	}
	holder.Rollback(ctx)
	if err := <-done; err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	if u, err := s.Usage(ctx, "sp"); err != nil || u != (storage.Usage{Files: 3, Nodes: 1}) {
		t.Fatalf("usage after the completion = %+v, %v; want 3 bytes of files", u, err)
	}
}

// waitForLockWaiter waits, within bounds, until a transaction of the
// test's database waits for a lock.
func waitForLockWaiter(t *testing.T, s *Store) {
	t.Helper()
	for range 3000 {
		var waiting int
		err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE NOT l.granted AND a.datname = current_database()`).Scan(&waiting)
		if err != nil {
			t.Fatalf("pg_locks: %v", err)
		}
		if waiting > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no transaction came to wait for the space's row lock within 30 s")
}

// TestRacingAppendsLeaveNothing: of appends at one offset through two
// nodes, the losers keep no object (none is left on the sweep's list) and
// change no reservation; the completion adopts the winner's part.
func TestRacingAppendsLeaveNothing(t *testing.T) {
	a, b := openTwoNodes(t, Options{})
	ctx := t.Context()
	insertTree(t, a, "sp")
	const size = 64 << 10
	us := newTestSession(t, a, "sp", size)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		node := []*Store{a, b}[i%2]
		wg.Go(func() {
			_, err := node.AppendSession(ctx, us.ID, 0, strings.NewReader(strings.Repeat(fmt.Sprint(i), size)), nil)
			if err != nil && !errors.Is(err, storage.ErrConflict) {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("AppendSession: %v", err)
	}
	if _, parts := sessionBytes(t, a, us.ID); len(parts) != 1 {
		t.Fatalf("the session holds %d parts, want the winner's alone", len(parts))
	}
	wantNothingPending(t, a)
	if u, err := b.Usage(ctx, "sp"); err != nil || u != (storage.Usage{Reserved: size}) {
		t.Fatalf("usage after racing appends = %+v, %v; want %d bytes reserved", u, err, size)
	}
	n, _, err := b.CompleteSession(ctx, us.ID, nil, time.Time{})
	if err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	if segs := contentOf(t, a, n.ID); len(segs) != 1 || swept(t, a, segs[0].Key) {
		t.Fatalf("the file's content %v is not the adopted part", segs)
	}
	wantNothingPending(t, a)
}

// wantNothingPending checks that no object waits on the sweep's list.
func wantNothingPending(t *testing.T, s *Store) {
	t.Helper()
	rows, err := s.pool.Query(t.Context(), `SELECT key FROM object_sweep`)
	if err != nil {
		t.Fatalf("object_sweep: %v", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(keys) > 0 {
		t.Fatalf("objects on the sweep's list: %v, %v; want none", keys, err)
	}
}
