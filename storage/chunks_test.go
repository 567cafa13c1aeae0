package storage

import (
	"errors"
	"strings"
	"testing"
)

func TestValidChunkName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"1", true},
		{"00000042", true},
		{strings.Repeat("n", MaxChunkNameBytes), true},
		{strings.Repeat("n", MaxChunkNameBytes+1), false},
		{strings.Repeat("é", MaxChunkNameBytes/2+1), false}, // counted in bytes
		{"", false},
		{"a/b", false},
		{"nul\x00", false},
	}
	for _, tt := range tests {
		err := ValidChunkName(tt.name)
		if tt.ok != (err == nil) {
			t.Errorf("ValidChunkName(%.20q) = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidChunkName(%.20q) = %v, not an ErrInvalid", tt.name, err)
		}
	}
}

// A commit ends only the claimed upload it names.
func TestCommitEnds(t *testing.T) {
	claimed := ChunkedUpload{ID: "u", Claimed: true}
	tests := []struct {
		name string
		c    Commit
		u    ChunkedUpload
		want bool
	}{
		{"the claimed upload it assembles", Commit{Assembles: "u"}, claimed, true},
		{"an upload not claimed", Commit{Assembles: "u"}, ChunkedUpload{ID: "u"}, false},
		{"another upload", Commit{Assembles: "v"}, claimed, false},
		{"no assembly", Commit{}, claimed, false},
		{"no assembly, no id", Commit{}, ChunkedUpload{Claimed: true}, false},
	}
	for _, tt := range tests {
		if got := tt.c.Ends(tt.u); got != tt.want {
			t.Errorf("%s: Ends = %v, want %v", tt.name, got, tt.want)
		}
	}
}
