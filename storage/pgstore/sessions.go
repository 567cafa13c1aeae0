package pgstore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// A resumable upload (TUS) is a row of upload_sessions; its bytes are
// immutable objects, one per append, listed in the row's parts. The row
// also carries the checksum state of the bytes received, so that an
// append can land on any node and a completion commits the parts as the
// file's segments without reading or copying them.
//
// An append reads the client's bytes into its object first, holding no
// transaction, and then records the part under the session's row lock
// (SELECT … FOR UPDATE), held only for that: of two appends at one offset,
// on any nodes, the first to record is taken and the other finds the
// offset moved. A node that dies mid-append holds no lock; its object is
// left to the sweep.

// sessionColumns are the columns sessionRow reads, in its order.
const sessionColumns = `id, space_id, user_id, length, received, target, expected, hash_state, parts, created, expires_ns, replaces`

// sessionRow is a row of upload_sessions.
type sessionRow struct {
	ID        string              `db:"id"`
	SpaceID   string              `db:"space_id"`
	UserID    string              `db:"user_id"`
	Length    int64               `db:"length"`
	Received  int64               `db:"received"`
	Target    sessionTarget       `db:"target"`
	Expected  *checksum.Expected  `db:"expected"`
	HashState []byte              `db:"hash_state"`
	Parts     []s3content.Segment `db:"parts"`
	Created   time.Time           `db:"created"`
	ExpiresNS *int64              `db:"expires_ns"`
	Replaces  int64               `db:"replaces"`
}

// sessionTarget is a session's storage.Commit as kept in the row, without
// its Locks: tokens submitted when the upload started say nothing about
// locks taken since.
type sessionTarget struct {
	NodeID      string    `json:"node,omitempty"`
	ParentID    string    `json:"parent,omitempty"`
	Name        string    `json:"name,omitempty"`
	ModTime     time.Time `json:"mtime"`
	ContentType string    `json:"type,omitempty"`
	IfMatch     string    `json:"if_match,omitempty"`
	IfNoneMatch bool      `json:"if_none_match,omitempty"`
}

func targetOf(c storage.Commit) sessionTarget {
	return sessionTarget{
		NodeID: c.NodeID, ParentID: c.ParentID, Name: c.Name, ModTime: c.ModTime,
		ContentType: c.ContentType, IfMatch: c.IfMatch, IfNoneMatch: c.IfNoneMatch,
	}
}

func (t sessionTarget) commit() storage.Commit {
	return storage.Commit{
		NodeID: t.NodeID, ParentID: t.ParentID, Name: t.Name, ModTime: t.ModTime, ContentType: t.ContentType,
		Conditions: storage.Conditions{IfMatch: t.IfMatch, IfNoneMatch: t.IfNoneMatch},
	}
}

func (r sessionRow) session() storage.UploadSession {
	us := storage.UploadSession{
		ID: r.ID, SpaceID: r.SpaceID, User: r.UserID, Length: r.Length, Offset: r.Received,
		Target: r.Target.commit(), Expected: r.Expected, Created: r.Created.UTC(), Replaces: r.Replaces,
	}
	us.Expires = fromNanos(r.ExpiresNS)
	return us
}

// sums returns the checksums of the bytes the session received.
func (r sessionRow) sums() (*checksum.Writer, error) {
	w := checksum.NewWriter()
	if err := w.UnmarshalBinary(r.HashState); err != nil {
		return nil, fmt.Errorf("session %s: checksum state: %w", r.ID, err)
	}
	return w, nil
}

