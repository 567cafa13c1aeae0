package storage

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidName(t *testing.T) {
	tests := []struct {
		name     string
		storable func(string) bool
		ok       bool
	}{
		{"report.pdf", nil, true},
		{"é ü", nil, true},
		{strings.Repeat("a", MaxNameLen), nil, true},
		{strings.Repeat("a", MaxNameLen+1), nil, false},
		{"", nil, false},
		{".", nil, false},
		{"..", nil, false},
		{"...", nil, true},
		{"a/b", nil, false},
		{"a\x00b", nil, false},
		{"\xff", nil, true},
		{"\xff", utf8.ValidString, false},
		{"ok", utf8.ValidString, true},
	}
	for _, tt := range tests {
		err := ValidName(tt.name, tt.storable)
		if tt.ok != (err == nil) {
			t.Errorf("ValidName(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidName(%q) = %v, not an ErrInvalid", tt.name, err)
		}
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"space-1", true},
		{strings.Repeat("a", MaxNameLen), true},
		{strings.Repeat("a", MaxNameLen+1), false},
		{"", false},
		{"a/b", false},
		{"a\x00b", false},
	}
	for _, tt := range tests {
		err := ValidID("space id", tt.id)
		if tt.ok != (err == nil) {
			t.Errorf("ValidID(%q) = %v, want ok %v", tt.id, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidID(%q) = %v, not an ErrInvalid", tt.id, err)
		}
	}
}

func TestValidUserID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"einstein", true},
		{"marie.curie@example.org", true},
		{"Ærøskøbing 東京", true},
		{"...", true},
		{strings.Repeat("a", MaxNameLen), true},
		{strings.Repeat("é", MaxNameLen/2), true},
		{"", false},
		{".", false},
		{"..", false},
		{"a/b", false},
		{"ein\x00stein", false},
		{"tab\there", false},
		{"line\nbreak", false},
		{"del\x7f", false},
		{"c1\u0085", false},
		{"\xff\xfe", false},
		{strings.Repeat("a", MaxNameLen+1), false},
		{strings.Repeat("x", 5000), false},
	}
	for _, tt := range tests {
		err := ValidUserID(tt.id)
		if tt.ok != (err == nil) {
			t.Errorf("ValidUserID(%q) = %v, want ok %v", tt.id, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidUserID(%q) = %v, not an ErrInvalid", tt.id, err)
		}
	}
}

func TestValidPathSize(t *testing.T) {
	deepest := strings.Repeat("/a", MaxPathSegments)
	tests := []struct {
		name string
		path string
		ok   bool
	}{
		{"empty", "", true},
		{"root", "/", true},
		{"usual", "/remote.php/dav/files/einstein/Photos/2024/img.jpg", true},
		{"longest", "/" + strings.Repeat("a", MaxPathBytes-1), true},
		{"a byte too long", "/" + strings.Repeat("a", MaxPathBytes), false},
		{"deepest", deepest, true},
		{"a name too deep", deepest + "/a", false},
		{"empty segments do not count", deepest + "//" + strings.Repeat("/", 100), true},
		{"a 256 KiB path of one-byte names", strings.Repeat("/a", 128<<10), false},
	}
	for _, tt := range tests {
		err := ValidPathSize(tt.path)
		if tt.ok != (err == nil) {
			t.Errorf("%s: ValidPathSize = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: ValidPathSize = %v, not an ErrInvalid", tt.name, err)
		}
	}
}
