package boltstore

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

func (f *fixture) lock(t testing.TB, spaceID, node string, deep bool, scope storage.LockScope, timeout time.Duration) storage.Lock {
	t.Helper()
	l, err := f.s.CreateLock(ctx, storage.Lock{
		SpaceID: spaceID, NodeID: node, Root: "/" + node, Deep: deep, Scope: scope,
		User: "einstein", UserName: "Albert Einstein", Timeout: timeout,
	}, storage.LockLimits{})
	if err != nil {
		t.Fatalf("CreateLock on %s: %v", node, err)
	}
	return l
}

// lockRecords counts the records in the lock buckets, expired ones too.
func (f *fixture) lockRecords(t testing.TB) (locks, tokens int) {
	t.Helper()
	err := f.s.view(func(tx *txn) error {
		locks, tokens = tx.locks().Stats().KeyN, tx.lockTokens().Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return locks, tokens
}

func TestLockCodecRoundTrip(t *testing.T) {
	created := time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []storage.Lock{
		{
			Token: "urn:uuid:0b9e5f3c-2d1f-4f62-9d43-7a0e6c1b2a11", SpaceID: "space", NodeID: "node",
			Root: "/dav/spaces/x/a b", Deep: true, Scope: storage.LockExclusive,
			Owner: `<D:href xmlns:D="DAV:">mailto:ä@example.org</D:href>`, User: "einstein", UserName: "Albert Einstein",
			Created: created, Timeout: time.Hour, Expires: created.Add(time.Hour),
		},
		{Token: "t", SpaceID: "s", NodeID: "n", Scope: storage.LockShared, Created: created},
		{Token: "groups", SpaceID: "s", NodeID: "n", Scope: storage.LockShared, User: "marie",
			Groups: []string{"physicists", "chemists"}, Created: created},
		{Token: "before 1970", SpaceID: "s", NodeID: "n", Scope: storage.LockShared, Created: time.Unix(-5, 7).UTC()},
	}
	for _, want := range tests {
		t.Run(want.Token, func(t *testing.T) {
			got, err := decodeLock(want.SpaceID, want.Token, encodeLock(want))
			if err != nil {
				t.Fatalf("decodeLock: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip = %+v, want %+v", got, want)
			}
		})
	}
}

// A lock written before locks recorded their user's groups (format 1)
// reads back without groups.
func TestDecodeLockFormat1(t *testing.T) {
	want := storage.Lock{Token: "t", SpaceID: "s", NodeID: "n", Scope: storage.LockShared, User: "marie",
		Created: time.Unix(1, 0).UTC(), Timeout: time.Second}
	v2 := encodeLock(want)
	if v2[len(v2)-1] != 0 {
		t.Fatalf("a lock without groups does not end with a zero count: %x", v2)
	}
	v1 := append([]byte{lockFormatV1}, v2[1:len(v2)-1]...)
	got, err := decodeLock("s", "t", v1)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeLock of format 1 = %+v, %v; want %+v", got, err, want)
	}
}

func TestDecodeLockRejectsDamage(t *testing.T) {
	good := encodeLock(storage.Lock{NodeID: "n", Scope: storage.LockShared, Created: time.Unix(1, 0), Timeout: time.Second})
	badScope := append([]byte{}, good...)
	badScope[1] = 9
	tests := map[string][]byte{
		"empty":          nil,
		"unknown format": append([]byte{lockFormat + 1}, good[1:]...),
		"unknown scope":  badScope,
	}
	for n := 1; n < len(good); n++ {
		tests[fmt.Sprint("cut at ", n)] = good[:n]
	}
	for name, v := range tests {
		if _, err := decodeLock("s", "t", v); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: error = %v, want errCorrupt", name, err)
		}
	}
}

// Locks persist: a reopened store keeps them until they expire, and drops
// those that expired while it was closed.
func TestLocksSurviveRestart(t *testing.T) {
	f := newFixture(t)
	file := f.put(t, f.root(), "f", "x")
	forever := f.put(t, f.root(), "forever", "x")
	l := f.lock(t, f.space.ID, file.ID, false, storage.LockExclusive, time.Hour)
	endless := f.lock(t, f.space.ID, forever.ID, false, storage.LockExclusive, 0)
	if err := f.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	f.s = openStore(t, f.dir, f.clk)
	got, err := f.s.LocksOn(ctx, f.space.ID, file.ID, false)
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], l) {
		t.Fatalf("LocksOn after restart = %+v, %v; want %+v", got, err, l)
	}
	_, err = f.s.CreateLock(ctx, storage.Lock{SpaceID: f.space.ID, NodeID: file.ID, Scope: storage.LockShared}, storage.LockLimits{})
	wantErr(t, err, storage.ErrLocked)
	if err := f.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	f.clk.Advance(time.Hour)
	f.s = openStore(t, f.dir, f.clk)
	if got, err := f.s.SpaceLocks(ctx, f.space.ID); err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], endless) {
		t.Fatalf("SpaceLocks after expiry = %+v, %v; want only %+v", got, err, endless)
	}
	if locks, tokens := f.lockRecords(t); locks != 1 || tokens != 1 {
		t.Fatalf("%d lock and %d token records after reopening, want the live one", locks, tokens)
	}
}

