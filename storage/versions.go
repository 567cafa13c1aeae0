package storage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Version is a content a file had before it was replaced.
type Version struct {
	// Key names the version among its file's (VersionKey); unique there.
	Key string
	// Node is the file as it was with that content: its id (the file's),
	// size, modification time, etag, content type and checksums. Name and
	// ParentID are not kept.
	Node Node
	// Replaced is when the content stopped being the file's.
	Replaced time.Time
}

// Versions keeps what a file's content was. Every Store keeps the content
// an Upload.Commit (a PUT, a resumable upload's completion, a chunked
// upload's assembly) replaces as a version of the file, unless the space's
// retention keeps no versions, and prunes the file's versions to its
// retention in the same transaction. A file created where a file was
// deleted whose trash item is still kept (Reviving) is that file restored
// and then replaced: it gets its id, its versions, and its content as the
// newest version. Versions stay with their file in the trash and are
// destroyed with it. Their bytes count in the space's Usage.Versions,
// within its quota: a replacement is refused only when its growth does not
// fit even without any trash and versions, and the version it keeps never
// takes the space past its quota: the oldest of what is kept goes first
// (Evictions), the fresh version last.
type Versions interface {
	// FileVersions returns the versions of file fileID, newest first.
	// ErrNotFound when the file does not exist in the space (or is in its
	// trash).
	FileVersions(ctx context.Context, spaceID, fileID string) ([]Version, error)
	// OpenVersion returns version key of file fileID and its content, as
	// Open does.
	OpenVersion(ctx context.Context, spaceID, fileID, key string) (Version, Content, error)
	// RestoreVersion makes version key the file's content again, as a
	// commit would (a fresh etag; the version's modification time), and
	// keeps the content it replaces as the newest version. The restored
	// version is no longer a version: its bytes are the file's, counted
	// once. Conditions guard the file as a commit's do.
	RestoreVersion(ctx context.Context, spaceID, fileID, key string, c Conditions) (Node, error)
}

// VersionKey returns the key of a version replaced at t: its Unix
// nanoseconds, with seq (the count of versions the file had kept) to keep
// two replacements in the same nanosecond apart.
func VersionKey(replaced time.Time, seq int) string {
	return strconv.FormatInt(replaced.UnixNano(), 10) + "." + strconv.Itoa(seq)
}

// ValidVersionKey checks a key from a request before a store looks it up;
// a malformed key is ErrNotFound, as an unknown one.
func ValidVersionKey(fileID, key string) error {
	nanos, seq, ok := strings.Cut(key, ".")
	if !ok {
		return VersionNotFound(fileID, key)
	}
	if _, err := strconv.ParseInt(nanos, 10, 64); err != nil {
		return VersionNotFound(fileID, key)
	}
	if _, err := strconv.Atoi(seq); err != nil {
		return VersionNotFound(fileID, key)
	}
	return nil
}

// VersionNotFound is the refusal of an unknown version.
func VersionNotFound(fileID, key string) error {
	return fmt.Errorf("version %q of %s: %w", key, fileID, ErrNotFound)
}

// SortVersions orders versions newest first, as FileVersions returns them.
// Two replaced in the same nanosecond go by their keys' seq, as numbers:
// "1.10" is newer than "1.9".
func SortVersions(vs []Version) {
	slices.SortFunc(vs, func(a, b Version) int {
		if c := b.Replaced.Compare(a.Replaced); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.Key), len(a.Key)); c != 0 {
			return c
		}
		return strings.Compare(b.Key, a.Key)
	})
}
