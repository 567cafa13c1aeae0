package storage

import (
	"fmt"
	"strconv"

	"github.com/davspaces/davspaces/checksum"
)

// MaxContentTypeBytes bounds the media type a file keeps, which a client
// sends in a header: RFC 6838 gives a type and a subtype 127 characters
// each, and the longest real ones with their parameters fit.
const MaxContentTypeBytes = 255

// ValidCommit checks the name a commit creates, as ValidName does (a
// NodeID is only looked up), and that its content type is at most
// MaxContentTypeBytes: a file's record holds nothing a client sends
// without a bound.
func ValidCommit(c Commit, storable func(string) bool) error {
	if len(c.ContentType) > MaxContentTypeBytes {
		return fmt.Errorf("a content type of %d bytes, at most %d: %w", len(c.ContentType), MaxContentTypeBytes, ErrInvalid)
	}
	if c.NodeID != "" {
		return nil
	}
	return ValidName(c.Name, storable)
}

// Target names the target of c in errors: the node it replaces, or else the
// name it creates.
func (c Commit) Target() string {
	if c.NodeID != "" {
		return "node " + c.NodeID
	}
	return strconv.Quote(c.Name)
}

// Unchanged reports whether c, bringing size bytes with sums, would write
// again the file old already is, and asks to keep it then (KeepSame): old
// exists as a file with the same bytes (size, SHA1 and MD5, both known:
// digests computed after a commit are not known yet) and c gives old's
// modification time. A store checks it in the transaction of the
// commit, after c's conditions and locks, and answers old without writing
// anything: no new etag, no version, no propagation.
//
// That makes a file sent twice at once converge on one etag, whichever
// copy commits last. Nextcloud's desktop client does send a file twice:
// a bulk request started while the previous one is under way carries the
// files of both (BulkPropagatorJob builds it from every file still waiting
// for its answer), and the client keeps the etags of the answer it reads
// first, so that a second etag would make its next pass download every
// such file again.
func (c Commit) Unchanged(old Node, exists bool, size int64, sums checksum.Sums) bool {
	return c.KeepSame && exists && !old.IsFolder() && c.Assembles == "" &&
		old.Size == size && sums.SHA1 != "" && sums.MD5 != "" &&
		old.Checksums.SHA1 == sums.SHA1 && old.Checksums.MD5 == sums.MD5 &&
		!c.ModTime.IsZero() && c.ModTime.Equal(old.ModTime)
}
