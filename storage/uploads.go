package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/davspaces/davspaces/checksum"
)

// IsHexID reports whether id has the shape of the ids the stores make for
// upload sessions (and boltstore for content files): 32 lower-case hex
// digits, a UUID's bytes. Ids come from URLs and files; anything else
// names nothing and need not reach a store's index or become a path.
func IsHexID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range []byte(id) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ErrChecksum: bytes did not match the checksum announced for them.
var ErrChecksum = errors.New("checksum mismatch")

// UploadSession is a resumable upload (TUS): content that arrives in parts,
// across requests and restarts, and becomes a file when its last byte has.
// Until then nothing is visible at its target.
type UploadSession struct {
	ID      string
	SpaceID string
	// User is the id of the user who started it: only they may continue,
	// query or end it.
	User string
	// Length is the total number of bytes announced; Offset how many have
	// been received and stored durably.
	Length int64
	Offset int64
	// Target is where and how the file is committed when complete.
	Target Commit
	// Expected, when set, is the whole file's checksum announced at
	// creation: a complete upload that does not match it is no file.
	Expected *checksum.Expected
	// Created is set by the store; Expires by the caller: the store drops a
	// session (and its bytes) once it has expired, by the store's clock. A
	// zero Expires never expires.
	Created time.Time
	Expires time.Time
	// Replaces is the size of the file the upload will replace, as the
	// caller found it at creation: the commit frees it, so the session
	// reserves only the growth (UploadReservation). Kept with the session.
	Replaces int64
	// OpenLimit, when positive, caps the unfinished uploads of User
	// (resumable and chunked together) at creation: one more is
	// ErrTooManyUploads. It is not kept with the session.
	OpenLimit int
}

// UploadSessions keeps resumable uploads. Every method is safe for
// concurrent use; expired sessions are never returned. Sessions and their
// bytes survive restarts: what an AppendSession acknowledged is kept.
//
// The store does not check Session.User (the caller does). A session
// reserves its UploadReservation against the space's quota from its
// creation (Usage.Reserved), atomically with it, so that concurrent
// creations cannot promise more than the quota; CompleteSession turns the
// reservation into file content in one step, the commit's (which checks
// the quota without the session's own reservation), so that no upload
// created while it completes can take the room the session held; and
// RemoveSession, expiry or a failed commit releases it.
type UploadSessions interface {
	// CreateSession starts a session for s (ID, Offset and Created are set
	// by the store; the ID is random and unguessable). ErrNotFound when the
	// space does not exist; ErrInvalid for a negative Length, a Target name
	// a commit would refuse or an Expected of an unsupported algorithm;
	// ErrInsufficientStorage when the space's free quota cannot hold its
	// Length, ErrTooManyUploads past OpenLimit and ErrNoSpace when a store
	// that can measure its disk finds it too small for Length.
	CreateSession(ctx context.Context, s UploadSession) (UploadSession, error)
	// Session returns the session id. ErrNotFound when unknown or expired.
	Session(ctx context.Context, id string) (UploadSession, error)
	// AppendSession writes the bytes of r at offset, which must be the
	// session's current offset (ErrConflict otherwise), and never past its
	// Length: an r with more bytes than the session lacks is ErrInvalid and
	// none of its bytes are kept. When check is set, the appended bytes
	// must match it, or they are discarded and the offset stays
	// (ErrChecksum); an r that fails keeps nothing then either, since the
	// part cannot be checked. Without a check, bytes read before r fails
	// are kept and the error (r's, wrapped) returned with the session. The
	// checksums of the whole upload are carried from call to call without
	// reading back what was stored before: all three, or, in a store
	// whose uploads take LaterDigests, SessionDigests, the others being
	// computed after CompleteSession's commit. Appends on one session are
	// decided one after the other: of two at one offset exactly one is
	// taken and the other finds the offset moved (ErrConflict) and keeps
	// nothing. While it reads r, which a slow client may stall, a store
	// holds nothing that calls on other sessions need: no database
	// connection, write transaction or store-wide lock. ErrNotFound when
	// unknown or expired.
	AppendSession(ctx context.Context, id string, offset int64, r io.Reader, check *checksum.Expected) (UploadSession, error)
	// CompleteSession commits a session whose Offset equals its Length
	// (ErrConflict otherwise) as the file its Target names, exactly as
	// Upload.Commit does (created reports whether the file is new), and
	// ends the session. A mismatch with Expected is ErrChecksum: the
	// session ends and no file is written. A commit that fails (a
	// condition, a lock, the quota, the target gone) ends the session too,
	// as it finishes an Upload; only a ctx ended before the commit starts
	// leaves the session as it was. ErrNotFound when unknown or expired.
	// locks are the lock tokens the completing request submitted, the
	// Conditions.Locks of its commit (nil: not checked); the Target's own
	// Locks are not kept with the session, since tokens submitted when the
	// upload started say nothing about locks taken since. A non-zero
	// modTime replaces the Target's ModTime: a client may name the file's
	// modification time only with its last bytes.
	CompleteSession(ctx context.Context, id string, locks *LockTokens, modTime time.Time) (Node, bool, error)
	// RemoveSession ends a session and drops its bytes. ErrNotFound when
	// unknown or expired.
	RemoveSession(ctx context.Context, id string) error
}

// CheckReceived fails with ErrChecksum when the sums of the bytes a
// session received disagree with the digest it announced, if any.
func CheckReceived(expected *checksum.Expected, sums checksum.Sums) error {
	if expected != nil && !expected.Matches(sums) {
		return fmt.Errorf("%s %s announced, %s received: %w", expected.Algorithm, expected.Digest, sums, ErrChecksum)
	}
	return nil
}
