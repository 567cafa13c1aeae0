package localtree

import (
	"errors"
	"testing"
)

func TestSummaryAndSkipLines(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{Summary{Files: 3, Bytes: 2048, Folders: 1}.String(), "3 files (2.0 KiB) written, 1 folders created, 0 skipped"},
		{Summary{Unchanged: 5, UnchangedBytes: 10, Skipped: 2}.String(), "0 files (0 B) written, 0 folders created, 5 files (10 B) unchanged, 2 skipped"},
		{Skip{Path: "a/b", Reason: ReasonSpecial, Err: errors.New("a named pipe")}.String(), "skipped a/b: not a regular file: a named pipe"},
		{Skip{Path: "gone", Reason: ReasonGone}.String(), "skipped gone: removed meanwhile"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
}
