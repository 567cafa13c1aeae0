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
