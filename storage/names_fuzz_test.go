package storage

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzValidUserID pins what an accepted user id can be: a name a store
// can keep as a key and a path segment, whatever an authenticator sent.
func FuzzValidUserID(f *testing.F) {
	for _, id := range []string{"einstein", "ein\x00stein", "..", ".", "a/b", "\xff", "é", "tab\there", strings.Repeat("x", 256), "\u0085", "group:x"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if ValidUserID(id) != nil {
			return
		}
		switch {
		case id == "" || id == "." || id == "..":
			t.Fatalf("%q accepted", id)
		case len(id) > 255:
			t.Fatalf("an id of %d bytes accepted", len(id))
		case !utf8.ValidString(id), strings.ContainsRune(id, '/'), strings.ContainsFunc(id, unicode.IsControl):
			t.Fatalf("%q accepted", id)
		}
	})
}

// FuzzValidPathSize pins the path size rule: an accepted path has at most
// MaxPathBytes bytes and MaxPathSegments names, and a refused one more.
func FuzzValidPathSize(f *testing.F) {
	for _, p := range []string{"", "/", "/a/b", "a//b/", strings.Repeat("/a", MaxPathSegments), strings.Repeat("/a", MaxPathSegments+1), strings.Repeat("x", MaxPathBytes+1)} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		names := 0
		for _, s := range strings.Split(p, "/") {
			if s != "" {
				names++
			}
		}
		within := len(p) <= MaxPathBytes && names <= MaxPathSegments
		if err := ValidPathSize(p); (err == nil) != within {
			t.Fatalf("a path of %d bytes and %d names: %v", len(p), names, err)
		}
	})
}
