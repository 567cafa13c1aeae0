package pgstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// bigTrashItem makes a big folder (bigFolder) and moves it into the
// trash. It returns the folder's id.
func bigTrashItem(t *testing.T, s *Store, spaceID string, files int) string {
	t.Helper()
	id := bigFolder(t, s, spaceID, files)
	if err := s.Remove(t.Context(), spaceID, id, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	return id
}

// bigFolder makes, in SQL, a folder "big" of folders files files in all,
// half of them directly in it and half in ten subfolders, each file with
// an object of one byte and every third a property. It returns the
// folder's id.
func bigFolder(t testing.TB, s *Store, spaceID string, files int) string {
	t.Helper()
	ctx := t.Context()
	top, err := s.Mkdir(ctx, spaceID, spaceID, "big")
	if err != nil {
		t.Fatal(err)
	}
	const subfolders = 10
	parents := []string{top.ID}
	for i := range subfolders {
		sub, err := s.Mkdir(ctx, spaceID, top.ID, fmt.Sprintf("sub-%02d", i))
		if err != nil {
			t.Fatal(err)
		}
		parents = append(parents, sub.ID)
	}
	// Half the files in the top folder, the other half spread over the
	// subfolders; then the sizes and counters the commits would have kept.
	statements := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag, content)
			SELECT 'big-' || i, $1, CASE WHEN i % 2 = 0 THEN ($2::text[])[1] ELSE ($2::text[])[2 + i % $5] END,
				'file-' || lpad(i::text, 6, '0'), $3, 1, now(), md5(i::text),
				jsonb_build_array(jsonb_build_object('k', 'files/big-' || i, 'n', 1))
			FROM generate_series(1, $4) AS i`, []any{spaceID, parents, storage.KindFile, files, subfolders}},
		{`INSERT INTO props (node_id, user_id, ns, local, value)
			SELECT 'big-' || i, '', 'http://owncloud.org/ns', 'tag', '1' FROM generate_series(1, $1, 3) AS i`, []any{files}},
		{`UPDATE nodes f SET size = (SELECT count(*) FROM nodes c WHERE c.parent_id = f.id) WHERE f.id = ANY($1)`,
			[]any{parents[1:]}},
		{`UPDATE nodes SET size = $3 WHERE id IN ($1, $2)`, []any{spaceID, top.ID, files}},
		{`UPDATE spaces SET nodes = nodes + $2, props_bytes = props_bytes + (
				SELECT sum(octet_length(ns) + octet_length(local) + octet_length(value)) FROM props WHERE node_id LIKE 'big-%')
			WHERE id = $1`, []any{spaceID, files}},
	}
	for _, st := range statements {
		if _, err := s.pool.Exec(ctx, st.sql, st.args...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.pool.Exec(ctx, `ANALYZE nodes; ANALYZE props`); err != nil {
		t.Fatal(err)
	}
	return top.ID
}

// longestTransaction samples the client transactions open on s's
// database (autovacuum's are PostgreSQL's own), but its own, until stop
// is closed, and returns the longest it saw with the statement it ran
// last.
func longestTransaction(t *testing.T, s *Store, stop <-chan struct{}) (time.Duration, string) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	var (
		longest   time.Duration
		statement string
	)
	for {
		var (
			open  time.Duration
			query string
		)
		err := conn.QueryRow(ctx, `SELECT coalesce(max(clock_timestamp() - xact_start), '0'),
				coalesce(max(left(query, 200)), '') FROM (
			SELECT xact_start, query FROM pg_stat_activity
			WHERE datname = current_database() AND backend_type = 'client backend'
				AND pid <> pg_backend_pid() AND xact_start IS NOT NULL
			ORDER BY xact_start LIMIT 1) oldest`).Scan(&open, &query)
		if err != nil {
			t.Error(err)
			return longest, statement
		}
		if open > longest {
			longest, statement = open, query
		}
		select {
		case <-stop:
			return longest, statement
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestEmptyTrashOfBigItemInShortTransactions: EmptyTrash of an item of
// 20,000 files purges it in parts, none of which holds a transaction open
// for more than a small share of the whole; the space's trash, counters
// and tree come out exact.
func TestEmptyTrashOfBigItemInShortTransactions(t *testing.T) {
	s := openTestStore(t, checkOpts)
	sp := personal(t, s)
	ctx := t.Context()
	const files = 20_000
	bigTrashItem(t, s, sp.ID, files)
	if u, err := s.Usage(ctx, sp.ID); err != nil || u.Trash != files {
		t.Fatalf("before: Usage = %+v, %v; want %d bytes in the trash", u, err, files)
	}

	longestSoFar := watchTransactions(t, s)
	start := time.Now()
	err := s.EmptyTrash(ctx, sp.ID)
	took := time.Since(start)
	longest, statement := longestSoFar()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("EmptyTrash of %d files: %v, longest transaction %v, last running %s", files, took, longest, statement)
	// A share of the whole rather than a time: the machine may be slow,
	// but one transaction for the item takes all of it.
	if longest > took/5 {
		t.Errorf("longest transaction %v of EmptyTrash's %v; want parts of at most a fifth", longest, took)
	}

	u, err := s.Usage(ctx, sp.ID)
	if err != nil || u.Trash != 0 || u.Props != 0 || u.Nodes != 0 {
		t.Errorf("after: Usage = %+v, %v; want nothing kept", u, err)
	}
	if items, err := storage.AllTrashItems(ctx, s, sp.ID); err != nil || len(items) != 0 {
		t.Errorf("after: %d trash items, %v", len(items), err)
	}
	var left int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE id LIKE 'big-%'`).Scan(&left); err != nil || left != 0 {
		t.Errorf("after: %d of its nodes left (%v)", left, err)
	}
	if !swept(t, s, "files/big-1") || !swept(t, s, fmt.Sprintf("files/big-%d", files)) {
		t.Error("the purged files' objects are not handed to the sweep")
	}
	// The objects were never written: only the tree is checked.
	problems, _ := runCheck(t, s, storage.CheckOptions{})
	for _, p := range problems {
		if p.Kind != storage.ProblemMissingContent {
			t.Errorf("unexpected problem: %s", p)
		}
	}
}

