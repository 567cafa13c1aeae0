package pgstore

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// testClock is the real time plus an offset a test can grow.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// insertTree makes space spaceID with the folders and files paths name
// ("a/", "a/f"), straight in the tables, so that the lock, session and
// chunk methods can be tested without the node methods. It returns the
// node id of each path; the root is spaceID.
func insertTree(t *testing.T, s *Store, spaceID string, paths ...string) map[string]string {
	t.Helper()
	ctx := t.Context()
	ids := map[string]string{"": spaceID}
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := s.pool.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("insertTree: %v", err)
		}
	}
	// The user of lockOn is an editor: only an editor's locks count.
	exec(`INSERT INTO spaces (id, type, name, quota, members) VALUES ($1, 'project', $1, -1, '{"u": 2}')`, spaceID)
	exec(`INSERT INTO nodes (id, space_id, name, kind, mtime, etag) VALUES ($1, $1, '', $2, now(), 'e')`,
		spaceID, int16(storage.KindFolder))
	for _, p := range paths {
		folder := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		parent, name := "", p
		if i := strings.LastIndex(p, "/"); i >= 0 {
			parent, name = p[:i], p[i+1:]
		}
		kind := storage.KindFile
		if folder {
			kind = storage.KindFolder
		}
		id := spaceID + ":" + p
		exec(`INSERT INTO nodes (id, space_id, parent_id, name, kind, mtime, etag) VALUES ($1, $2, $3, $4, $5, now(), 'e')`,
			id, spaceID, ids[parent], name, int16(kind))
		ids[p] = id
	}
	return ids
}

// openClockedStore opens a test store on the clock c.
func openClockedStore(t *testing.T, c *testClock) *Store {
	return openTestStore(t, Options{Now: c.Now})
}

func lockOn(s *Store, spaceID, node string, deep bool, scope storage.LockScope) storage.Lock {
	return storage.Lock{SpaceID: spaceID, NodeID: node, Root: "/" + node, Deep: deep, Scope: scope, User: "u", Timeout: time.Hour}
}

func TestLockConflictsAndCoverage(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	ids := insertTree(t, s, "sp", "a/", "a/b/", "a/b/f", "a/g", "c/")
	tests := []struct {
		name      string
		held, ask storage.Lock
		want      error
	}{
		{"exclusive vs exclusive", lockOn(s, "sp", ids["a/b/f"], false, storage.LockExclusive), lockOn(s, "sp", ids["a/b/f"], false, storage.LockExclusive), storage.ErrLocked},
		{"shared vs shared", lockOn(s, "sp", ids["a/b/f"], false, storage.LockShared), lockOn(s, "sp", ids["a/b/f"], false, storage.LockShared), nil},
		{"deep folder vs member", lockOn(s, "sp", ids["a"], true, storage.LockExclusive), lockOn(s, "sp", ids["a/b/f"], false, storage.LockShared), storage.ErrLocked},
		{"member vs deep folder", lockOn(s, "sp", ids["a/b/f"], false, storage.LockShared), lockOn(s, "sp", ids["a"], true, storage.LockExclusive), storage.ErrLocked},
		{"shallow folder vs member", lockOn(s, "sp", ids["a"], false, storage.LockExclusive), lockOn(s, "sp", ids["a/g"], false, storage.LockExclusive), nil},
		{"deep subfolder vs sibling file", lockOn(s, "sp", ids["a/b"], true, storage.LockExclusive), lockOn(s, "sp", ids["a/g"], false, storage.LockExclusive), nil},
		{"deep vs deep sibling", lockOn(s, "sp", ids["a"], true, storage.LockExclusive), lockOn(s, "sp", ids["c"], true, storage.LockExclusive), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held, err := s.CreateLock(ctx, tt.held, storage.LockLimits{})
			if err != nil {
				t.Fatalf("CreateLock: %v", err)
			}
			defer s.RemoveLock(ctx, "sp", held.Token)
			got, err := s.CreateLock(ctx, tt.ask, storage.LockLimits{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("CreateLock: %v, want %v", err, tt.want)
			}
			if err == nil {
				s.RemoveLock(ctx, "sp", got.Token)
			}
		})
	}

	a, _ := s.CreateLock(ctx, lockOn(s, "sp", ids["a"], true, storage.LockShared), storage.LockLimits{})
	f, _ := s.CreateLock(ctx, lockOn(s, "sp", ids["a/b/f"], false, storage.LockShared), storage.LockLimits{})
	for _, tt := range []struct {
		node  string
		below bool
		want  []storage.Lock
	}{
		{ids["a/b/f"], false, []storage.Lock{a, f}},
		{ids["a/g"], false, []storage.Lock{a}},
		{"sp", false, nil},
		{"sp", true, []storage.Lock{a, f}},
		{ids["c"], true, nil},
	} {
		got, err := s.LocksOn(ctx, "sp", tt.node, tt.below)
		if err != nil || !sameTokens(got, tt.want) {
			t.Fatalf("LocksOn(%s, %v) = %v, %v; want %v", tt.node, tt.below, got, err, tt.want)
		}
	}
	if _, err := s.LocksOn(ctx, "sp", "nope", false); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("LocksOn a missing node: %v", err)
	}
}

