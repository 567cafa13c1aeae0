package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// Clock is implemented by stores under test whose clock the tests can move
// on, so that the lock expiry tests need not wait. Without it they sleep.
type Clock interface {
	// Advance moves the store's clock on by d.
	Advance(d time.Duration)
}

// lockTests are the conformance tests of storage.LockStore.
var lockTests = []conformanceTest{
	{"LockCreateRefreshRemove", testLockCreateRefreshRemove},
	{"LockTokens", testLockTokens},
	{"LockExpiry", testLockExpiry},
	{"LockConflicts", testLockConflicts},
	{"LocksOn", testLocksOn},
	{"LocksOfOtherSpaces", testLocksOfOtherSpaces},
	{"LockNotFound", testLockNotFound},
	{"LocksBelongToNodes", testLocksBelongToNodes},
	{"LockRace", testLockRace},
	{"LocksNeverOutliveNodes", testLocksNeverOutliveNodes},
	{"ChangesHonourLocks", testChangesHonourLocks},
	{"SharedLocksHeldDeep", testSharedLocksHeldDeep},
	{"LockOwnerLimit", testLockOwnerLimit},
	{"LocksPerUserLimit", testLocksPerUserLimit},
	{"LockBytesPerUserLimit", testLockBytesPerUserLimit},
	{"LocksCoveringLimit", testLocksCoveringLimit},
	{"LocksOfFormerMembers", testLocksOfFormerMembers},
}

// after lets d pass for the store.
func (f *fixture) after(d time.Duration) {
	if c, ok := f.s.(Clock); ok {
		c.Advance(d)
		return
	}
	time.Sleep(d)
}

// lock asks for a lock on node and fails the test unless it is granted.
func (f *fixture) lock(t *testing.T, node string, deep bool, scope storage.LockScope) storage.Lock {
	t.Helper()
	l, err := f.tryLock(node, deep, scope)
	if err != nil {
		t.Fatalf("CreateLock on %s (deep %v, scope %d): %v", node, deep, scope, err)
	}
	return l
}

func (f *fixture) tryLock(node string, deep bool, scope storage.LockScope) (storage.Lock, error) {
	return f.s.CreateLock(f.ctx, storage.Lock{
		SpaceID: f.space.ID, NodeID: node, Root: "/" + node, Deep: deep, Scope: scope,
		User: user.ID, UserName: user.DisplayName, Timeout: time.Hour,
	}, storage.LockLimits{})
}

// tokens returns the sorted tokens of locks.
func tokens(locks []storage.Lock) []string {
	out := make([]string, 0, len(locks))
	for _, l := range locks {
		out = append(out, l.Token)
	}
	slices.Sort(out)
	return out
}

func wantTokens(t *testing.T, what string, got []storage.Lock, want ...storage.Lock) {
	t.Helper()
	if g, w := tokens(got), tokens(want); !slices.Equal(g, w) {
		t.Fatalf("%s = %v, want %v", what, g, w)
	}
}

func (f *fixture) locksOn(t *testing.T, node string, below bool) []storage.Lock {
	t.Helper()
	locks, err := f.s.LocksOn(f.ctx, f.space.ID, node, below)
	if err != nil {
		t.Fatalf("LocksOn %s: %v", node, err)
	}
	return locks
}

func (f *fixture) spaceLocks(t *testing.T) []storage.Lock {
	t.Helper()
	locks, err := f.s.SpaceLocks(f.ctx, f.space.ID)
	if err != nil {
		t.Fatalf("SpaceLocks: %v", err)
	}
	return locks
}

