package storage

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/davspaces/davspaces/checksum"
)

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
	// session (and its bytes) once it has expired.
	Created time.Time
	Expires time.Time
}

// UploadSessions keeps resumable uploads. Every method is safe for
// concurrent use; expired sessions are never returned. Sessions and their
// bytes survive restarts: what an AppendSession acknowledged is kept.
type UploadSessions interface {
	// CreateSession starts a session for s (ID, Offset and Created are set
	// by the store). ErrNotFound when the space does not exist.
	CreateSession(ctx context.Context, s UploadSession) (UploadSession, error)
	// Session returns the session id. ErrNotFound when unknown or expired.
	Session(ctx context.Context, id string) (UploadSession, error)
	// AppendSession writes the bytes of r at offset, which must be the
	// session's current offset (ErrConflict otherwise), and never past its
	// Length (ErrInvalid). When check is set, the appended bytes must match
	// it, or they are discarded and the offset stays (ErrChecksum). Without
	// a check, bytes read before r fails are kept and the error returned
	// with the session. The checksums of the whole upload are carried from
	// call to call without reading back what was stored before.
	AppendSession(ctx context.Context, id string, offset int64, r io.Reader, check *checksum.Expected) (UploadSession, error)
	// CompleteSession commits a session whose Offset equals its Length as
	// the file its Target names, exactly as Upload.Commit does, and ends the
	// session. A mismatch with Expected is ErrChecksum: the session ends and
	// no file is written.
	CompleteSession(ctx context.Context, id string) (Node, bool, error)
	// RemoveSession ends a session and drops its bytes. ErrNotFound when
	// unknown or expired.
	RemoveSession(ctx context.Context, id string) error
}
