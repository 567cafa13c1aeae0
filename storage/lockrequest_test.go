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