// Expired locks do not pile up: the next lock change in their space drops
// them.
func TestExpiredLocksArePurged(t *testing.T) {
	f := newFixture(t)
	file := f.put(t, f.root(), "f", "x")
	for range 10 {
		f.lock(t, f.space.ID, file.ID, false, storage.LockShared, time.Minute)
	}
	f.clk.Advance(time.Minute)
	if locks, _ := f.lockRecords(t); locks != 10 {
		t.Fatalf("%d lock records before a write, want the 10 expired ones", locks)
	}
	l := f.lock(t, f.space.ID, file.ID, false, storage.LockExclusive, time.Minute)
	if locks, tokens := f.lockRecords(t); locks != 1 || tokens != 1 {
		t.Fatalf("%d lock and %d token records, want only %s", locks, tokens, l.Token)
	}
}

// SpaceLocks of a space without locks reads nothing, however many locks
// other spaces hold: listings call it for every PROPFIND.
func TestSpaceLocksWithoutLocksIsFree(t *testing.T) {
	f := newFixture(t)
	// One of the busy spaces' keys sorts right after the empty one's.
	for _, id := range []string{"busy", f.space.ID + "0"} {
		if _, err := f.s.PutSpace(ctx, storage.Space{ID: id, Name: id, Quota: storage.NoQuota}); err != nil {
			t.Fatalf("PutSpace: %v", err)
		}
		for range 100 {
			f.lock(t, id, id, false, storage.LockShared, time.Hour)
		}
	}
	var err error
	var locks []storage.Lock
	allocs := testing.AllocsPerRun(100, func() {
		locks, err = f.s.SpaceLocks(ctx, f.space.ID)
	})
	if err != nil || len(locks) != 0 {
		t.Fatalf("SpaceLocks = %d locks, %v", len(locks), err)
	}
	// A read transaction and a cursor; decoding even one lock would add more.
	if allocs > 10 {
		t.Fatalf("SpaceLocks of an empty space makes %v allocations", allocs)
	}
}

// lockedSpace is a fixture whose space holds n locks on files in a folder
// depth levels down, and the deepest folder.
func lockedSpace(b *testing.B, n, depth int) (*fixture, string) {
	f := newFixture(b)
	dir := f.root()
	for i := range depth {
		dir = f.mkdir(b, dir, fmt.Sprint("d", i)).ID
	}
	for i := range n {
		file := f.put(b, dir, fmt.Sprint("f", i), "x")
		f.lock(b, f.space.ID, file.ID, false, storage.LockExclusive, time.Hour)
	}
	return f, dir
}