// sameTokens compares the tokens of two lists of locks, in any order.
func sameTokens(got, want []storage.Lock) bool {
	tokens := func(locks []storage.Lock) []string {
		out := make([]string, 0, len(locks))
		for _, l := range locks {
			out = append(out, l.Token)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(tokens(got), tokens(want))
}

// TestLockExpiryFollowsStoreClock: a lock ends by the store's clock, not
// the database's, and its token is free again.
func TestLockExpiryFollowsStoreClock(t *testing.T) {
	clk := &testClock{}
	s := openClockedStore(t, clk)
	ctx := t.Context()
	ids := insertTree(t, s, "sp", "f")
	l, err := s.CreateLock(ctx, lockOn(s, "sp", ids["f"], false, storage.LockExclusive), storage.LockLimits{})
	if err != nil {
		t.Fatalf("CreateLock: %v", err)
	}
	if !strings.HasPrefix(l.Token, "urn:uuid:") || !l.Expires.Equal(l.Created.Add(time.Hour)) {
		t.Fatalf("lock = %+v", l)
	}
	got, err := s.SpaceLocks(ctx, "sp")
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], l) {
		t.Fatalf("SpaceLocks = %+v, %v; want %+v", got, err, l)
	}
	clk.Advance(time.Hour + time.Second)
	if got, _ := s.SpaceLocks(ctx, "sp"); len(got) != 0 {
		t.Fatalf("SpaceLocks after expiry = %v", got)
	}
	if _, err := s.RefreshLock(ctx, "sp", l.Token, time.Hour); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("RefreshLock of an expired lock: %v", err)
	}
	again := lockOn(s, "sp", ids["f"], false, storage.LockExclusive)
	again.Token = l.Token
	if _, err := s.CreateLock(ctx, again, storage.LockLimits{}); err != nil {
		t.Fatalf("CreateLock with an expired lock's token: %v", err)
	}
	if _, err := s.CreateLock(ctx, lockOn(s, "sp", ids["f"], false, storage.LockShared), storage.LockLimits{}); !errors.Is(err, storage.ErrLocked) {
		t.Fatalf("CreateLock over a live lock: %v", err)
	}
	if err := s.RemoveLock(ctx, "sp", "urn:bad\xff"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("RemoveLock of an invalid token: %v", err)
	}
}