func testLockCreateRefreshRemove(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "x")
	owner := `<D:href xmlns:D="DAV:">mailto:einstein@example.org</D:href>`
	asked := storage.Lock{
		SpaceID: f.space.ID, NodeID: file.ID, Root: "/f", Scope: storage.LockExclusive,
		Owner: owner, User: user.ID, UserName: user.DisplayName, Timeout: time.Hour,
	}
	l, err := f.s.CreateLock(f.ctx, asked, storage.LockLimits{})
	if err != nil {
		t.Fatalf("CreateLock: %v", err)
	}
	if l.Created.IsZero() || !l.Expires.Equal(l.Created.Add(time.Hour)) {
		t.Fatalf("created %v, expires %v: want an hour apart", l.Created, l.Expires)
	}
	asked.Token, asked.Created, asked.Expires = l.Token, l.Created, l.Expires
	if !sameLock(l, asked) {
		t.Fatalf("CreateLock = %+v, want %+v", l, asked)
	}
	for what, got := range map[string][]storage.Lock{
		"LocksOn": f.locksOn(t, file.ID, false), "SpaceLocks": f.spaceLocks(t),
	} {
		if len(got) != 1 || !sameLock(got[0], l) {
			t.Fatalf("%s = %+v, want %+v", what, got, l)
		}
	}

	f.after(time.Second)
	r, err := f.s.RefreshLock(f.ctx, f.space.ID, l.Token, 2*time.Hour)
	if err != nil {
		t.Fatalf("RefreshLock: %v", err)
	}
	if r.Timeout != 2*time.Hour || !r.Expires.After(l.Created.Add(2*time.Hour)) || !r.Created.Equal(l.Created) {
		t.Fatalf("refreshed lock = %+v, taken %v", r, l.Created)
	}
	if got := f.spaceLocks(t); len(got) != 1 || !sameLock(got[0], r) {
		t.Fatalf("SpaceLocks after refresh = %+v, want %+v", got, r)
	}

	if err := f.s.RemoveLock(f.ctx, f.space.ID, l.Token); err != nil {
		t.Fatalf("RemoveLock: %v", err)
	}
	wantTokens(t, "SpaceLocks after RemoveLock", f.spaceLocks(t))
	wantErr(t, "RemoveLock again", f.s.RemoveLock(f.ctx, f.space.ID, l.Token), storage.ErrNotFound)
	_, err = f.s.RefreshLock(f.ctx, f.space.ID, l.Token, time.Hour)
	wantErr(t, "RefreshLock of a removed lock", err, storage.ErrNotFound)
}

// sameLock compares locks with times by instant.
func sameLock(a, b storage.Lock) bool {
	if !a.Created.Equal(b.Created) || !a.Expires.Equal(b.Expires) {
		return false
	}
	if !slices.Equal(a.Groups, b.Groups) {
		return false
	}
	a.Created, a.Expires, b.Created, b.Expires = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	a.Groups, b.Groups = nil, nil
	return reflect.DeepEqual(a, b)
}

func testLockTokens(t *testing.T, f *fixture) {
	a := f.put(t, f.root(), "a", "x")
	b := f.put(t, f.root(), "b", "x")
	l1 := f.lock(t, a.ID, false, storage.LockShared)
	l2 := f.lock(t, a.ID, false, storage.LockShared)
	for _, l := range []storage.Lock{l1, l2} {
		if !strings.HasPrefix(l.Token, "urn:uuid:") || len(l.Token) != len("urn:uuid:")+36 {
			t.Fatalf("generated token %q, want urn:uuid:<uuid>", l.Token)
		}
	}
	if l1.Token == l2.Token {
		t.Fatalf("two locks got the token %q", l1.Token)
	}

	chosen := storage.Lock{SpaceID: f.space.ID, NodeID: b.ID, Scope: storage.LockShared, Token: "opaquelocktoken:chosen"}
	l, err := f.s.CreateLock(f.ctx, chosen, storage.LockLimits{})
	if err != nil || l.Token != chosen.Token {
		t.Fatalf("CreateLock with a chosen token = %q, %v", l.Token, err)
	}
	// A token in use is refused even on another node: tokens name one lock.
	_, err = f.s.CreateLock(f.ctx, storage.Lock{SpaceID: f.space.ID, NodeID: a.ID, Scope: storage.LockShared, Token: l1.Token}, storage.LockLimits{})
	wantErr(t, "CreateLock with a token in use", err, storage.ErrExists)
	wantTokens(t, "SpaceLocks", f.spaceLocks(t), l1, l2, l)
}

