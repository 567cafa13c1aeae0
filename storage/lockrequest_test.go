package storage

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidLockRequest(t *testing.T) {
	ok := Lock{SpaceID: "s", NodeID: "n", Scope: LockExclusive, Timeout: time.Minute}
	with := func(change func(*Lock)) Lock {
		l := ok
		change(&l)
		return l
	}
	tests := []struct {
		name string
		lock Lock
		ok   bool
	}{
		{"exclusive", ok, true},
		{"shared without timeout", with(func(l *Lock) { l.Scope, l.Timeout = LockShared, 0 }), true},
		{"longest token", with(func(l *Lock) { l.Token = strings.Repeat("t", MaxLockTokenBytes) }), true},
		{"empty node", with(func(l *Lock) { l.NodeID = "" }), false},
		{"unknown scope", with(func(l *Lock) { l.Scope = 99 }), false},
		{"negative timeout", with(func(l *Lock) { l.Timeout = -time.Second }), false},
		{"long token", with(func(l *Lock) { l.Token = strings.Repeat("t", MaxLockTokenBytes+1) }), false},
		{"token with NUL", with(func(l *Lock) { l.Token = "urn:\x00" }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidLockRequest(tt.lock)
			if tt.ok != (err == nil) {
				t.Fatalf("err = %v, want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, not an ErrInvalid", err)
			}
		})
	}
}

