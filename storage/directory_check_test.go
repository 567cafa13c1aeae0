package storage

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckDirectoryEntry(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	e, err := NormalizeDirectoryEntry(DirectoryEntry{ID: "marie", DisplayName: "Ma\x00rie", Groups: []string{"phys\x00ics", "\x00"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckDirectoryEntry(e); err != nil || e.DisplayName != "Marie" || strings.Join(e.Groups, ",") != "physics" {
		t.Errorf("normalized %+v does not pass: %v", e, err)
	}
	for _, bad := range []DirectoryEntry{{ID: ""}, {ID: "marie", Email: "a\x00b"}, {ID: "marie", Groups: []string{"a\x00"}}} {
		if err := CheckDirectoryEntry(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckDirectoryEntry(%+q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestMatchesGroupQuery(t *testing.T) {
	for _, tc := range []struct {
		group, query string
		want         bool
	}{
		{"Physics", "phys", true}, {"Émigrés", "ÉMIGR", true}, {"physics", "", true}, {"physics", "chem", false},
	} {
		if got := MatchesGroupQuery(tc.group, tc.query); got != tc.want {
			t.Errorf("MatchesGroupQuery(%q, %q) = %v", tc.group, tc.query, got)
		}
	}
}