func BenchmarkSpaceLocks(b *testing.B) {
	tests := []struct {
		name      string
		n         int
		elsewhere bool
	}{
		{"no locks", 0, false},
		{"no locks, 100 in another space", 0, true},
		{"100 locks", 100, false},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			f, _ := lockedSpace(b, tt.n, 1)
			if tt.elsewhere {
				other, err := f.s.PutSpace(ctx, storage.Space{ID: f.space.ID + "0", Name: "other", Quota: storage.NoQuota})
				if err != nil {
					b.Fatal(err)
				}
				for range 100 {
					f.lock(b, other.ID, other.ID, false, storage.LockShared, time.Hour)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.s.SpaceLocks(ctx, f.space.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkLocksOn(b *testing.B) {
	const depth = 10
	for _, n := range []int{0, 100} {
		for _, below := range []bool{false, true} {
			b.Run(fmt.Sprintf("%d locks/below=%v", n, below), func(b *testing.B) {
				f, dir := lockedSpace(b, n, depth)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f.s.LocksOn(ctx, f.space.ID, dir, below); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func TestSubtreeContains(t *testing.T) {
	f := newFixture(t)
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, a.ID, "b")
	file := f.put(t, b.ID, "f", "x")
	other := f.mkdir(t, f.root(), "other")
	tests := []struct {
		top, id string
		want    bool
	}{
		{a.ID, a.ID, true},
		{a.ID, b.ID, true},
		{a.ID, file.ID, true},
		{a.ID, other.ID, false},
		{a.ID, f.root(), false},
		{b.ID, a.ID, false},
		{f.root(), file.ID, true},
		{a.ID, "gone", false},
	}
	err := f.s.view(func(tx *txn) error {
		for _, tt := range tests {
			// Twice on one subtree: the second answer comes from memory.
			s := tx.subtree(tt.top)
			for range 2 {
				got, err := s.contains(tt.id)
				if err != nil {
					return err
				}
				if got != tt.want {
					t.Errorf("subtree(%s).contains(%s) = %v, want %v", tt.top, tt.id, got, tt.want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A damaged lock record must not make its space unlistable: opening the
// store drops it.
func TestOpenDropsDamagedLocks(t *testing.T) {
	f := newFixture(t)
	file := f.put(t, f.root(), "f", "x")
	l := f.lock(t, f.space.ID, file.ID, false, storage.LockShared, time.Hour)
	err := f.s.update(func(tx *txn) error {
		if err := tx.locks().Put(lockKey(f.space.ID, "urn:x:damaged"), []byte{lockFormat, 9}); err != nil {
			return err
		}
		return tx.lockTokens().Put([]byte("urn:x:damaged"), []byte(f.space.ID))
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.s.SpaceLocks(ctx, f.space.ID)
	wantErr(t, err, errCorrupt)
	if err := f.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	f.s = openStore(t, f.dir, f.clk)
	if got, err := f.s.SpaceLocks(ctx, f.space.ID); err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], l) {
		t.Fatalf("SpaceLocks after reopening = %+v, %v; want %+v", got, err, l)
	}
	if locks, tokens := f.lockRecords(t); locks != 1 || tokens != 1 {
		t.Fatalf("%d lock and %d token records after reopening, want 1 each", locks, tokens)
	}
}

// What a lock costs the store beyond its text, as the pages of both lock
// buckets hold it, stays within storage.LockOverheadBytes: the lock caps
// count in LockBytes what the store keeps. The locks are davfs2's: one per
// new file of a copied folder, with a small owner.
func TestLockRecordBytes(t *testing.T) {
	const n = 500
	s, err := Open(t.TempDir(), Options{NoSync: true}) // the pages, not durability
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "einstein", DisplayName: "Albert Einstein"})
	if err != nil {
		t.Fatalf("PersonalSpace: %v", err)
	}
	f := &fixture{s: s, space: sp}
	dir := f.mkdir(t, f.root(), "copy")
	text := int64(0)
	for i := range n {
		file := f.put(t, dir.ID, fmt.Sprintf("file-%05d.txt", i), "")
		l, err := f.s.CreateLock(ctx, storage.Lock{
			SpaceID: f.space.ID, NodeID: file.ID, Root: fmt.Sprintf("/remote.php/dav/files/einstein/copy/file-%05d.txt", i),
			Scope: storage.LockExclusive, Owner: `<d:href xmlns:d="DAV:">einstein</d:href>`,
			User: "einstein", UserName: "Albert Einstein", Timeout: time.Hour,
		}, storage.LockLimits{})
		if err != nil {
			t.Fatalf("CreateLock %d: %v", i, err)
		}
		text += storage.LockBytes(l) - storage.LockOverheadBytes
	}
	var pages int64
	err = f.s.view(func(tx *txn) error {
		for _, b := range []*bolt.Bucket{tx.locks().raw(), tx.lockTokens().raw()} {
			st := b.Stats()
			pages += int64(st.LeafAlloc + st.BranchAlloc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	overhead := (pages - text) / n
	t.Logf("%d locks: %d bytes of pages, %d of text; %d bytes a lock beyond its text", n, pages, text, overhead)
	if overhead > storage.LockOverheadBytes {
		t.Fatalf("a lock costs %d bytes beyond its text, more than storage.LockOverheadBytes (%d)", overhead, storage.LockOverheadBytes)
	}
}

// lockPlace reads the node and Deep flag of every lock format without
// decoding it, and refuses a record too short for them.
func TestLockPlace(t *testing.T) {
	for _, l := range []storage.Lock{
		{NodeID: "node", Deep: true, Scope: storage.LockShared, Owner: "o", User: "u", Groups: []string{"g"}},
		{NodeID: "", Scope: storage.LockExclusive},
		{NodeID: strings.Repeat("n", 300), Scope: storage.LockExclusive}, // a length of two bytes
	} {
		node, deep, ok := lockPlace(encodeLock(l))
		if !ok || string(node) != l.NodeID || deep != l.Deep {
			t.Errorf("lockPlace of a lock on %.10q (deep %v) = %.10q, %v, %v", l.NodeID, l.Deep, node, deep, ok)
		}
	}
	v1 := []byte{lockFormatV1, byte(storage.LockShared), 1, 4, 'n', 'o', 'd', 'e'}
	if node, deep, ok := lockPlace(v1); !ok || string(node) != "node" || !deep {
		t.Errorf("lockPlace of format 1 = %q, %v, %v", node, deep, ok)
	}
	for _, v := range [][]byte{nil, {lockFormat, 1, 0}, {lockFormat, 1, 0, 9, 'n'}} {
		if _, _, ok := lockPlace(v); ok {
			t.Errorf("lockPlace(%v) accepted a damaged record", v)
		}
	}
}
