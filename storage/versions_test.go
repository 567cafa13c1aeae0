package storage

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestVersionKey(t *testing.T) {
	at := time.Unix(1700000000, 5)
	if got := VersionKey(at, 3); got != "1700000000000000005.3" {
		t.Fatalf("VersionKey = %q", got)
	}
	if VersionKey(at, 0) == VersionKey(at, 1) {
		t.Fatal("two replacements in one nanosecond share a key")
	}
	for _, seq := range []int{0, 1, 99, 12345} {
		if err := ValidVersionKey("f", VersionKey(at, seq)); err != nil {
			t.Fatalf("ValidVersionKey of a VersionKey: %v", err)
		}
	}
}

func TestValidVersionKey(t *testing.T) {
	for _, tc := range []struct {
		key   string
		valid bool
	}{
		{"1700000000000000005.3", true},
		{"0.0", true},
		{"", false},
		{".", false},
		{"1.", false},
		{".1", false},
		{"1", false},
		{"x.1", false},
		{"1.x", false},
		{"1.2.3", false},
		{"1.2/x", false},
		{"../1.2", false},
		{"1.99999999999999999999999", false},
	} {
		err := ValidVersionKey("file-1", tc.key)
		if tc.valid && err != nil {
			t.Errorf("ValidVersionKey(%q) = %v, want valid", tc.key, err)
		}
		if !tc.valid && !errors.Is(err, ErrNotFound) {
			t.Errorf("ValidVersionKey(%q) = %v, want ErrNotFound", tc.key, err)
		}
	}
}

func TestSortVersions(t *testing.T) {
	t0 := time.Unix(1000, 0)
	vs := []Version{
		{Key: VersionKey(t0, 0), Replaced: t0},
		{Key: VersionKey(t0.Add(time.Second), 2), Replaced: t0.Add(time.Second)},
		{Key: VersionKey(t0.Add(time.Second), 10), Replaced: t0.Add(time.Second)},
		{Key: VersionKey(t0.Add(time.Second), 9), Replaced: t0.Add(time.Second)},
		{Key: VersionKey(t0.Add(time.Hour), 1), Replaced: t0.Add(time.Hour)},
	}
	SortVersions(vs)
	var keys []string
	for _, v := range vs {
		keys = append(keys, v.Key)
	}
	want := []string{
		VersionKey(t0.Add(time.Hour), 1),
		VersionKey(t0.Add(time.Second), 10),
		VersionKey(t0.Add(time.Second), 9),
		VersionKey(t0.Add(time.Second), 2),
		VersionKey(t0, 0),
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("SortVersions = %v, want %v", keys, want)
	}
}
