package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// DirectoryEntry is what the server knows of a user who signed in: who
// they are and the groups their last token named. Sharing finds people to
// invite among these, and a share's creator's role in a space is judged
// with the groups recorded here.
type DirectoryEntry struct {
	// ID is the user id (ValidUserID).
	ID          string
	DisplayName string
	Email       string
	// Groups are the user's groups, sorted, without duplicates.
	Groups []string
	// Seen is when the entry was last written: a user is written again
	// when what is known of them changes, or when Seen is older than
	// DirectoryRefresh, not on every request.
	Seen time.Time
}

// Limits of the directory, so that no token can make it keep much.
const (
	// MaxDirectoryField is the longest display name or email kept, in
	// bytes; longer ones are cut at a rune boundary.
	MaxDirectoryField = 256
	// MaxDirectoryGroups is how many groups of one user are kept; the
	// first ones in sorted order.
	MaxDirectoryGroups = 256
	// MaxDirectoryResults is the most entries one search returns.
	MaxDirectoryResults = 50
	// DirectoryRefresh is how old an unchanged entry may grow before it
	// is written again (its Seen renewed).
	DirectoryRefresh = 24 * time.Hour
)

// SignInIdle reports whether an app password of a user is refused because
// the provider has not been seen to sign them in for longer than idle: an
// app password then outlives a user removed at the provider by idle at
// most. kept and found are the user's entry (DirectoryReader's answer);
// idle 0 refuses none. An entry's Seen is renewed only by a sign-in at
// the provider, at most once per DirectoryRefresh, so idle is to be longer
// than that.
func SignInIdle(kept DirectoryEntry, found bool, idle time.Duration, now time.Time) bool {
	return idle > 0 && (!found || now.Sub(kept.Seen) > idle)
}

// DirectoryReader reads one user's entry: what judging a share needs of a
// Directory.
type DirectoryReader interface {
	// DirectoryUser returns the entry of user id. ErrNotFound when the
	// user never signed in.
	DirectoryUser(ctx context.Context, id string) (DirectoryEntry, error)
}

// Directory keeps the users who signed in. Entries are written through
// RememberUser when a request's user differs from what is kept (new,
// other name, email or groups) or was seen more than DirectoryRefresh ago.
type Directory interface {
	// RememberUser keeps e (NormalizeDirectoryEntry's result) as the entry
	// of e.ID, replacing what was kept.
	RememberUser(ctx context.Context, e DirectoryEntry) error
	DirectoryReader
	// SearchUsers returns up to limit (at most MaxDirectoryResults)
	// entries whose id, display name or email contains query, compared
	// case-insensitively (MatchesDirectoryQuery), ordered by id.
	SearchUsers(ctx context.Context, query string, limit int) ([]DirectoryEntry, error)
	// SearchGroups returns up to limit (at most MaxDirectoryResults)
	// names of groups some kept user is in that contain query, compared
	// case-insensitively, sorted.
	SearchGroups(ctx context.Context, query string, limit int) ([]string, error)
}