func testLockExpiry(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "x")
	forever := f.put(t, f.root(), "forever", "x")
	const timeout = time.Second
	short, err := f.s.CreateLock(f.ctx, storage.Lock{
		SpaceID: f.space.ID, NodeID: file.ID, Scope: storage.LockExclusive, Timeout: timeout, Token: "urn:x:short",
	}, storage.LockLimits{})
	if err != nil {
		t.Fatalf("CreateLock: %v", err)
	}
	endless, err := f.s.CreateLock(f.ctx, storage.Lock{SpaceID: f.space.ID, NodeID: forever.ID, Scope: storage.LockExclusive}, storage.LockLimits{})
	if err != nil {
		t.Fatalf("CreateLock without timeout: %v", err)
	}
	if !endless.Expires.IsZero() {
		t.Fatalf("a lock without timeout expires at %v", endless.Expires)
	}

	f.after(timeout + 100*time.Millisecond)
	wantTokens(t, "SpaceLocks after expiry", f.spaceLocks(t), endless)
	wantTokens(t, "LocksOn after expiry", f.locksOn(t, file.ID, false))
	_, err = f.s.RefreshLock(f.ctx, f.space.ID, short.Token, time.Hour)
	wantErr(t, "RefreshLock of an expired lock", err, storage.ErrNotFound)
	wantErr(t, "RemoveLock of an expired lock", f.s.RemoveLock(f.ctx, f.space.ID, short.Token), storage.ErrNotFound)
	// An expired lock neither conflicts nor holds on to its token.
	again, err := f.s.CreateLock(f.ctx, storage.Lock{
		SpaceID: f.space.ID, NodeID: file.ID, Scope: storage.LockExclusive, Token: short.Token, Timeout: time.Hour,
	}, storage.LockLimits{})
	if err != nil {
		t.Fatalf("CreateLock over an expired lock with its token: %v", err)
	}
	wantTokens(t, "SpaceLocks", f.spaceLocks(t), endless, again)
}

// tree is a small folder tree to lock parts of:
//
//	a/ a/b/ a/b/f a/g c/
type tree struct{ a, b, f, g, c storage.Node }

func (f *fixture) tree(t *testing.T) tree {
	var tr tree
	tr.a = f.mkdir(t, f.root(), "a")
	tr.b = f.mkdir(t, tr.a.ID, "b")
	tr.f = f.put(t, tr.b.ID, "f", "x")
	tr.g = f.put(t, tr.a.ID, "g", "x")
	tr.c = f.mkdir(t, f.root(), "c")
	return tr
}

func testLockConflicts(t *testing.T, f *fixture) {
	tr := f.tree(t)
	const (
		excl   = storage.LockExclusive
		shared = storage.LockShared
	)
	type ask struct {
		node  storage.Node
		deep  bool
		scope storage.LockScope
	}
	tests := []struct {
		name      string
		held, new ask
		want      error
	}{
		{"exclusive vs exclusive", ask{tr.f, false, excl}, ask{tr.f, false, excl}, storage.ErrLocked},
		{"shared vs shared", ask{tr.f, false, shared}, ask{tr.f, false, shared}, nil},
		{"shared vs exclusive", ask{tr.f, false, shared}, ask{tr.f, false, excl}, storage.ErrLocked},
		{"exclusive vs shared", ask{tr.f, false, excl}, ask{tr.f, false, shared}, storage.ErrLocked},
		{"deep folder vs member", ask{tr.a, true, excl}, ask{tr.f, false, excl}, storage.ErrLocked},
		{"deep folder vs member, shared", ask{tr.a, true, shared}, ask{tr.f, false, shared}, nil},
		{"deep shared folder vs exclusive member", ask{tr.a, true, shared}, ask{tr.f, false, excl}, storage.ErrLocked},
		{"member vs deep folder", ask{tr.f, false, excl}, ask{tr.a, true, excl}, storage.ErrLocked},
		{"member vs deep root", ask{tr.f, false, shared}, ask{f.node(t, f.root()), true, excl}, storage.ErrLocked},
		{"deep folder vs deep subfolder", ask{tr.a, true, excl}, ask{tr.b, true, excl}, storage.ErrLocked},
		{"shallow folder vs member", ask{tr.a, false, excl}, ask{tr.g, false, excl}, nil},
		{"shallow folder vs deep subfolder", ask{tr.a, false, excl}, ask{tr.b, true, excl}, nil},
		{"member vs shallow folder", ask{tr.g, false, excl}, ask{tr.a, false, excl}, nil},
		{"shallow folder vs shallow folder", ask{tr.a, false, excl}, ask{tr.a, false, shared}, storage.ErrLocked},
		{"deep folder vs sibling", ask{tr.a, true, excl}, ask{tr.c, true, excl}, nil},
		{"deep subfolder vs file beside it", ask{tr.b, true, excl}, ask{tr.g, false, excl}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held := f.lock(t, tt.held.node.ID, tt.held.deep, tt.held.scope)
			t.Cleanup(func() { f.s.RemoveLock(f.ctx, f.space.ID, held.Token) })
			l, err := f.tryLock(tt.new.node.ID, tt.new.deep, tt.new.scope)
			wantErr(t, "CreateLock", err, tt.want)
			if err != nil {
				wantTokens(t, "SpaceLocks after a refused lock", f.spaceLocks(t), held)
				return
			}
			t.Cleanup(func() { f.s.RemoveLock(f.ctx, f.space.ID, l.Token) })
		})
	}
}

