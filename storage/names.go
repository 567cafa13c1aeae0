package storage

import (
	"fmt"
	"strings"
)

// MaxNameLen caps node names and caller-chosen ids in every store.
const MaxNameLen = 255

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
