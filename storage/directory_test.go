package storage

import (
	"strings"
	"testing"
	"time"
)

func TestNormalizeDirectoryEntry(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	long := strings.Repeat("é", MaxDirectoryField) // two bytes a rune
	e, err := NormalizeDirectoryEntry(DirectoryEntry{
		ID:          "marie",
		DisplayName: long,
		Email:       "marie@example.org\xff",
		Groups:      []string{"physics", "", "chemistry", "physics"},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.DisplayName) > MaxDirectoryField || !strings.HasPrefix(long, e.DisplayName) || len(e.DisplayName) < MaxDirectoryField-1 {
		t.Errorf("display name cut to %d bytes", len(e.DisplayName))
	}
	if e.Email != "marie@example.org" {
		t.Errorf("email %q", e.Email)
	}
	if strings.Join(e.Groups, ",") != "chemistry,physics" || !e.Seen.Equal(now) {
		t.Errorf("groups %q, seen %v", e.Groups, e.Seen)
	}
	many := make([]string, MaxDirectoryGroups+10)
	for i := range many {
		many[i] = strings.Repeat("g", i+1)
	}
	if e, _ := NormalizeDirectoryEntry(DirectoryEntry{ID: "marie", Groups: many}, now); len(e.Groups) != MaxDirectoryGroups {
		t.Errorf("%d groups kept", len(e.Groups))
	}
	if _, err := NormalizeDirectoryEntry(DirectoryEntry{ID: "a/b"}, now); err == nil {
		t.Error("an invalid user id is kept")
	}
}

func TestDirectoryStale(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	kept := DirectoryEntry{ID: "marie", DisplayName: "Marie", Groups: []string{"physics"}, Seen: now}
	fresh := kept
	fresh.Seen = now.Add(time.Hour)
	tests := []struct {
		name   string
		change func(*DirectoryEntry)
		found  bool
		want   bool
	}{
		{"unchanged", nil, true, false},
		{"never seen", nil, false, true},
		{"renamed", func(e *DirectoryEntry) { e.DisplayName = "Marie C." }, true, true},
		{"new email", func(e *DirectoryEntry) { e.Email = "m@example.org" }, true, true},
		{"other groups", func(e *DirectoryEntry) { e.Groups = nil }, true, true},
		{"a day later", func(e *DirectoryEntry) { e.Seen = now.Add(DirectoryRefresh) }, true, true},
	}
	for _, tt := range tests {
		f := fresh
		if tt.change != nil {
			tt.change(&f)
		}
		if got := DirectoryStale(kept, tt.found, f); got != tt.want {
			t.Errorf("%s: stale %v", tt.name, got)
		}
	}
}

func TestMatchesDirectoryQuery(t *testing.T) {
	e := DirectoryEntry{ID: "marie", DisplayName: "Marie Curie", Email: "Marie@Example.org"}
	for q, want := range map[string]bool{"": true, "MAR": true, "curie": true, "example.ORG": true, "einstein": false} {
		if MatchesDirectoryQuery(e, q) != want {
			t.Errorf("query %q: %v", q, !want)
		}
	}
	for limit, want := range map[int]int{-1: 1, 0: 1, 10: 10, 1000: MaxDirectoryResults} {
		if got := DirectoryLimit(limit); got != want {
			t.Errorf("DirectoryLimit(%d) = %d", limit, got)
		}
	}
}
