package storage

import (
	"context"

	"github.com/davspaces/davspaces/checksum"
)

// LaterDigests is an Upload that may compute some digests of its content
// after the commit, off the request's critical path: a file's record
// then shows the digests computed while its bytes streamed, and the
// others once the store has read the committed content again (within
// seconds, under a bound of the store's). A store whose uploads lack it
// computes every digest while the bytes stream, as Upload says; the
// distributed store does so far.
//
// The commit is as durable as any other: only digests come later, never
// bytes, and a store computes the digests a restart left missing.
type LaterDigests interface {
	Upload
	// HashInline asks for only the digests of algs while the bytes are
	// written, so that Checksums holds those (for the caller to check what
	// a client announced) and the others come after the commit. It must
	// be called before the first Write.
	HashInline(algs ...checksum.Algorithm)
}

// PartDigests are the digests a store whose uploads take LaterDigests
// carries through the parts of a chunked upload (PutChunkAfter) while
// they arrive; the others come after the assembly's commit. The clients
// announce the whole file's checksum only with the request that
// assembles it (nextcloud/desktop's propagateuploadng.cpp sends
// OC-Checksum on the MOVE, never on a part; owncloud/client's v1 chunks
// on the last part), in the algorithm the capabilities prefer
// (preferredUploadType, SHA1): carrying that one lets the assembly check
// it without reading the parts again. An assembly checked against another
// algorithm reads them once more.
func PartDigests() []checksum.Algorithm { return []checksum.Algorithm{checksum.SHA1} }

// SessionDigests are the digests a store whose uploads take LaterDigests
// carries through a resumable session while its parts arrive: those of
// the whole file's checksum announced at its creation (Expected; the
// ownCloud desktop client's Upload-Metadata checksum, owncloud/client's
// propagateuploadtus.cpp), none without one. A part's own Upload-Checksum
// is checked on that part alone. The others come after the commit.
func SessionDigests(s UploadSession) []checksum.Algorithm {
	if s.Expected == nil {
		return nil
	}
	return []checksum.Algorithm{s.Expected.Algorithm}
}

// HashInline asks up to compute only algs while its bytes stream, when
// it can compute the others later (LaterDigests); else it keeps
// computing them all.
func HashInline(up Upload, algs ...checksum.Algorithm) {
	if l, ok := up.(LaterDigests); ok {
		l.HashInline(algs...)
	}
}

// DigestWaiter is a store whose uploads compute digests after the commit
// (LaterDigests) and which can wait for them.
type DigestWaiter interface {
	// AwaitDigests waits until the digests of the content of file nodeID
	// that the store is computing are recorded, or ctx ends, and returns
	// the node as it is then. It returns at once for a node whose digests
	// are all known or not being computed. It hashes nothing on the
	// caller's goroutine: every costly check runs under the store's
	// node-wide bound, which may take the waited-for content first.
	AwaitDigests(ctx context.Context, spaceID, nodeID string) (Node, error)
}

// AwaitDigests completes the digests of file n with those its store
// computes after the commit, waiting for them until ctx ends, when store
// is a DigestWaiter. Only digests of n's own content are taken: a newer
// content (another etag) has its own.
func AwaitDigests(ctx context.Context, store any, n *Node) {
	w, ok := store.(DigestWaiter)
	if !ok || n.IsFolder() || n.Checksums.Complete() {
		return
	}
	now, err := w.AwaitDigests(ctx, n.SpaceID, n.ID)
	if err == nil && now.ETag == n.ETag {
		n.Checksums = n.Checksums.Merge(now.Checksums)
	}
}
