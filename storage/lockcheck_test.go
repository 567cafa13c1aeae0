package storage

import (
	"errors"
	"testing"
)

func TestCheckHeld(t *testing.T) {
	held := &LockTokens{User: "alice", Tokens: []string{"t-root", "t-child"}}
	root := Lock{Token: "t-root", NodeID: "n", User: "alice"}
	deepRoot := Lock{Token: "t-root", NodeID: "n", User: "alice", Deep: true}
	foreign := Lock{Token: "t-foreign", NodeID: "n", User: "bob"}
	child := Lock{Token: "t-child", NodeID: "c", User: "alice"}
	foreignChild := Lock{Token: "t-other", NodeID: "c", User: "alice"}
	unheldChild := Lock{Token: "t-unheld", NodeID: "d", User: "alice"}
	belowOf := func(locks ...Lock) func() ([]Lock, error) {
		return func() ([]Lock, error) { return locks, nil }
	}
	lookupErr := errors.New("lookup")
	tests := []struct {
		name      string
		covering  []Lock
		below     func() ([]Lock, error)
		wantToken string // token of the LockedError, "" for none
		wantErr   error
	}{
		{"no locks", nil, nil, "", nil},
		{"covering lock held", []Lock{root}, nil, "", nil},
		{"one of several covering locks held", []Lock{foreign, root}, nil, "", nil},
		{"covering lock not held", []Lock{foreign}, nil, "t-foreign", nil},
		{"below not looked at without below", []Lock{root}, nil, "", nil},
		{"held deep lock covers below", []Lock{deepRoot}, func() ([]Lock, error) { return nil, lookupErr }, "", nil},
		{"held child lock below", []Lock{root}, belowOf(root, child), "", nil},
		{"child locked by another held token", []Lock{root}, belowOf(root, foreignChild, child), "", nil},
		{"unheld lock below", []Lock{root}, belowOf(root, unheldChild), "t-unheld", nil},
		{"unheld lock below an unlocked node", nil, belowOf(unheldChild), "t-unheld", nil},
		{"below lookup fails", []Lock{root}, func() ([]Lock, error) { return nil, lookupErr }, "", lookupErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckHeld(held, tt.covering, tt.below)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			var locked *LockedError
			switch {
			case tt.wantToken == "" && err != nil:
				t.Fatalf("err = %v, want nil", err)
			case tt.wantToken != "" && !errors.As(err, &locked):
				t.Fatalf("err = %v, want a *LockedError", err)
			case tt.wantToken != "" && locked.Token != tt.wantToken:
				t.Fatalf("locked by %q, want %q", locked.Token, tt.wantToken)
			case tt.wantToken != "" && !errors.Is(err, ErrLocked):
				t.Fatalf("err = %v, not an ErrLocked", err)
			}
		})
	}
}
