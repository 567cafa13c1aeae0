package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// The caps of storage.LockLimits, and the rule that a lock counts only
// while its user is an editor of the space (storage.LockCounts).

// lockAs asks for a lock of who (with groups) under lim.
func (f *fixture) lockAs(who string, groups []string, node string, deep bool, scope storage.LockScope, lim storage.LockLimits) (storage.Lock, error) {
	return f.s.CreateLock(f.ctx, storage.Lock{
		SpaceID: f.space.ID, NodeID: node, Root: "/" + node, Deep: deep, Scope: scope,
		User: who, UserName: who, Groups: groups, Timeout: time.Hour,
	}, lim)
}

// An owner longer than the cap is ErrInvalid and stores nothing.
func testLockOwnerLimit(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "x")
	lim := storage.LockLimits{MaxOwnerBytes: 64}
	ask := storage.Lock{SpaceID: f.space.ID, NodeID: file.ID, Scope: storage.LockShared, User: user.ID, Timeout: time.Hour}
	ask.Owner = "<d:href>" + strings.Repeat("o", 64-len("<d:href></d:href>")) + "</d:href>"
	fits, err := f.s.CreateLock(f.ctx, ask, lim)
	if err != nil {
		t.Fatalf("CreateLock with an owner of the most bytes allowed: %v", err)
	}
	ask.Owner += " "
	_, err = f.s.CreateLock(f.ctx, ask, lim)
	wantErr(t, "CreateLock with an owner one byte too long", err, storage.ErrInvalid)
	wantTokens(t, "SpaceLocks", f.spaceLocks(t), fits)
}

// A user holds at most MaxPerUser locks of a space; others are not
// limited by that user's locks, and a removed or expired lock frees its
// place.
func testLocksPerUserLimit(t *testing.T, f *fixture) {
	f = f.projectSpace(t)
	if _, err := f.s.PutSpace(f.ctx, storage.Space{ID: f.space.ID, Name: f.space.Name, Quota: storage.NoQuota,
		Members: map[string]storage.Role{user.ID: storage.RoleEditor, "marie": storage.RoleEditor}}); err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	lim := storage.LockLimits{MaxPerUser: 3}
	var mine []storage.Lock
	for i := range 3 {
		file := f.put(t, f.root(), fmt.Sprint("f", i), "x")
		l, err := f.lockAs(user.ID, nil, file.ID, false, storage.LockExclusive, lim)
		if err != nil {
			t.Fatalf("lock %d of %d allowed: %v", i+1, lim.MaxPerUser, err)
		}
		mine = append(mine, l)
	}
	extra := f.put(t, f.root(), "extra", "x")
	_, err := f.lockAs(user.ID, nil, extra.ID, false, storage.LockExclusive, lim)
	wantErr(t, "one lock more than allowed", err, storage.ErrLockQuota)
	wantErr(t, "one lock more than allowed", err, storage.ErrLocked)
	wantTokens(t, "SpaceLocks after the refusal", f.spaceLocks(t), mine...)

	theirs, err := f.lockAs("marie", nil, extra.ID, false, storage.LockExclusive, lim)
	if err != nil {
		t.Fatalf("another user's lock: %v", err)
	}
	if err := f.s.RemoveLock(f.ctx, f.space.ID, mine[0].Token); err != nil {
		t.Fatalf("RemoveLock: %v", err)
	}
	again, err := f.lockAs(user.ID, nil, f.root(), false, storage.LockShared, lim)
	if err != nil {
		t.Fatalf("a lock in the place of a removed one: %v", err)
	}
	wantTokens(t, "SpaceLocks", f.spaceLocks(t), mine[1], mine[2], theirs, again)
}