func TestLockCounts(t *testing.T) {
	project := Space{Type: SpaceProject, Members: map[string]Role{
		"editor": RoleEditor, "viewer": RoleViewer, GroupPrefix + "physicists": RoleEditor,
	}}
	personal := Space{Type: SpacePersonal, Owner: "owner"}
	tests := []struct {
		name  string
		space Space
		lock  Lock
		want  bool
	}{
		{"editor", project, Lock{User: "editor"}, true},
		{"editor through a group", project, Lock{User: "richard", Groups: []string{"physicists"}}, true},
		{"viewer", project, Lock{User: "viewer"}, false},
		{"not a member", project, Lock{User: "marie"}, false},
		{"group not recorded", project, Lock{User: "richard"}, false},
		{"personal space owner", personal, Lock{User: "owner"}, true},
		{"no user", project, Lock{}, true},
	}
	for _, tt := range tests {
		if got := LockCounts(tt.space, tt.lock); got != tt.want {
			t.Errorf("%s: LockCounts = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCheckLockLimits(t *testing.T) {
	// root/a/b/f; the new lock is on a.
	places := LockPlaces{
		Above:  map[string]bool{"a": true, "root": true},
		Inside: map[string][]string{"f": {"f", "b"}, "b": {"b"}},
	}
	deepRoot := Lock{Token: "1", NodeID: "root", Deep: true, User: "u"}
	onF := Lock{Token: "2", NodeID: "f", User: "u"}
	deepB := Lock{Token: "3", NodeID: "b", Deep: true, User: "v"}
	onA := Lock{Token: "4", NodeID: "a", User: "v"}
	// What u's locks cost with one more on a.
	uWithA := LockBytes(deepRoot) + LockBytes(onF) + LockBytes(Lock{NodeID: "a", User: "u"})
	tests := []struct {
		name  string
		l     Lock
		locks []Lock
		lim   LockLimits
		want  error
	}{
		{"no caps", Lock{NodeID: "a", Deep: true, Owner: "xxxx"}, []Lock{deepRoot, onF, deepB, onA}, LockLimits{}, nil},
		{"owner at the cap", Lock{NodeID: "a", Owner: "xxxx"}, nil, LockLimits{MaxOwnerBytes: 4}, nil},
		{"owner over the cap", Lock{NodeID: "a", Owner: "xxxxx"}, nil, LockLimits{MaxOwnerBytes: 4}, ErrInvalid},
		{"user below the cap", Lock{NodeID: "a", User: "u"}, []Lock{deepRoot}, LockLimits{MaxPerUser: 2}, nil},
		{"user at the cap", Lock{NodeID: "a", User: "u"}, []Lock{deepRoot, onF}, LockLimits{MaxPerUser: 2}, ErrLockQuota},
		{"other users do not count", Lock{NodeID: "a", User: "w"}, []Lock{deepRoot, onF}, LockLimits{MaxPerUser: 2}, nil},
		{"user's lock bytes at the cap", Lock{NodeID: "a", User: "u"}, []Lock{deepRoot, onF, deepB}, LockLimits{MaxBytesPerUser: uWithA}, nil},
		{"user's lock bytes over the cap", Lock{NodeID: "a", User: "u"}, []Lock{deepRoot, onF, deepB}, LockLimits{MaxBytesPerUser: uWithA - 1}, ErrLockBytesQuota},
		{"a long owner costs its bytes", Lock{NodeID: "a", User: "u", Owner: "o"}, []Lock{deepRoot, onF}, LockLimits{MaxBytesPerUser: uWithA}, ErrLockBytesQuota},
		{"other users' lock bytes do not count", Lock{NodeID: "a", User: "w"}, []Lock{deepRoot, onF}, LockLimits{MaxBytesPerUser: LockBytes(Lock{NodeID: "a", User: "w"})}, nil},
		{"a lock without a user is not capped", Lock{NodeID: "a"}, []Lock{deepRoot, onF}, LockLimits{MaxBytesPerUser: 1, MaxPerUser: 1}, nil},
		// a is covered by deepRoot and onA: a third fits under 3.
		{"shallow, covering at the cap", Lock{NodeID: "a"}, []Lock{deepRoot, onA, onF, deepB}, LockLimits{MaxCovering: 3}, nil},
		// Deep on a: f is covered by deepRoot, deepB, onF, and then the new one.
		{"deep, a node inside over the cap", Lock{NodeID: "a", Deep: true}, []Lock{deepRoot, onF, deepB}, LockLimits{MaxCovering: 3}, ErrTooManyLocks},
		{"deep, a node inside at the cap", Lock{NodeID: "a", Deep: true}, []Lock{deepRoot, onF, deepB}, LockLimits{MaxCovering: 4}, nil},
		// A shallow lock on a does not cover b or f.
		{"deep, a shallow lock above does not reach inside", Lock{NodeID: "a", Deep: true}, []Lock{onA, onF}, LockLimits{MaxCovering: 2}, nil},
	}
	for _, tt := range tests {
		err := CheckLockLimits(tt.l, tt.locks, tt.lim, places)
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: CheckLockLimits = %v, want %v", tt.name, err, tt.want)
		}
	}
	// A lock cap is a 423 to the client, never a 507: a client reads 507
	// as a full disk.
	for _, err := range []error{ErrTooManyLocks, ErrLockQuota, ErrLockBytesQuota} {
		if !errors.Is(err, ErrLocked) || errors.Is(err, ErrInsufficientStorage) {
			t.Errorf("%v must be an ErrLocked and no ErrInsufficientStorage", err)
		}
	}
}

func TestLockBytes(t *testing.T) {
	tests := []struct {
		name string
		l    Lock
		want int64
	}{
		{"empty", Lock{}, LockOverheadBytes},
		{"every text field", Lock{Token: "tt", NodeID: "nnn", Root: "/r", Owner: "oooo", User: "u", UserName: "U U", Groups: []string{"g", "gg"}}, LockOverheadBytes + 2 + 3 + 2 + 4 + 1 + 3 + 3},
		// Neither the space (the key's prefix) nor the fixed-size fields
		// vary: the overhead holds them.
		{"fixed fields", Lock{SpaceID: "s", Deep: true, Scope: LockShared, Timeout: time.Hour}, LockOverheadBytes},
	}
	for _, tt := range tests {
		if got := LockBytes(tt.l); got != tt.want {
			t.Errorf("%s: LockBytes = %d, want %d", tt.name, got, tt.want)
		}
	}
}
