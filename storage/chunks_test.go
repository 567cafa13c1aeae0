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

func TestValidChunkedUpload(t *testing.T) {
	ascii := func(v string) bool { return !strings.ContainsRune(v, 'é') }
	ok := ChunkedUpload{ID: "u1", User: "alice", SpaceID: "s1"}
	tests := []struct {
		name     string
		mod      func(*ChunkedUpload)
		storable func(string) bool
		valid    bool
	}{
		{"valid", func(*ChunkedUpload) {}, nil, true},
		{"no space", func(u *ChunkedUpload) { u.SpaceID = "" }, ascii, true},
		{"empty id", func(u *ChunkedUpload) { u.ID = "" }, nil, false},
		{"long id", func(u *ChunkedUpload) { u.ID = strings.Repeat("x", MaxChunkedUploadIDBytes+1) }, nil, false},
		{"longest id", func(u *ChunkedUpload) { u.ID = strings.Repeat("x", MaxChunkedUploadIDBytes) }, nil, true},
		{"no user", func(u *ChunkedUpload) { u.User = "" }, nil, false},
		{"user not storable", func(u *ChunkedUpload) { u.User = "é" }, ascii, false},
		{"user storable without a check", func(u *ChunkedUpload) { u.User = "é" }, nil, true},
		{"space not storable", func(u *ChunkedUpload) { u.SpaceID = "é" }, ascii, false},
		{"negative length", func(u *ChunkedUpload) { u.Length = -1 }, nil, false},
		{"negative replaced", func(u *ChunkedUpload) { u.Replaces = -1 }, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := ok
			tt.mod(&u)
			err := ValidChunkedUpload(u, tt.storable)
			if tt.valid != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
				t.Fatalf("ValidChunkedUpload(%+v) = %v, want valid %v", u, err, tt.valid)
			}
		})
	}
}

// The production cap on an upload's parts is pinned here, once: the
// conformance tests cross a lowered one (storetest.ChunkCapper).
func TestChunkCap(t *testing.T) {
	if MaxChunksPerUpload != 10000 {
		t.Fatalf("MaxChunksPerUpload = %d, want 10000", MaxChunksPerUpload)
	}
	for _, tt := range []struct {
		set  int64
		want int
	}{{0, MaxChunksPerUpload}, {-1, MaxChunksPerUpload}, {50, 50}} {
		if got := ChunkCap(tt.set); got != tt.want {
			t.Errorf("ChunkCap(%d) = %d, want %d", tt.set, got, tt.want)
		}
	}
}

func TestCheckChunkRoom(t *testing.T) {
	lookupErr := errors.New("lookup failed")
	has := func(exists bool, err error) func() (bool, error) {
		return func() (bool, error) { return exists, err }
	}
	mustNotLook := func() (bool, error) { panic("part looked up although it does not matter") }
	tests := []struct {
		name    string
		claimed bool
		parts   int
		hasPart func() (bool, error)
		want    error
	}{
		{"room", false, 0, mustNotLook, nil},
		{"last room", false, MaxChunksPerUpload - 1, mustNotLook, nil},
		{"claimed", true, 0, mustNotLook, ErrConflict},
		{"full, new part", false, MaxChunksPerUpload, has(false, nil), ErrInvalid},
		{"full, replaced part", false, MaxChunksPerUpload, has(true, nil), nil},
		{"full, lookup fails", false, MaxChunksPerUpload, has(false, lookupErr), lookupErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckChunkRoom("u1", tt.claimed, tt.parts, ChunkCap(0), tt.hasPart)
			if !errors.Is(err, tt.want) {
				t.Fatalf("CheckChunkRoom = %v, want %v", err, tt.want)
			}
		})
	}
}