// The locks a user holds in a space cost at most MaxBytesPerUser, as
// storage.LockBytes counts them: a lock that would cost more is
// ErrLockBytesQuota (an ErrLocked, never an ErrInsufficientStorage) and
// keeps nothing; a long owner costs its bytes; other users have room of
// their own, and an ended lock gives its bytes back.
func testLockBytesPerUserLimit(t *testing.T, f *fixture) {
	f = f.projectSpace(t)
	if _, err := f.s.PutSpace(f.ctx, storage.Space{ID: f.space.ID, Name: f.space.Name, Quota: storage.NoQuota,
		Members: map[string]storage.Role{user.ID: storage.RoleEditor, "marie": storage.RoleEditor}}); err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	files := make([]storage.Node, 5)
	for i := range files {
		files[i] = f.put(t, f.root(), fmt.Sprint("f", i), "x")
	}
	// Room for three locks as lockAs takes them: the same text but for
	// the token, which the store makes ("urn:uuid:" and 36 characters).
	one := storage.LockBytes(storage.Lock{Token: "urn:uuid:" + strings.Repeat("0", 36), NodeID: files[0].ID,
		Root: "/" + files[0].ID, User: user.ID, UserName: user.ID})
	lim := storage.LockLimits{MaxBytesPerUser: 3 * one}
	var mine []storage.Lock
	for i := range 3 {
		l, err := f.lockAs(user.ID, nil, files[i].ID, false, storage.LockExclusive, lim)
		if err != nil {
			t.Fatalf("lock %d of the 3 that fit: %v", i+1, err)
		}
		mine = append(mine, l)
	}
	_, err := f.lockAs(user.ID, nil, files[3].ID, false, storage.LockExclusive, lim)
	wantErr(t, "a lock beyond the bytes allowed", err, storage.ErrLockBytesQuota)
	wantErr(t, "a lock beyond the bytes allowed", err, storage.ErrLocked)
	if errors.Is(err, storage.ErrInsufficientStorage) {
		t.Fatalf("a lock beyond the bytes allowed = %v, an ErrInsufficientStorage: clients read it as a full disk", err)
	}
	wantTokens(t, "SpaceLocks after the refusal", f.spaceLocks(t), mine...)

	theirs, err := f.lockAs("marie", nil, files[3].ID, false, storage.LockExclusive, lim)
	if err != nil {
		t.Fatalf("another user's lock: %v", err)
	}
	if err := f.s.RemoveLock(f.ctx, f.space.ID, mine[0].Token); err != nil {
		t.Fatalf("RemoveLock: %v", err)
	}
	// The freed bytes fit a lock like the removed one, not one with a
	// longer owner.
	long := storage.Lock{SpaceID: f.space.ID, NodeID: files[4].ID, Root: "/" + files[4].ID, Scope: storage.LockExclusive,
		Owner: "<d:href>mailto:einstein@example.org</d:href>", User: user.ID, UserName: user.ID, Timeout: time.Hour}
	_, err = f.s.CreateLock(f.ctx, long, lim)
	wantErr(t, "a lock with a long owner in the room of a short one", err, storage.ErrLockBytesQuota)
	again, err := f.lockAs(user.ID, nil, files[4].ID, false, storage.LockExclusive, lim)
	if err != nil {
		t.Fatalf("a lock in the place of a removed one: %v", err)
	}
	wantTokens(t, "SpaceLocks", f.spaceLocks(t), mine[1], mine[2], theirs, again)
	// An expired lock costs nothing.
	f.after(2 * time.Hour)
	renewed, err := f.lockAs(user.ID, nil, files[0].ID, false, storage.LockExclusive, lim)
	if err != nil {
		t.Fatalf("a lock once the others expired: %v", err)
	}
	wantTokens(t, "SpaceLocks once the others expired", f.spaceLocks(t), renewed)
}