// NormalizeDirectoryEntry checks e's id and returns e as a store keeps
// it: fields cut to MaxDirectoryField (invalid UTF-8 and NUL bytes
// dropped), groups sorted, deduplicated, empty
// names dropped, at most MaxDirectoryGroups, and Seen set to now.
func NormalizeDirectoryEntry(e DirectoryEntry, now time.Time) (DirectoryEntry, error) {
	if err := ValidUserID(e.ID); err != nil {
		return DirectoryEntry{}, fmt.Errorf("directory entry: %w", err)
	}
	e.DisplayName = cutUTF8(e.DisplayName, MaxDirectoryField)
	e.Email = cutUTF8(e.Email, MaxDirectoryField)
	groups := make([]string, 0, len(e.Groups))
	for _, g := range e.Groups {
		if g = cutUTF8(g, MaxDirectoryField); g != "" {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	groups = slices.Compact(groups)
	e.Groups = groups[:min(len(groups), MaxDirectoryGroups)]
	e.Seen = now
	return e, nil
}

// DirectoryStale reports whether a request's user, normalized as fresh,
// must be written over kept (found false when there is none): something
// changed, or kept is older than DirectoryRefresh.
func DirectoryStale(kept DirectoryEntry, found bool, fresh DirectoryEntry) bool {
	return !found ||
		kept.DisplayName != fresh.DisplayName ||
		kept.Email != fresh.Email ||
		!slices.Equal(kept.Groups, fresh.Groups) ||
		fresh.Seen.Sub(kept.Seen) >= DirectoryRefresh
}

// MinDirectorySearch is the fewest characters a search for people to
// share with has (oCIS' search_min_length; ownCloud Web asks no sooner):
// a shorter one would list every user and their email to anybody signed
// in, who may not learn who else uses the server.
const MinDirectorySearch = 3

// DirectorySearchTooShort reports whether query, without the spaces around
// it, has fewer than MinDirectorySearch characters: a search that finds
// nobody, whatever the protocol.
func DirectorySearchTooShort(query string) bool {
	return utf8.RuneCountInString(strings.TrimSpace(query)) < MinDirectorySearch
}

// MatchesDirectoryQuery reports whether e matches a search: query, folded
// to lower case, is contained in its id, display name or email. The empty
// query matches everybody.
func MatchesDirectoryQuery(e DirectoryEntry, query string) bool {
	q := FoldDirectoryText(query)
	return strings.Contains(FoldDirectoryText(e.ID), q) ||
		strings.Contains(FoldDirectoryText(e.DisplayName), q) ||
		strings.Contains(FoldDirectoryText(e.Email), q)
}

// FoldDirectoryText is the case folding of directory searches: a field
// matches a query when the folded field contains the folded query. A store
// that searches in its database keeps the folded fields beside the others.
func FoldDirectoryText(s string) string { return strings.ToLower(s) }

// MatchesGroupQuery reports whether a group's name matches a search, as
// MatchesDirectoryQuery compares.
func MatchesGroupQuery(group, query string) bool {
	return strings.Contains(FoldDirectoryText(group), FoldDirectoryText(query))
}

// CheckDirectoryEntry is what a store asks of an entry it keeps, which it
// otherwise keeps as given: a valid user id, and no NUL byte in any field
// (PostgreSQL's text cannot hold one, and the embedded store's keys use it
// as separator). NormalizeDirectoryEntry's results pass.
func CheckDirectoryEntry(e DirectoryEntry) error {
	if err := ValidUserID(e.ID); err != nil {
		return fmt.Errorf("directory entry: %w", err)
	}
	if strings.Contains(e.DisplayName, "\x00") || strings.Contains(e.Email, "\x00") ||
		slices.ContainsFunc(e.Groups, func(g string) bool { return strings.Contains(g, "\x00") }) {
		return fmt.Errorf("directory entry %s: a NUL byte: %w", e.ID, ErrInvalid)
	}
	return nil
}

// DirectoryLimit is the number of results a search with limit returns at
// most: limit within 1 and MaxDirectoryResults.
func DirectoryLimit(limit int) int {
	return max(1, min(limit, MaxDirectoryResults))
}

// UserWithGroups is the user id as the directory knows them, with the
// groups of their last sign-in (none when never seen): what a share's
// creator may do now is judged with these. A store that keeps no
// directory (errors.ErrUnsupported) has seen nobody: its users are judged
// by the roles given to their ids alone.
func UserWithGroups(ctx context.Context, d DirectoryReader, id string) (User, error) {
	e, err := d.DirectoryUser(ctx, id)
	switch {
	case err == nil:
		return User{ID: id, Groups: e.Groups}, nil
	case errors.Is(err, ErrNotFound), errors.Is(err, errors.ErrUnsupported):
		return User{ID: id}, nil
	}
	return User{}, fmt.Errorf("directory entry of %s: %w", id, err)
}

// cutUTF8 cuts s to at most n bytes without splitting a rune, and drops
// invalid UTF-8 and NUL bytes (CheckDirectoryEntry).
func cutUTF8(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, ""), "\x00", "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