// CreateSession records a session without bytes, holding the space's row
// lock: its length is reserved against the quota (the row itself is the
// reservation) only if it fits beside every other reservation.
func (s *Store) CreateSession(ctx context.Context, us storage.UploadSession) (storage.UploadSession, error) {
	if err := validSession(us); err != nil {
		return storage.UploadSession{}, fmt.Errorf("create session: %w", err)
	}
	state, err := checksum.NewWriter().MarshalBinary()
	if err != nil {
		return storage.UploadSession{}, fmt.Errorf("create session: %w", err)
	}
	id := uuid.New()
	us.ID, us.Offset, us.Created = hex.EncodeToString(id[:]), 0, s.dbNow()
	limit := us.OpenLimit
	us.OpenLimit = 0 // not kept
	err = s.inSpace(ctx, us.SpaceID, func(tx pgx.Tx) error {
		if err := openUpload(ctx, tx, us.User, limit); err != nil {
			return err
		}
		if err := s.makeRoomIn(ctx, tx, us.SpaceID, storage.UploadReservation(us)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO upload_sessions (id, space_id, user_id, length, target, expected, hash_state, created, expires_ns, replaces)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			us.ID, us.SpaceID, us.User, us.Length, targetOf(us.Target), us.Expected, state, us.Created, unixNanos(us.Expires), us.Replaces)
		return err
	})
	if err != nil {
		return storage.UploadSession{}, fmt.Errorf("create session: %w", err)
	}
	return us, nil
}

// validSession checks what a caller gives CreateSession: what a commit
// would refuse is refused now, and so is text PostgreSQL cannot keep.
func validSession(us storage.UploadSession) error {
	if us.SpaceID == "" || !validText(us.SpaceID) {
		return fmt.Errorf("space id %.64q: %w", us.SpaceID, storage.ErrInvalid)
	}
	if err := storage.ValidLengths(us.Length, us.Replaces); err != nil {
		return err
	}
	if us.Target.NodeID == "" {
		if err := validName(us.Target.Name); err != nil {
			return err
		}
	}
	t := us.Target
	for _, v := range []string{us.User, t.NodeID, t.ParentID, t.Name, t.ContentType, t.IfMatch} {
		if !validText(v) {
			return fmt.Errorf("session text %.64q: %w", v, storage.ErrInvalid)
		}
	}
	if us.Expected != nil {
		if _, err := us.Expected.NewVerifier(); err != nil {
			return fmt.Errorf("%w: %w", storage.ErrInvalid, err)
		}
	}
	return nil
}

// Session returns the live session id.
func (s *Store) Session(ctx context.Context, id string) (storage.UploadSession, error) {
	var row sessionRow
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		row, err = s.liveSession(ctx, tx, id, "")
		return err
	})
	if err != nil {
		return storage.UploadSession{}, fmt.Errorf("session: %w", err)
	}
	return row.session(), nil
}

// liveSession reads session id unless it is unknown or expired; lock is
// appended to the query ("FOR UPDATE" to hold its row).
func (s *Store) liveSession(ctx context.Context, tx pgx.Tx, id, lock string) (sessionRow, error) {
	if !storage.IsHexID(id) {
		return sessionRow{}, storage.SessionNotFound(id)
	}
	return oneRow(ctx, tx, pgx.RowToStructByName[sessionRow], storage.SessionNotFound(id),
		`SELECT `+sessionColumns+` FROM upload_sessions
		WHERE id = $1 AND (expires_ns IS NULL OR expires_ns > $2) `+lock, id, s.now().UnixNano())
}

// AppendSession streams the bytes of r into a new object and then records
// it as the session's next part. The client's bytes are read before any
// transaction is begun or row locked: a client that stalls holds an
// object upload, never one of the node's database connections. The row
// lock is held only to record, where the offset is checked again: of two
// appends at one offset, the first to record is taken and the other's
// object is discarded (ErrConflict).
func (s *Store) AppendSession(ctx context.Context, id string, offset int64, r io.Reader, check *checksum.Expected) (storage.UploadSession, error) {
	us, err := s.appendSession(ctx, id, offset, r, check)
	if err != nil {
		return us, fmt.Errorf("append to session %s: %w", id, err)
	}
	return us, nil
}

