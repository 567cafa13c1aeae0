package storage

import (
	"errors"
	"testing"

	"golang.org/x/text/unicode/norm"
)

func TestMatchName(t *testing.T) {
	for _, tc := range []struct {
		name, pattern string
		want          bool
	}{
		{"Annual Report.pdf", "report", true},
		{"Annual Report.pdf", "AL RE", true},
		{"Ärger über Straße", "ÄRGER ÜBER", true},
		{norm.NFD.String("Café"), norm.NFC.String("café"), true},
		{norm.NFC.String("Café"), norm.NFD.String("CAFÉ"), true},
		{"ΣΟΦΙΑ", "σοφ", true},
		{"notes.txt", "", true},
		{"notes.txt", "notes.md", false},
		{"Cafe", "café", false},
	} {
		if got := MatchName(tc.name, tc.pattern); got != tc.want {
			t.Errorf("MatchName(%q, %q) = %v, want %v", tc.name, tc.pattern, got, tc.want)
		}
	}
}

func TestSearchScopeNormalize(t *testing.T) {
	s, err := SearchScope{SpaceID: "s"}.Normalize()
	if err != nil || s.Under != "s" || s.Limit != MaxSearchResults {
		t.Fatalf("Normalize = %+v, %v", s, err)
	}
	for _, bad := range []SearchScope{{Limit: -1}, {Offset: -1}, {Limit: MaxSearchResults + 1}} {
		if _, err := bad.Normalize(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Normalize(%+v) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestPageOf(t *testing.T) {
	all := []Node{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	for _, tc := range []struct {
		limit, offset int
		want          string
	}{{2, 0, "ab"}, {2, 2, "c"}, {2, 3, ""}, {5, 1, "bc"}} {
		page := PageOf(all, SearchScope{Limit: tc.limit, Offset: tc.offset})
		got := ""
		for _, n := range page.Nodes {
			got += n.ID
		}
		if got != tc.want || page.Total != 3 {
			t.Errorf("PageOf limit %d offset %d = %q of %d, want %q of 3", tc.limit, tc.offset, got, page.Total, tc.want)
		}
	}
}
