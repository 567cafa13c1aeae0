package storage

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Searcher finds the nodes of a space by name and the favourites of a
// user, from an index the store keeps with its tree rather than by walking
// it. Both answer the nodes strictly below the scope's folder, live ones
// only (never what is in the trash), ordered by SearchKey and then id, a
// page at a time, with the number of all matches.
type Searcher interface {
	// SearchNames finds the nodes whose names hold pattern as MatchName
	// says.
	SearchNames(ctx context.Context, scope SearchScope, pattern string) (Found, error)
	// SearchFavorites finds the nodes user marked as favourites
	// (IsFavorite).
	SearchFavorites(ctx context.Context, scope SearchScope, user string) (Found, error)
}

// MaxSearchResults caps a page of search results: a client pages with
// Offset beyond it.
const MaxSearchResults = 1000

// SearchScope is where a search looks and which page of the matches it
// answers.
type SearchScope struct {
	SpaceID string
	// Under is the folder whose descendants are searched; "" is the
	// space's root.
	Under string
	// Limit is the page size, at most MaxSearchResults; 0 is
	// MaxSearchResults. Offset is how many matches the page skips.
	Limit, Offset int
}

// Normalize checks s and fills in its defaults: Under the space's root, a
// Limit of 0 MaxSearchResults.
func (s SearchScope) Normalize() (SearchScope, error) {
	if s.Limit < 0 || s.Limit > MaxSearchResults || s.Offset < 0 {
		return s, fmt.Errorf("search page limit %d offset %d (limit at most %d): %w", s.Limit, s.Offset, MaxSearchResults, ErrInvalid)
	}
	if s.Limit == 0 {
		s.Limit = MaxSearchResults
	}
	if s.Under == "" {
		s.Under = s.SpaceID
	}
	return s, nil
}

// Found is a page of search results.
type Found struct {
	Nodes []Node
	// Total is the number of all matches, of this page and the others.
	Total int
}

// FoldName is the form of a name, or a pattern, that searches compare:
// Unicode NFC (a name typed on one system matches the same name stored
// from another, which may have sent it decomposed) in lower case (upper
// and lower case letters of every script match each other).
func FoldName(s string) string {
	return strings.ToLower(norm.NFC.String(s))
}

// MatchName reports whether name holds pattern, folded as FoldName does.
// An empty pattern matches every name.
func MatchName(name, pattern string) bool {
	return strings.Contains(FoldName(name), FoldName(pattern))
}

// SearchKey orders the results of a search: the folded name, so that a
// page of results reads as a listing regardless of case.
func SearchKey(name string) string { return FoldName(name) }

// FavoriteProp is the property a user marks a favourite with (scoped to
// the user, Property.User).
var FavoriteProp = PropName{Space: "http://owncloud.org/ns", Local: "favorite"}

// IsFavorite reports whether the value of a FavoriteProp marks a
// favourite: ownCloud clients set "1", and "0" or removing it unmarks.
func IsFavorite(value string) bool {
	return strings.TrimSpace(value) == "1"
}

// PageOf returns the page of matches scope asks for from all of them,
// which are in order: for a store that finds them all before paging.
func PageOf(all []Node, scope SearchScope) Found {
	lo := min(scope.Offset, len(all))
	hi := min(lo+scope.Limit, len(all))
	return Found{Nodes: all[lo:hi:hi], Total: len(all)}
}
