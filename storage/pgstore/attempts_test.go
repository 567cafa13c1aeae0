package pgstore

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// TestAttemptsSharedByNodes takes attempts of one key at once through two
// stores on one database, as two nodes of a cluster: together they take
// the limit and no more, and each sees the other's block and gives back.
func TestAttemptsSharedByNodes(t *testing.T) {
	a := openTestStore(t, Options{})
	b := openTestStore(t, Options{DSN: a.pool.Config().ConnString()})
	nodes := []*Store{a, b}
	budget := storage.AttemptBudget{Limit: 10, Window: 5 * time.Minute}
	const key = "link l 2001:db8::/64"
	now := time.Now().Truncate(time.Microsecond)
	var (
		wg    sync.WaitGroup
		taken atomic.Int64
		times sync.Map // node index → a time it took
	)
	for i := range 60 {
		wg.Go(func() {
			at := now.Add(time.Duration(i) * time.Microsecond)
			ok, _, err := nodes[i%2].TakeAttempt(t.Context(), key, budget, at)
			if err != nil {
				t.Errorf("TakeAttempt: %v", err)
			}
			if ok {
				taken.Add(1)
				times.Store(i%2, at)
			}
		})
	}
	wg.Wait()
	if taken.Load() != int64(budget.Limit) {
		t.Fatalf("two nodes took %d attempts at once, want the limit %d", taken.Load(), budget.Limit)
	}
	for i, s := range nodes {
		if wait, err := s.AttemptWait(t.Context(), key, budget, now.Add(time.Second)); err != nil || wait <= 0 {
			t.Fatalf("node %d: wait %s, %v; want the block", i, wait, err)
		}
	}
	// An attempt one node took, given back through the other, is free on
	// the first. Which node took one is the scheduler's choice: all ten
	// may have gone to one of them.
	taker, at := -1, time.Time{}
	times.Range(func(node, took any) bool {
		taker, at = node.(int), took.(time.Time)
		return false
	})
	if taker < 0 {
		t.Fatal("no node took an attempt")
	}
	if err := nodes[1-taker].ReturnAttempt(t.Context(), key, at); err != nil {
		t.Fatal(err)
	}
	if ok, wait, err := nodes[taker].TakeAttempt(t.Context(), key, budget, now.Add(time.Second)); !ok || err != nil {
		t.Fatalf("after one was given back: taken %v, wait %s, %v", ok, wait, err)
	}
}

// TestSweepForgetsExpiredAttempts: once a key's attempts have all left
// their window, the sweep deletes its row.
func TestSweepForgetsExpiredAttempts(t *testing.T) {
	clk := &testClock{}
	s := openTestStore(t, Options{Now: clk.Now})
	budget := storage.AttemptBudget{Limit: 3, Window: time.Minute}
	for _, key := range []string{"old", "recent"} {
		if _, _, err := s.TakeAttempt(t.Context(), key, budget, clk.Now()); err != nil {
			t.Fatal(err)
		}
		clk.Advance(50 * time.Second)
	}
	if _, err := s.sweepAttempts(t.Context()); err != nil {
		t.Fatal(err)
	}
	var keys []string
	rows, _ := s.pool.Query(t.Context(), `SELECT key FROM attempts ORDER BY key`)
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if rows.Err() != nil || len(keys) != 1 || keys[0] != "recent" {
		t.Fatalf("keys after the sweep %v (%v), want only recent", keys, rows.Err())
	}
}