// TestLocksAcrossNodes: a lock taken through one node is honoured by
// another at once, and of racing exclusive locks through both exactly one
// is granted.
func TestLocksAcrossNodes(t *testing.T) {
	a, b := openTwoNodes(t, Options{})
	ctx := t.Context()
	ids := insertTree(t, a, "sp", "d/", "d/f")
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 10 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			node, deep := ids["d/f"], false
			if i%3 == 0 {
				node, deep = ids["d"], true
			}
			_, err := s.CreateLock(ctx, lockOn(s, "sp", node, deep, storage.LockExclusive), storage.LockLimits{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case !errors.Is(err, storage.ErrLocked):
				t.Errorf("CreateLock: %v", err)
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d exclusive locks granted, want 1", won)
	}
	locks, err := b.LocksOn(ctx, "sp", ids["d/f"], false)
	if err != nil || len(locks) != 1 {
		t.Fatalf("LocksOn through the other node = %v, %v", locks, err)
	}
}

// TestCheckHeld: a change must hold a lock covering each node it changes,
// and for a subtree the locks below it unless a held Deep lock covers it.
func TestCheckHeld(t *testing.T) {
	s := openTestStore(t, Options{})
	ctx := t.Context()
	ids := insertTree(t, s, "sp", "a/", "a/f", "a/sub/", "a/sub/g")
	deep, _ := s.CreateLock(ctx, lockOn(s, "sp", ids["a"], true, storage.LockShared), storage.LockLimits{})
	g, _ := s.CreateLock(ctx, lockOn(s, "sp", ids["a/sub/g"], false, storage.LockShared), storage.LockLimits{})
	tests := []struct {
		name   string
		tokens []string
		user   string
		node   lockedNode
		want   error
	}{
		{"nothing held", nil, "u", lockedNode{id: ids["a/f"]}, storage.ErrLocked},
		{"deep held", []string{deep.Token}, "u", lockedNode{id: ids["a/f"]}, nil},
		{"deep held by another user", []string{deep.Token}, "v", lockedNode{id: ids["a/f"]}, storage.ErrLocked},
		{"deep held covers below", []string{deep.Token}, "u", lockedNode{id: ids["a/sub"], below: true}, nil},
		{"unlocked root", nil, "u", lockedNode{id: "sp"}, nil},
		{"root below needs all", []string{deep.Token}, "u", lockedNode{id: "sp", below: true}, storage.ErrLocked},
		{"root below with all", []string{deep.Token, g.Token}, "u", lockedNode{id: "sp", below: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lt := &storage.LockTokens{User: tt.user, Tokens: tt.tokens}
			err := s.inSpace(ctx, "sp", func(tx pgx.Tx) error { return s.checkHeld(ctx, tx, "sp", lt, tt.node) })
			if !errors.Is(err, tt.want) {
				t.Fatalf("checkHeld: %v, want %v", err, tt.want)
			}
			var le *storage.LockedError
			if tt.want != nil && !errors.As(err, &le) {
				t.Fatalf("checkHeld: %v, want a *LockedError", err)
			}
		})
	}
}

// What a lock costs the database beyond its text, the table's and its
// indexes' pages, stays within storage.LockOverheadBytes: the lock caps
// count in LockBytes what the store keeps. The locks are davfs2's: one per
// new file of a copied folder, with a small owner.
func TestLockRecordBytes(t *testing.T) {
	const n = 500
	s := openTestStore(t, Options{})
	ctx := t.Context()
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("copy/file-%05d.txt", i)
	}
	ids := insertTree(t, s, "space", append([]string{"copy/"}, paths...)...)
	relationBytes := func() int64 {
		var b int64
		if err := s.pool.QueryRow(ctx, `SELECT pg_total_relation_size('locks')`).Scan(&b); err != nil {
			t.Fatalf("the size of the locks table: %v", err)
		}
		return b
	}
	before, text := relationBytes(), int64(0)
	for i, p := range paths {
		l, err := s.CreateLock(ctx, storage.Lock{
			SpaceID: "space", NodeID: ids[p], Root: fmt.Sprintf("/remote.php/dav/files/u/copy/file-%05d.txt", i),
			Scope: storage.LockExclusive, Owner: `<d:href xmlns:d="DAV:">einstein</d:href>`,
			User: "u", UserName: "Albert Einstein", Timeout: time.Hour,
		}, storage.LockLimits{})
		if err != nil {
			t.Fatalf("CreateLock %d: %v", i, err)
		}
		text += storage.LockBytes(l) - storage.LockOverheadBytes
	}
	if _, err := s.pool.Exec(ctx, `VACUUM locks`); err != nil { // the free space map, so that the size is final
		t.Fatalf("VACUUM: %v", err)
	}
	pages := relationBytes() - before
	overhead := (pages - text) / n
	t.Logf("%d locks: %d bytes of table and indexes, %d of text; %d bytes a lock beyond its text", n, pages, text, overhead)
	if overhead > storage.LockOverheadBytes {
		t.Fatalf("a lock costs %d bytes beyond its text, more than storage.LockOverheadBytes (%d)", overhead, storage.LockOverheadBytes)
	}
}