// TestPurgeStoppedBetweenParts: a node that stops after the first part of
// a purge leaves the item hidden (no listing shows it, no restore brings
// it back) and the store consistent (a check finds nothing); the next
// sweep's expiry pass on another node finishes it, giving back every
// byte and count, and its objects go to the sweep.
func TestPurgeStoppedBetweenParts(t *testing.T) {
	b := testpeer.S3Bucket(t)
	opts := checkOpts
	opts.DSN = testpeer.PostgreSQL(t)
	opts.S3 = s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey}
	opts.purgeBatch, opts.emptyBudget = 2, time.Nanosecond
	first := openTestStore(t, opts)
	sp := personal(t, first)
	ctx := t.Context()

	tree, err := first.Mkdir(ctx, sp.ID, sp.ID, "tree")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := first.Mkdir(ctx, sp.ID, tree.ID, "sub")
	if err != nil {
		t.Fatal(err)
	}
	deeper, err := first.Mkdir(ctx, sp.ID, sub.ID, "deeper")
	if err != nil {
		t.Fatal(err)
	}
	var objects []string
	for i, parent := range []string{tree.ID, tree.ID, sub.ID, sub.ID, sub.ID, deeper.ID} {
		f := put(t, first, sp.ID, parent, fmt.Sprintf("f%d", i), fmt.Sprintf("content %d", i))
		objects = append(objects, contentOf(t, first, f.ID)[0].Key)
	}
	replaced := put(t, first, sp.ID, deeper.ID, "f5", "a newer content") // f5 gets a version
	objects = append(objects, contentOf(t, first, replaced.ID)[0].Key)
	tag := storage.PropPatch{Property: storage.Property{Name: storage.PropName{Space: "urn:x", Local: "tag"}, Value: "v"}}
	if err := first.PatchProps(ctx, sp.ID, replaced.ID, []storage.PropPatch{tag}); err != nil {
		t.Fatal(err)
	}
	if err := first.Remove(ctx, sp.ID, tree.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	items, err := storage.AllTrashItems(ctx, first, sp.ID)
	if err != nil || len(items) != 1 {
		t.Fatalf("trash = %d items, %v", len(items), err)
	}
	key := items[0].Key

	// The first part, as EmptyTrash runs it; then the node stops.
	if more, err := first.purgeSome(ctx, sp.ID); err != nil || !more {
		t.Fatalf("purgeSome = %v, %v; want a part done and more to do", more, err)
	}
	first.Close()

	second := openTestStore(t, opts)
	if items, err := storage.AllTrashItems(ctx, second, sp.ID); err != nil || len(items) != 0 {
		t.Fatalf("half purged: %d trash items (%v); want the item gone", len(items), err)
	}
	_, _, err = second.RestoreTrash(ctx, sp.ID, key, storage.Transfer{NodeID: tree.ID, NewParentID: sp.ID, NewName: "tree"})
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("restore of the half purged item: %v; want ErrNotFound", err)
	}
	requireClean(t, second)

	if _, err := second.ExpireUndo(ctx); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := second.pool.QueryRow(ctx, `SELECT count(*) FROM nodes WHERE space_id = $1 AND parent_id IS NOT NULL`, sp.ID).
		Scan(&left); err != nil || left != 0 {
		t.Errorf("after the sweep: %d nodes left in the space and its trash (%v)", left, err)
	}
	if u, err := second.Usage(ctx, sp.ID); err != nil || u != (storage.Usage{}) {
		t.Errorf("after the sweep: Usage = %+v, %v; want nothing", u, err)
	}
	for _, key := range objects {
		if !swept(t, second, key) {
			t.Errorf("object %s is not handed to the sweep", key)
		}
	}
	requireClean(t, second)
}
