package storage

import (
	"errors"
	"strings"
	"testing"
)

// FuzzValidLinkToken: a token from a request is either one NewLinkToken
// could have made (URL-safe, one path segment, bounded) or ErrNotFound,
// the answer of an unknown token; never anything else.
func FuzzValidLinkToken(f *testing.F) {
	for _, seed := range []string{NewLinkToken(), "", "..", "a/b", "%2F", "ä", ".uploads", strings.Repeat("a", 129), "a\x00b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		err := ValidLinkToken(token)
		if err == nil {
			if len(token) == 0 || len(token) > 128 || strings.ContainsAny(token, "/.%\x00 ") {
				t.Fatalf("ValidLinkToken(%q) accepted it", token)
			}
			return
		}
		if !errors.Is(err, ErrNotFound) || err.Error() != LinkNotFound().Error() {
			t.Fatalf("ValidLinkToken(%q) = %v, want ErrNotFound naming nothing", token, err)
		}
	})
}
