package storage

import (
	"strings"
	"testing"
)

// FuzzNewScope feeds the space and path of a scoped app password as a
// client sends them: a scope is either refused or clean, the same when
// made again from itself, and reaches its own folder.
func FuzzNewScope(f *testing.F) {
	for _, seed := range [][2]string{
		{"lab", "/raw"}, {"lab", "/raw/"}, {"lab", ""}, {"lab", "/"},
		{"lab", "/a/../b"}, {"lab", "//a"}, {"lab", "/a\x00b"}, {"", "/raw"},
		{"lab", "/" + strings.Repeat("a/", 300)}, {"s$lab", "/ü/ñ"},
	} {
		f.Add(seed[0], seed[1], false)
	}
	f.Fuzz(func(t *testing.T, space, path string, readOnly bool) {
		s, err := NewScope(space, path, readOnly)
		if err != nil {
			return
		}
		again, err := NewScope(s.Space, s.Path, s.ReadOnly)
		if err != nil || again != s {
			t.Fatalf("NewScope(%q, %q) = %+v, made again: %+v, %v", space, path, s, again, err)
		}
		if s.Space != "" && !s.Reaches(s.Space, scopeNames(s.Path)) {
			t.Fatalf("%+v does not reach its own folder", s)
		}
	})
}

// scopeNames splits a clean scope path into its names.
func scopeNames(p string) []string {
	var names []string
	for _, n := range strings.Split(p, "/") {
		if n != "" {
			names = append(names, n)
		}
	}
	return names
}