func testLocksOn(t *testing.T, f *fixture) {
	tr := f.tree(t)
	a := f.lock(t, tr.a.ID, true, storage.LockShared)
	b := f.lock(t, tr.b.ID, false, storage.LockShared)
	file := f.lock(t, tr.f.ID, false, storage.LockShared)
	c := f.lock(t, tr.c.ID, true, storage.LockExclusive)
	root := f.root()
	tests := []struct {
		node  string
		below bool
		want  []storage.Lock
	}{
		{tr.f.ID, false, []storage.Lock{a, file}}, // b is shallow
		{tr.b.ID, false, []storage.Lock{a, b}},
		{tr.g.ID, false, []storage.Lock{a}},
		{tr.a.ID, false, []storage.Lock{a}},
		{tr.a.ID, true, []storage.Lock{a, b, file}},
		{tr.b.ID, true, []storage.Lock{a, b, file}},
		{tr.c.ID, true, []storage.Lock{c}},
		{root, false, nil},
		{root, true, []storage.Lock{a, b, file, c}},
	}
	for _, tt := range tests {
		wantTokens(t, fmt.Sprintf("LocksOn(%s, below %v)", f.node(t, tt.node).Name, tt.below), f.locksOn(t, tt.node, tt.below), tt.want...)
	}
	wantTokens(t, "SpaceLocks", f.spaceLocks(t), a, b, file, c)

	// A Deep lock covers what is created below it later.
	later := f.put(t, tr.b.ID, "later", "x")
	wantTokens(t, "LocksOn a new member", f.locksOn(t, later.ID, false), a)
}

func testLocksOfOtherSpaces(t *testing.T, f *fixture) {
	other, err := f.s.PutSpace(f.ctx, storage.Space{ID: "storetest-locks-other", Name: "Other", Quota: storage.NoQuota})
	if err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	foreign, err := f.s.Mkdir(f.ctx, other.ID, other.ID, "foreign")
	if err != nil {
		t.Fatalf("Mkdir in the other space: %v", err)
	}
	theirs, err := f.s.CreateLock(f.ctx, storage.Lock{SpaceID: other.ID, NodeID: other.ID, Deep: true, Scope: storage.LockExclusive}, storage.LockLimits{})
	if err != nil {
		t.Fatalf("CreateLock in the other space: %v", err)
	}
	mine := f.lock(t, f.root(), true, storage.LockExclusive) // no conflict with theirs
	wantTokens(t, "SpaceLocks", f.spaceLocks(t), mine)
	wantTokens(t, "LocksOn the root below", f.locksOn(t, f.root(), true), mine)

	_, err = f.s.LocksOn(f.ctx, f.space.ID, foreign.ID, false)
	wantErr(t, "LocksOn a node of another space", err, storage.ErrNotFound)
	_, err = f.s.CreateLock(f.ctx, storage.Lock{SpaceID: f.space.ID, NodeID: foreign.ID, Scope: storage.LockShared}, storage.LockLimits{})
	wantErr(t, "CreateLock on a node of another space", err, storage.ErrNotFound)
	_, err = f.s.RefreshLock(f.ctx, f.space.ID, theirs.Token, time.Hour)
	wantErr(t, "RefreshLock of another space's token", err, storage.ErrNotFound)
	wantErr(t, "RemoveLock of another space's token", f.s.RemoveLock(f.ctx, f.space.ID, theirs.Token), storage.ErrNotFound)
	if got, err := f.s.SpaceLocks(f.ctx, other.ID); err != nil || len(got) != 1 || got[0].Token != theirs.Token {
		t.Fatalf("the other space's locks = %v, %v", tokens(got), err)
	}
}

