package pgstore

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// Two nodes of a cluster writing into one folder at once leave a tree
// whose sizes add up and whose etags are all distinct: the space's row lock
// serialises the propagations to the root.
func TestConcurrentPutsFromTwoNodes(t *testing.T) {
	nodes := openNodes(t, 2)
	sp := personal(t, nodes[0])
	if other := personal(t, nodes[1]); other.ID != sp.ID {
		t.Fatalf("the nodes see personal spaces %s and %s", sp.ID, other.ID)
	}
	dir, err := nodes[0].Mkdir(t.Context(), sp.ID, sp.ID, "shared")
	if err != nil {
		t.Fatal(err)
	}
	const perNode = 20
	var wg sync.WaitGroup
	var want int64
	errs := make(chan error, 2*perNode)
	for i, s := range nodes {
		for j := range perNode {
			content := fmt.Sprintf("node %d file %d %s", i, j, string(make([]byte, j)))
			want += int64(len(content))
			wg.Go(func() {
				_, err := tryPut(t, s, sp.ID, dir.ID, fmt.Sprintf("f-%d-%02d", i, j), content)
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	files, err := nodes[1].ReadDir(t.Context(), sp.ID, dir.ID, "", 0)
	if err != nil || len(files) != 2*perNode {
		t.Fatalf("ReadDir = %d files, %v", len(files), err)
	}
	etags := map[string]bool{}
	var sum int64
	for _, f := range files {
		sum += f.Size
		etags[f.ETag] = true
	}
	root, _ := nodes[1].Node(t.Context(), sp.ID, sp.ID)
	folder, _ := nodes[1].Node(t.Context(), sp.ID, dir.ID)
	etags[root.ETag], etags[folder.ETag] = true, true
	if sum != want || folder.Size != want || root.Size != want {
		t.Fatalf("files sum to %d, folder %d, root %d; want %d", sum, folder.Size, root.Size, want)
	}
	if len(etags) != len(files)+2 {
		t.Fatalf("%d distinct etags among %d nodes", len(etags), len(files)+2)
	}
}

// A MOVE rewrites the moved node's row and its ancestors', whatever is
// below it.
func TestMoveRewritesOneRow(t *testing.T) {
	s := openTestStore(t, Options{})
	sp := personal(t, s)
	ctx := t.Context()
	a, _ := s.Mkdir(ctx, sp.ID, sp.ID, "a")
	big, _ := s.Mkdir(ctx, sp.ID, a.ID, "big")
	for i := range 5 {
		d, err := s.Mkdir(ctx, sp.ID, big.ID, fmt.Sprintf("d%d", i))
		if err != nil {
			t.Fatal(err)
		}
		for j := range 10 {
			put(t, s, sp.ID, d.ID, fmt.Sprintf("f%d", j), "x")
		}
	}
	dest, _ := s.Mkdir(ctx, sp.ID, sp.ID, "dest")
	below := func() map[string]string {
		rows, err := s.pool.Query(ctx, `SELECT id, xmin::text FROM nodes WHERE id NOT IN ($1, $2, $3, $4)`, sp.ID, a.ID, big.ID, dest.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var id, xmin string
			rows.Scan(&id, &xmin)
			out[id] = xmin
		}
		return out
	}
	before := below()
	moved, _, err := s.Move(ctx, sp.ID, storage.Transfer{NodeID: big.ID, NewParentID: dest.ID, NewName: "big"})
	if err != nil {
		t.Fatal(err)
	}
	after := below()
	for id, xmin := range before {
		if after[id] != xmin {
			t.Fatalf("descendant %s was rewritten", id)
		}
	}
	if moved.Size != 50 {
		t.Fatalf("moved size %d", moved.Size)
	}
	for id, want := range map[string]int64{a.ID: 0, dest.ID: 50, sp.ID: 50} {
		if n, _ := s.Node(ctx, sp.ID, id); n.Size != want {
			t.Fatalf("%q size %d, want %d", n.Name, n.Size, want)
		}
	}
}

// A MOVE drops the locks on the moved node and below it (RFC 4918 §7.6),
// and keeps every other lock of the space.
func TestMoveDropsLocksBelow(t *testing.T) {
	s := openTestStore(t, Options{})
	sp := personal(t, s)
	ctx := t.Context()
	a, _ := s.Mkdir(ctx, sp.ID, sp.ID, "a")
	b, _ := s.Mkdir(ctx, sp.ID, a.ID, "b")
	inner := put(t, s, sp.ID, b.ID, "inner", "x")
	beside := put(t, s, sp.ID, a.ID, "beside", "x")
	dest, _ := s.Mkdir(ctx, sp.ID, sp.ID, "dest")
	for _, id := range []string{sp.ID, a.ID, b.ID, inner.ID, beside.ID, dest.ID} {
		_, err := s.pool.Exec(ctx, `INSERT INTO locks (token, space_id, node_id, root, deep, scope, owner, user_id, user_name, created, timeout_ms)
			VALUES ($1, $2, $1, '', false, 1, '', 'einstein', 'einstein', now(), 0)`, id, sp.ID)
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Move(ctx, sp.ID, storage.Transfer{NodeID: b.ID, NewParentID: dest.ID, NewName: "b"}); err != nil {
		t.Fatal(err)
	}
	rows, _ := s.pool.Query(ctx, `SELECT node_id FROM locks ORDER BY node_id`)
	kept, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{sp.ID, a.ID, beside.ID, dest.ID}
	slices.Sort(want)
	if !slices.Equal(kept, want) {
		t.Fatalf("locks left on %v, want %v", kept, want)
	}
}

// TestNodesDeclareSpacesTogether: nodes starting at once each declare the
// configured project spaces; every declaration succeeds and one space
// results.
func TestNodesDeclareSpacesTogether(t *testing.T) {
	nodes := openNodes(t, 2)
	for round := range 10 {
		id := fmt.Sprintf("physics-%d", round)
		var wg sync.WaitGroup
		errs := make([]error, len(nodes))
		for i, s := range nodes {
			wg.Go(func() {
				_, errs[i] = s.PutSpace(t.Context(), storage.Space{ID: id, Name: "Physics", Quota: storage.NoQuota})
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if _, err := nodes[0].Node(t.Context(), id, id); err != nil {
			t.Fatalf("round %d: root: %v", round, err)
		}
	}
}
