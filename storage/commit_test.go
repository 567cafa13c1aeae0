package storage

import (
	"errors"
	"testing"
	"unicode/utf8"
)

func TestValidCommit(t *testing.T) {
	tests := []struct {
		name     string
		c        Commit
		storable func(string) bool
		ok       bool
	}{
		{"new name", Commit{ParentID: "p", Name: "f.txt"}, nil, true},
		{"invalid name", Commit{ParentID: "p", Name: ".."}, nil, false},
		{"name the store cannot hold", Commit{ParentID: "p", Name: "\xff"}, utf8.ValidString, false},
		{"node id, name ignored", Commit{NodeID: "n", Name: ".."}, nil, true},
	}
	for _, tt := range tests {
		err := ValidCommit(tt.c, tt.storable)
		if tt.ok != (err == nil) {
			t.Errorf("%s: err = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, not an ErrInvalid", tt.name, err)
		}
	}
}

func TestCommitTarget(t *testing.T) {
	tests := []struct {
		c    Commit
		want string
	}{
		{Commit{NodeID: "n1", Name: "ignored"}, "node n1"},
		{Commit{ParentID: "p", Name: "a b"}, `"a b"`},
	}
	for _, tt := range tests {
		if got := tt.c.Target(); got != tt.want {
			t.Errorf("Target(%+v) = %s, want %s", tt.c, got, tt.want)
		}
	}
}