func (s *Store) appendSession(ctx context.Context, id string, offset int64, r io.Reader, check *checksum.Expected) (storage.UploadSession, error) {
	row, err := s.sessionAt(ctx, id, offset)
	if err != nil {
		return storage.UploadSession{}, err
	}
	key := newObjectKey(prefixSession)
	if err := s.recordPending(ctx, key); err != nil {
		return storage.UploadSession{}, fmt.Errorf("recording object %s: %w", key, err)
	}
	part, err := s.storePart(ctx, key, row, r, check)
	if err != nil {
		s.discardObject(ctx, key)
		return row.session(), err
	}
	if part.n == 0 { // an empty part needs no record
		s.discardObject(ctx, key)
		return row.session(), part.kept
	}
	us, err := s.recordAppend(ctx, row, s3content.Segment{Key: key, Size: part.n}, part.sum)
	if err != nil {
		s.discardObject(ctx, key)
		return us, err
	}
	return us, part.kept
}

// sessionAt reads the live session id and checks that offset is where it
// is, in a transaction of its own that ends before any byte is read.
func (s *Store) sessionAt(ctx context.Context, id string, offset int64) (sessionRow, error) {
	var row sessionRow
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		row, err = s.liveSession(ctx, tx, id, "")
		return err
	})
	if err != nil {
		return sessionRow{}, err
	}
	if offset != row.Received {
		return sessionRow{}, storage.OffsetMismatch(offset, row.Received)
	}
	return row, nil
}

// storePart streams the bytes of r, at most what the session of row
// lacks, into object key and returns the part as read. An error means the
// part must not be kept; the caller discards the object either way then.
func (s *Store) storePart(ctx context.Context, key string, row sessionRow, r io.Reader, check *checksum.Expected) (*partReader, error) {
	part, err := newPartReader(r, row, check)
	if err != nil {
		return nil, err
	}
	body, size, err := sizedStream(part)
	var stored int64
	if err == nil && size != 0 { // an empty part needs no object
		stored, err = s.objects.Put(ctx, key, body, size)
	}
	if rerr := part.rejection(); rerr != nil {
		return part, rerr
	}
	if err != nil {
		return part, err
	}
	if stored != part.n {
		return part, fmt.Errorf("object %s holds %d bytes, %d sent", key, stored, part.n)
	}
	return part, nil
}