func testLockNotFound(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "x")
	_, err := f.tryLock("no-such-node", false, storage.LockExclusive)
	wantErr(t, "CreateLock on a missing node", err, storage.ErrNotFound)
	_, err = f.s.LocksOn(f.ctx, f.space.ID, "no-such-node", true)
	wantErr(t, "LocksOn a missing node", err, storage.ErrNotFound)
	_, err = f.s.RefreshLock(f.ctx, f.space.ID, "urn:uuid:unknown", time.Hour)
	wantErr(t, "RefreshLock of an unknown token", err, storage.ErrNotFound)
	wantErr(t, "RemoveLock of an unknown token", f.s.RemoveLock(f.ctx, f.space.ID, "urn:uuid:unknown"), storage.ErrNotFound)
	_, err = f.tryLock(file.ID, false, 0)
	wantErr(t, "CreateLock without a scope", err, storage.ErrInvalid)
	_, err = f.s.CreateLock(f.ctx, storage.Lock{SpaceID: f.space.ID, NodeID: file.ID, Scope: storage.LockShared, Timeout: -time.Second}, storage.LockLimits{})
	wantErr(t, "CreateLock with a negative timeout", err, storage.ErrInvalid)
	wantTokens(t, "SpaceLocks", f.spaceLocks(t))
}

// projectSpace returns a fixture on a new project space of the store.
func (f *fixture) projectSpace(t *testing.T) *fixture {
	t.Helper()
	id := "storetest-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	sp, err := f.s.PutSpace(f.ctx, storage.Space{ID: id, Name: t.Name(), Quota: storage.NoQuota,
		Members: map[string]storage.Role{user.ID: storage.RoleEditor}})
	if err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	return &fixture{s: f.s, ctx: f.ctx, space: sp}
}

// Locks belong to nodes: what removes or moves a node takes its locks and
// those below it; a copy takes none along; new content keeps them.
func testLocksBelongToNodes(t *testing.T, f *fixture) {
	t.Run("remove", func(t *testing.T) {
		f := f.projectSpace(t)
		tr := f.tree(t)
		a := f.lock(t, tr.a.ID, false, storage.LockShared)
		f.lock(t, tr.f.ID, false, storage.LockShared)
		c := f.lock(t, tr.c.ID, false, storage.LockShared)
		f.remove(t, tr.b.ID)
		wantTokens(t, "SpaceLocks after removing b", f.spaceLocks(t), a, c)
		f.remove(t, tr.a.ID)
		wantTokens(t, "SpaceLocks after removing a", f.spaceLocks(t), c)
	})
	t.Run("move", func(t *testing.T) {
		f := f.projectSpace(t)
		tr := f.tree(t)
		deep := f.lock(t, tr.c.ID, true, storage.LockShared)
		f.lock(t, tr.a.ID, false, storage.LockShared)
		f.lock(t, tr.f.ID, false, storage.LockShared)
		f.move(t, storage.Transfer{NodeID: tr.a.ID, NewParentID: tr.c.ID, NewName: "a"})
		wantTokens(t, "SpaceLocks after the move", f.spaceLocks(t), deep)
		// Below the Deep lock of c, the moved folder is covered by that.
		wantTokens(t, "LocksOn the moved file", f.locksOn(t, tr.f.ID, false), deep)
	})
	t.Run("move onto a locked target", func(t *testing.T) {
		f := f.projectSpace(t)
		src := f.put(t, f.root(), "src", "x")
		dst := f.mkdir(t, f.root(), "dst")
		inside := f.put(t, dst.ID, "inside", "x")
		keep := f.put(t, f.root(), "keep", "x")
		kept := f.lock(t, keep.ID, false, storage.LockExclusive)
		f.lock(t, dst.ID, false, storage.LockExclusive)
		f.lock(t, inside.ID, false, storage.LockExclusive)
		f.move(t, storage.Transfer{NodeID: src.ID, NewParentID: f.root(), NewName: "dst", Overwrite: true})
		wantTokens(t, "SpaceLocks after replacing dst", f.spaceLocks(t), kept)
	})
	t.Run("move onto itself", func(t *testing.T) {
		f := f.projectSpace(t)
		file := f.put(t, f.root(), "f", "x")
		l := f.lock(t, file.ID, false, storage.LockExclusive)
		f.move(t, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "f"})
		wantTokens(t, "SpaceLocks", f.spaceLocks(t), l)
	})
	t.Run("copy", func(t *testing.T) {
		f := f.projectSpace(t)
		tr := f.tree(t)
		a := f.lock(t, tr.a.ID, true, storage.LockShared)
		file := f.lock(t, tr.f.ID, false, storage.LockShared)
		dst := f.put(t, tr.c.ID, "a", "old")
		f.lock(t, dst.ID, false, storage.LockExclusive)
		copied, _, err := f.s.Copy(f.ctx, f.space.ID, storage.Transfer{NodeID: tr.a.ID, NewParentID: tr.c.ID, NewName: "a", Overwrite: true})
		if err != nil {
			t.Fatalf("Copy: %v", err)
		}
		wantTokens(t, "SpaceLocks after the copy", f.spaceLocks(t), a, file)
		wantTokens(t, "LocksOn the copy below", f.locksOn(t, copied.ID, true))
	})
	t.Run("new content", func(t *testing.T) {
		f := f.projectSpace(t)
		file := f.put(t, f.root(), "f", "old")
		l := f.lock(t, file.ID, false, storage.LockExclusive)
		if _, _, err := f.commit(f.space.ID, "new", storage.Commit{NodeID: file.ID}); err != nil {
			t.Fatalf("commit by id: %v", err)
		}
		if _, _, err := f.commit(f.space.ID, "newer", storage.Commit{ParentID: f.root(), Name: "f"}); err != nil {
			t.Fatalf("commit by name: %v", err)
		}
		wantTokens(t, "LocksOn the rewritten file", f.locksOn(t, file.ID, false), l)
	})
}

