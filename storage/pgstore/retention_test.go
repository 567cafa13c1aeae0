package pgstore

import (
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// TestExpireBigTrashItemInShortTransactions: the expiry of a trash item of
// 20,000 files hides it, then purges it in parts (purgeTrashKey), none of
// which holds a transaction open for more than a small share of the
// whole; the space's trash, counters and tree come out exact.
func TestExpireBigTrashItemInShortTransactions(t *testing.T) {
	clk := &testClock{}
	opts := checkOpts
	opts.Now, opts.Sweep = clk.Now, time.Hour
	s := openTestStore(t, opts)
	sp := personal(t, s)
	ctx := t.Context()
	const files = 20_000
	bigTrashItem(t, s, sp.ID, files)
	clk.Advance(storage.DefaultTrashRetention + time.Hour)

	longestSoFar := watchTransactions(t, s)
	start := time.Now()
	n, err := s.ExpireUndo(ctx)
	took := time.Since(start)
	longest, statement := longestSoFar()
	if err != nil || n != 1 {
		t.Fatalf("ExpireUndo = %d, %v; want the expired item", n, err)
	}
	t.Logf("the expiry of %d files: %v, longest transaction %v, last running %s", files, took, longest, statement)
	// A share of the whole rather than a time, as for EmptyTrash.
	if longest > took/5 {
		t.Errorf("longest transaction %v of the expiry's %v; want parts of at most a fifth", longest, took)
	}
	if u, err := s.Usage(ctx, sp.ID); err != nil || u.Trash != 0 || u.Props != 0 || u.Nodes != 0 {
		t.Errorf("after: Usage = %+v, %v; want nothing kept", u, err)
	}
	var left int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE id LIKE 'big-%'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("after: %d of its nodes left (%v)", left, err)
	}
	problems, _ := runCheck(t, s, storage.CheckOptions{})
	for _, p := range problems {
		if p.Kind != storage.ProblemMissingContent { // the objects were never written
			t.Errorf("unexpected problem: %s", p)
		}
	}
}
