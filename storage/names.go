package storage

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen caps node names and caller-chosen ids in every store.
const MaxNameLen = 255

// A path a client names (a request URL's, a Destination, a bulk upload's
// X-File-Path, an upload's filename, a sharing API's path) is refused above
// these sizes before any work per segment: resolving a path costs a lookup
// per segment, and every name of it is checked, so a client must not
// choose how many there are. A real client's path is far shorter: 4 KiB is
// Linux's PATH_MAX, and 256 folders deep no file manager goes.
const (
	MaxPathBytes    = 4 << 10
	MaxPathSegments = 256
)

// ValidPathSize checks the size of a path a client sent: at most
// MaxPathBytes bytes and MaxPathSegments non-empty segments ("a//b" has
// two). Its cost is linear in at most MaxPathBytes bytes, whatever the
// length of p. A refused path fails with ErrInvalid.
func ValidPathSize(p string) error {
	if len(p) > MaxPathBytes {
		return fmt.Errorf("a path of %d bytes: longer than %d: %w", len(p), MaxPathBytes, ErrInvalid)
	}
	if n := pathSegments(p); n > MaxPathSegments {
		return fmt.Errorf("a path of %d names: more than %d: %w", n, MaxPathSegments, ErrInvalid)
	}
	return nil
}

// pathSegments counts the non-empty segments of p.
func pathSegments(p string) int {
	n := 0
	for s := range strings.SplitSeq(p, "/") {
		if s != "" {
			n++
		}
	}
	return n
}

// ValidName checks a node name at a store's boundary: not empty, "." or
// "..", at most MaxNameLen bytes, without '/' or NUL. storable, when not
// nil, refuses names the store itself cannot hold (PostgreSQL text cannot
// hold invalid UTF-8). A refused name fails with ErrInvalid.
func ValidName(name string, storable func(string) bool) error {
	switch {
	case name == "", name == ".", name == "..", len(name) > MaxNameLen, strings.ContainsAny(name, "/\x00"),
		storable != nil && !storable(name):
		if len(name) > 64 {
			name = name[:64] + "…"
		}
		return fmt.Errorf("name %q: %w", name, ErrInvalid)
	}
	return nil
}

// ValidID checks a caller-chosen id (a space id, which is also the id of
// the space's root node): stores put it into composite keys, so it must not
// contain their separators. what names the id in the error, which wraps
// ErrInvalid.
func ValidID(what, v string) error {
	if v == "" || len(v) > MaxNameLen || strings.ContainsAny(v, "/\x00") {
		return fmt.Errorf("%s %q: %w", what, v, ErrInvalid)
	}
	return nil
}

// ValidUserID checks a user id, which names a personal space, its owner and
// memberships in every store and in URLs (/dav/files/<user>/): UTF-8
// without control characters, otherwise the rules of ValidName. A NUL would
// make PostgreSQL refuse every query that names the user, and an id like
// ".." or "a/b" would be a path segment that means something else. The
// error wraps ErrInvalid.
func ValidUserID(id string) error {
	if err := ValidName(id, printableUTF8); err != nil {
		return fmt.Errorf("user id: %w", err)
	}
	return nil
}

// printableUTF8 reports whether s is valid UTF-8 without control
// characters (C0, DEL and C1).
func printableUTF8(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}