// Concurrent lock requests are decided one at a time: of many exclusive
// requests that all conflict, exactly one wins.
func testLockRace(t *testing.T, f *fixture) {
	const n = 50
	tr := f.tree(t)
	race := func(ask func(i int) (storage.Lock, error)) (won []storage.Lock) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				l, err := ask(i)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, l)
				case !errors.Is(err, storage.ErrLocked):
					t.Errorf("CreateLock: %v, want ErrLocked", err)
				}
			})
		}
		close(start)
		wg.Wait()
		for _, l := range won {
			if err := f.s.RemoveLock(f.ctx, f.space.ID, l.Token); err != nil {
				t.Fatalf("RemoveLock: %v", err)
			}
		}
		return won
	}

	if won := race(func(int) (storage.Lock, error) { return f.tryLock(tr.f.ID, false, storage.LockExclusive) }); len(won) != 1 {
		t.Fatalf("%d exclusive locks on one file granted, want 1", len(won))
	}
	if won := race(func(int) (storage.Lock, error) { return f.tryLock(tr.f.ID, false, storage.LockShared) }); len(won) != n {
		t.Fatalf("%d of %d shared locks granted", len(won), n)
	}
	// Half ask for the folder with Depth infinity, half for a member: either
	// the folder lock wins alone or member locks do.
	won := race(func(i int) (storage.Lock, error) {
		if i%2 == 0 {
			return f.tryLock(tr.a.ID, true, storage.LockExclusive)
		}
		return f.tryLock(tr.f.ID, false, storage.LockExclusive)
	})
	if len(won) != 1 {
		t.Fatalf("%d exclusive locks on a folder and its member granted, want 1", len(won))
	}
}

// A lock taken while its folder is being removed either fails or is
// removed with it: no lock is left on a node that is gone.
func testLocksNeverOutliveNodes(t *testing.T, f *fixture) {
	const files = 20
	for round := range 5 {
		a := f.mkdir(t, f.root(), fmt.Sprint("a", round))
		var ids []string
		for i := range files {
			ids = append(ids, f.put(t, a.ID, fmt.Sprint("f", i), "x").ID)
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				_, err := f.tryLock(id, false, storage.LockExclusive)
				if err != nil && !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("CreateLock: %v", err)
				}
			})
		}
		wg.Go(func() {
			if err := f.s.Remove(f.ctx, f.space.ID, a.ID, storage.Conditions{}); err != nil {
				t.Errorf("Remove: %v", err)
			}
		})
		wg.Wait()
		wantTokens(t, fmt.Sprint("SpaceLocks after round ", round), f.spaceLocks(t))
	}
}