// recordAppend records seg as the next part of the session of row, whose
// checksums after it are sum, under the session's row lock. A session
// that moved on since row was read (another append was recorded first)
// is ErrConflict.
func (s *Store) recordAppend(ctx context.Context, row sessionRow, seg s3content.Segment, sum *checksum.Writer) (storage.UploadSession, error) {
	tx, locked, err := s.lockSession(ctx, row.ID)
	if err != nil {
		return row.session(), err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if locked.Received != row.Received {
		return locked.session(), storage.OffsetMismatch(row.Received, locked.Received)
	}
	if err := s.recordPart(ctx, tx, &locked, seg, sum); err != nil {
		return row.session(), classify(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return row.session(), classify(err)
	}
	return locked.session(), nil
}

// Backoff bounds of lockSession.
const (
	sessionBusyFirst = 10 * time.Millisecond
	sessionBusyMax   = 500 * time.Millisecond
)

// lockSession begins a transaction holding the row lock of the live
// session id. It waits for another holder without holding a connection:
// it asks with NOWAIT and backs off, so that appends queued behind one
// being recorded do not take the node's connection pool.
func (s *Store) lockSession(ctx context.Context, id string) (pgx.Tx, sessionRow, error) {
	pool, err := s.db()
	if err != nil {
		return nil, sessionRow{}, err
	}
	backoff := sessionBusyFirst
	for {
		tx, err := pool.BeginTx(ctx, pgx.TxOptions{})
		if err != nil {
			return nil, sessionRow{}, classify(err)
		}
		row, err := s.liveSession(ctx, tx, id, "FOR UPDATE NOWAIT")
		if err == nil {
			return tx, row, nil
		}
		tx.Rollback(context.WithoutCancel(ctx))
		if !rowLocked(err) {
			return nil, sessionRow{}, classify(err)
		}
		select {
		case <-ctx.Done():
			return nil, sessionRow{}, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, sessionBusyMax)
	}
}

// rowLocked reports a NOWAIT lock request refused because another
// transaction holds the row.
func rowLocked(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// recordPart adds seg to the parts of row with the checksum state after
// it, updating row.
func (s *Store) recordPart(ctx context.Context, tx pgx.Tx, row *sessionRow, seg s3content.Segment, sum *checksum.Writer) error {
	state, err := sum.MarshalBinary()
	if err != nil {
		return err
	}
	row.Parts = append(row.Parts, seg)
	row.Received += seg.Size
	row.HashState = state
	_, err = tx.Exec(ctx, `UPDATE upload_sessions SET received = $2, parts = $3, hash_state = $4 WHERE id = $1`,
		row.ID, row.Received, row.Parts, row.HashState)
	if err != nil {
		return err
	}
	return adopt(ctx, tx, seg.Key)
}

// partReader hands the bytes of one append to the bucket, at most what the
// session lacks, feeding the session's checksums and, with a check, the
// part's. It ends the stream where a part must not be kept (too long, or r
// failing under a check), which makes the bucket drop the object; without
// a check, a failure of r ends the part at the bytes read before it.
type partReader struct {
	r        io.Reader
	left     int64 // bytes the session still lacks
	n        int64 // bytes handed on
	sum      *checksum.Writer
	check    *checksum.Expected
	verifier *checksum.Verifier

	tooLong bool
	failed  error // r's failure, for a part with a check
	kept    error // r's failure, for a part kept up to it
}

// errPartRefused ends a part's stream so that the bucket keeps nothing.
var errPartRefused = errors.New("part refused")

func newPartReader(r io.Reader, row sessionRow, check *checksum.Expected) (*partReader, error) {
	sum, err := row.sums()
	if err != nil {
		return nil, err
	}
	p := &partReader{r: r, left: row.Length - row.Received, sum: sum, check: check}
	if check != nil {
		if p.verifier, err = check.NewVerifier(); err != nil {
			return nil, fmt.Errorf("%w: %w", storage.ErrInvalid, err)
		}
	}
	return p, nil
}

func (p *partReader) Read(b []byte) (int, error) {
	if p.n == p.left {
		return 0, p.atLimit()
	}
	b = b[:min(int64(len(b)), p.left-p.n)]
	n, err := p.r.Read(b)
	p.sum.Write(b[:n])
	if p.verifier != nil {
		p.verifier.Write(b[:n])
	}
	p.n += int64(n)
	switch {
	case err == nil, err == io.EOF:
		return n, err
	case p.check != nil:
		p.failed = fmt.Errorf("read part: %w", err)
		return n, errPartRefused
	default:
		p.kept = fmt.Errorf("read part: %w", err)
		return n, io.EOF
	}
}

// atLimit ends a part that has every byte the session lacked: one more
// byte from r is too many.
func (p *partReader) atLimit() error {
	var one [1]byte
	n, _ := io.ReadFull(p.r, one[:])
	if n > 0 {
		p.tooLong = true
		return errPartRefused
	}
	return io.EOF
}

// rejection says why the part must not be kept, or nil.
func (p *partReader) rejection() error {
	switch {
	case p.tooLong:
		return storage.PartTooLong(p.left)
	case p.failed != nil:
		return p.failed
	case p.verifier != nil && !p.verifier.Matches():
		return fmt.Errorf("part does not match %s %s: %w", p.check.Algorithm, p.check.Digest, storage.ErrChecksum)
	}
	return nil
}

// CompleteSession commits the parts of a session that has all its bytes
// as the content of its target, through the same commit as an Upload, and
// ends the session in the commit's transaction: the row goes after the
// space's row lock is taken and before the quota is checked, so the
// session's reservation becomes the file's use in one step, and no upload
// created meanwhile can take the room it held. Of two completions the
// second finds no session. A commit that fails ends the session in a step
// of its own and releases its parts, as the contract asks.
func (s *Store) CompleteSession(ctx context.Context, id string, locks *storage.LockTokens, modTime time.Time) (storage.Node, bool, error) {
	n, created, err := s.completeSession(ctx, id, locks, modTime)
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("complete session %s: %w", id, err)
	}
	return n, created, nil
}

func (s *Store) completeSession(ctx context.Context, id string, locks *storage.LockTokens, modTime time.Time) (storage.Node, bool, error) {
	row, sums, err := s.completeSessionRow(ctx, id)
	if err != nil {
		return storage.Node{}, false, err
	}
	if mismatch := storage.CheckReceived(row.Expected, sums); mismatch != nil {
		if err := s.endSession(ctx, id); err != nil {
			return storage.Node{}, false, err
		}
		return storage.Node{}, false, mismatch
	}
	if err := ctx.Err(); err != nil {
		return storage.Node{}, false, err
	}
	target := row.Target.commit()
	target.Locks = locks
	if !modTime.IsZero() {
		target.ModTime = modTime
	}
	content := newContent{segments: row.Parts, size: row.Length, sums: sums}
	n, created, err := s.commitContent(ctx, row.SpaceID, content, target, func(ch *change) error {
		return s.takeSession(ctx, ch.tx, row)
	})
	if err != nil {
		s.endFailedSession(ctx, id)
		return storage.Node{}, false, err
	}
	return n, created, nil
}

// completeSessionRow reads the live session id, which must have all its
// bytes, and the checksums of those bytes.
func (s *Store) completeSessionRow(ctx context.Context, id string) (sessionRow, checksum.Sums, error) {
	var row sessionRow
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		row, err = s.liveSession(ctx, tx, id, "")
		return err
	})
	if err != nil {
		return sessionRow{}, checksum.Sums{}, err
	}
	if row.Received != row.Length {
		return sessionRow{}, checksum.Sums{}, storage.UploadIncomplete(row.Received, row.Length)
	}
	sum, err := row.sums()
	if err != nil {
		return sessionRow{}, checksum.Sums{}, err
	}
	return row, sum.Sums(), nil
}

