package storage

import (
	"errors"
	"testing"
	"time"
)

// TestRefusalKinds pins the sentinel each refusal wraps: it decides the
// status a client gets.
func TestRefusalKinds(t *testing.T) {
	tests := []struct {
		name string
		err  error
		kind error
	}{
		{"SpaceNotFound", SpaceNotFound("s"), ErrNotFound},
		{"NodeNotFound", NodeNotFound("s", "n"), ErrNotFound},
		{"ChildNotFound", ChildNotFound("p", "c"), ErrNotFound},
		{"NotAFolder", NotAFolder("n"), ErrInvalid},
		{"IsAFolder", IsAFolder("n"), ErrInvalid},
		{"SpaceIDTaken", SpaceIDTaken("s"), ErrConflict},
		{"SessionNotFound", SessionNotFound("x"), ErrNotFound},
		{"OffsetMismatch", OffsetMismatch(1, 2), ErrConflict},
		{"UploadIncomplete", UploadIncomplete(1, 2), ErrConflict},
		{"PartTooLong", PartTooLong(3), ErrInvalid},
		{"LockNotFound", LockNotFound("s", "t"), ErrNotFound},
		{"LockTokenTaken", LockTokenTaken("t"), ErrExists},
		{"LockConflict", LockConflict("n"), ErrLocked},
		{"TargetExists", TargetExists("a"), ErrExists},
		{"ErrRootMove", ErrRootMove, ErrInvalid},
		{"ErrRootRemove", ErrRootRemove, ErrInvalid},
		{"ErrDestinationInsideSource", ErrDestinationInsideSource, ErrConflict},
		{"ErrDestinationContainsSource", ErrDestinationContainsSource, ErrConflict},
		{"ChunkedUploadNotFound", ChunkedUploadNotFound("u"), ErrNotFound},
		{"ChunkedUploadClaimed", ChunkedUploadClaimed("u"), ErrConflict},
		{"ChunkedUploadClaimedTwice", ChunkedUploadClaimedTwice("u"), ErrConflict},
		{"ChunkNotFound", ChunkNotFound("u", "p"), ErrNotFound},
		{"InvalidProperty", InvalidProperty(PropName{Local: "a"}), ErrInvalid},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.kind) {
			t.Errorf("%s: %v is not %v", tt.name, tt.err, tt.kind)
		}
	}
}

func TestValidLengths(t *testing.T) {
	tests := []struct {
		length, replaces int64
		valid            bool
	}{{0, 0, true}, {10, 5, true}, {-1, 0, false}, {0, -1, false}}
	for _, tt := range tests {
		err := ValidLengths(tt.length, tt.replaces)
		if tt.valid != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("ValidLengths(%d, %d) = %v, want valid %v", tt.length, tt.replaces, err, tt.valid)
		}
	}
}

func TestValidLockTimeout(t *testing.T) {
	for timeout, valid := range map[time.Duration]bool{0: true, time.Second: true, -time.Nanosecond: false} {
		if err := ValidLockTimeout(timeout); valid != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("ValidLockTimeout(%v) = %v, want valid %v", timeout, err, valid)
		}
	}
}

func TestCheckParent(t *testing.T) {
	errOther := errors.New("other space")
	folder := Node{ID: "p", SpaceID: "s", Kind: KindFolder}
	tests := []struct {
		name   string
		parent Node
		exists bool
		want   error
	}{
		{"a folder of the space", folder, true, nil},
		{"missing", Node{}, false, ErrConflict},
		{"a file", Node{ID: "p", SpaceID: "s", Kind: KindFile}, true, ErrConflict},
		{"a folder of another space", Node{ID: "p", SpaceID: "t", Kind: KindFolder}, true, errOther},
		{"a file of another space", Node{ID: "p", SpaceID: "t", Kind: KindFile}, true, errOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := CheckParent("s", "p", tt.parent, tt.exists, errOther); !errors.Is(err, tt.want) {
				t.Fatalf("CheckParent = %v, want %v", err, tt.want)
			}
		})
	}
}
