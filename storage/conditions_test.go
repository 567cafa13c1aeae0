package storage

import (
	"errors"
	"testing"
)

func TestConditionsCheck(t *testing.T) {
	tests := []struct {
		name string
		c    Conditions
		etag string
		want error
	}{
		{"none", Conditions{}, "e1", nil},
		{"if-match equal", Conditions{IfMatch: "e1"}, "e1", nil},
		{"if-match differs", Conditions{IfMatch: "e2"}, "e1", ErrPrecondition},
		{"if-none-match", Conditions{IfNoneMatch: true}, "e1", ErrNodeExists},
		{"both, etag differs", Conditions{IfMatch: "e2", IfNoneMatch: true}, "e1", ErrPrecondition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Check(tt.etag)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("Check(%q) = %v, want %v", tt.etag, err, tt.want)
			}
		})
	}
}

func TestConditionsCheckReplace(t *testing.T) {
	file := Node{ETag: "e1", Kind: KindFile}
	folder := Node{ETag: "e1", Kind: KindFolder}
	tests := []struct {
		name   string
		c      Conditions
		old    Node
		exists bool
		want   error
	}{
		{"new file", Conditions{}, Node{}, false, nil},
		{"replace file", Conditions{}, file, true, nil},
		{"if-match on missing target", Conditions{IfMatch: "e1"}, Node{}, false, ErrPrecondition},
		{"if-match equal", Conditions{IfMatch: "e1"}, file, true, nil},
		{"if-match differs", Conditions{IfMatch: "e2"}, file, true, ErrPrecondition},
		{"if-none-match on missing target", Conditions{IfNoneMatch: true}, Node{}, false, nil},
		{"if-none-match on existing target", Conditions{IfNoneMatch: true}, file, true, ErrTargetExists},
		{"folder at target", Conditions{}, folder, true, ErrTargetIsFolder},
		{"folder at target, if-match first", Conditions{IfMatch: "e2"}, folder, true, ErrPrecondition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.CheckReplace(tt.old, tt.exists)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("CheckReplace = %v, want %v", err, tt.want)
			}
		})
	}
	if !errors.Is(ErrTargetIsFolder, ErrConflict) || !errors.Is(ErrTargetExists, ErrPrecondition) {
		t.Fatal("the refusals must keep their kinds")
	}
}