// takeSession deletes the row of the session that row read, in the
// transaction of the commit its parts go into, holding the row lock so
// that a concurrent completion or removal is decided before or after.
// The parts pass to the file the commit makes (which adopts them) without
// a moment between owners. A session gone meanwhile is ErrNotFound; one
// whose parts changed since (which a session with all its bytes cannot)
// is ErrConflict.
func (s *Store) takeSession(ctx context.Context, tx pgx.Tx, row sessionRow) error {
	locked, err := s.liveSession(ctx, tx, row.ID, "FOR UPDATE")
	if err != nil {
		return err
	}
	if locked.Received != row.Received {
		return fmt.Errorf("session %s moved from %d to %d bytes: %w", row.ID, row.Received, locked.Received, storage.ErrConflict)
	}
	_, err = tx.Exec(ctx, `DELETE FROM upload_sessions WHERE id = $1`, row.ID)
	return err
}

// endFailedSession ends session id after its commit failed, releasing its
// parts, even when the request that completed it is cancelled. A commit
// that went through after all (its answer lost with its connection) took
// the session: nothing is left to end then.
func (s *Store) endFailedSession(ctx context.Context, id string) {
	err := s.endSession(context.WithoutCancel(ctx), id)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		s.log.Warn("cannot end an upload session whose commit failed; it expires", zap.String("session", id), zap.Error(err))
	}
}

// RemoveSession ends the live session id and releases its parts.
func (s *Store) RemoveSession(ctx context.Context, id string) error {
	if err := s.endSession(ctx, id); err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	return nil
}

// endSession deletes the row of the live session id under its row lock
// and releases its parts.
func (s *Store) endSession(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		row, err := s.liveSession(ctx, tx, id, "FOR UPDATE")
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM upload_sessions WHERE id = $1`, id); err != nil {
			return err
		}
		return s.release(ctx, tx, row.Parts)
	})
}