// No node is covered by more than MaxCovering locks: a lock is refused
// with ErrTooManyLocks when its node, or a locked node below a Deep one,
// would be; locks on nodes beside each other do not add up.
func testLocksCoveringLimit(t *testing.T, f *fixture) {
	const shared = storage.LockShared
	lim := storage.LockLimits{MaxCovering: 3}
	tr := f.tree(t) // a/ a/b/ a/b/f a/g c/
	try := func(node storage.Node, deep bool) (storage.Lock, error) {
		return f.lockAs(user.ID, nil, node.ID, deep, shared, lim)
	}
	must := func(what string, node storage.Node, deep bool) storage.Lock {
		t.Helper()
		l, err := try(node, deep)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return l
	}
	rootDeep := must("deep root", f.node(t, f.root()), true)
	aDeep := must("deep a", tr.a, true)
	// f is covered by the root's and a's: one more fits, two do not.
	f1 := must("third lock covering f", tr.f, false)
	_, err := try(tr.f, false)
	wantErr(t, "fourth lock covering f", err, storage.ErrTooManyLocks)
	wantErr(t, "fourth lock covering f", err, storage.ErrLocked)
	// g beside it has room of its own.
	g1 := must("third lock covering g", tr.g, false)
	// A Deep lock on b would cover f a fourth time; a shallow one on b
	// covers b alone (the root's, a's and its own).
	_, err = try(tr.b, true)
	wantErr(t, "deep lock on b above a full f", err, storage.ErrTooManyLocks)
	bShallow := must("shallow lock on b", tr.b, false)
	// A Deep lock on c, beside a, counts only the root's.
	cDeep := must("deep lock on c", tr.c, true)
	// A Deep lock on the root would cover f, g and b a fourth time.
	_, err = try(f.node(t, f.root()), true)
	wantErr(t, "second deep root", err, storage.ErrTooManyLocks)
	wantTokens(t, "SpaceLocks after the refusals", f.spaceLocks(t), rootDeep, aDeep, f1, g1, bShallow, cDeep)

	// Room is made by removing a lock.
	if err := f.s.RemoveLock(f.ctx, f.space.ID, f1.Token); err != nil {
		t.Fatalf("RemoveLock: %v", err)
	}
	must("third lock covering f again", tr.f, false)
}

// A lock counts only while its user, by their id or the groups recorded
// with it, is an editor of the space as its members stand now: taken out
// of the space or made a viewer, the user leaves a lock that shows
// nowhere, blocks no change and no lock, and cannot be refreshed or
// removed; made an editor again before it is dropped, it may count again.
func testLocksOfFormerMembers(t *testing.T, f *fixture) {
	f = f.projectSpace(t)
	members := func(m map[string]storage.Role) {
		t.Helper()
		m[user.ID] = storage.RoleManager
		if _, err := f.s.PutSpace(f.ctx, storage.Space{ID: f.space.ID, Name: f.space.Name, Quota: storage.NoQuota, Members: m}); err != nil {
			t.Fatalf("PutSpace: %v", err)
		}
	}
	members(map[string]storage.Role{"marie": storage.RoleEditor, storage.GroupPrefix + "physicists": storage.RoleEditor})
	tr := f.tree(t)
	byID, err := f.lockAs("marie", nil, tr.a.ID, true, storage.LockExclusive, storage.LockLimits{})
	if err != nil {
		t.Fatalf("lock of an editor: %v", err)
	}
	byGroup, err := f.lockAs("richard", []string{"physicists"}, tr.c.ID, true, storage.LockExclusive, storage.LockLimits{})
	if err != nil {
		t.Fatalf("lock of an editor through a group: %v", err)
	}
	wantTokens(t, "SpaceLocks of members", f.spaceLocks(t), byID, byGroup)
	wantTokens(t, "LocksOn f", f.locksOn(t, tr.f.ID, false), byID)

	// marie is taken out, physicists become viewers.
	members(map[string]storage.Role{storage.GroupPrefix + "physicists": storage.RoleViewer})
	wantTokens(t, "SpaceLocks of former members", f.spaceLocks(t))
	wantTokens(t, "LocksOn f", f.locksOn(t, tr.f.ID, false))
	wantTokens(t, "LocksOn the root below", f.locksOn(t, f.root(), true))
	// Their locks block no change and no lock.
	none := &storage.LockTokens{User: user.ID}
	if _, _, err := f.commit(f.space.ID, "new", storage.Commit{NodeID: tr.f.ID, Conditions: storage.Conditions{Locks: none}}); err != nil {
		t.Fatalf("writing below a former member's lock: %v", err)
	}
	mine := f.lock(t, tr.c.ID, false, storage.LockExclusive)
	// Their tokens name no lock any more.
	_, err = f.s.RefreshLock(f.ctx, f.space.ID, byGroup.Token, time.Hour)
	wantErr(t, "RefreshLock of a former member's lock", err, storage.ErrNotFound)
	wantErr(t, "RemoveLock of a former member's lock", f.s.RemoveLock(f.ctx, f.space.ID, byID.Token), storage.ErrNotFound)
	if err := f.s.Remove(f.ctx, f.space.ID, tr.g.ID, storage.Conditions{Locks: none}); err != nil {
		t.Fatalf("removing below a former member's lock: %v", err)
	}
	wantTokens(t, "SpaceLocks", f.spaceLocks(t), mine)
}
