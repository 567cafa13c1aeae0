package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

var _ storage.UploadSessions = (*Store)(nil)

// Resumable uploads (TUS) keep their record in the bucket
//
//	upload_sessions  session id → encoded session (with the checksum state)
//
// and their bytes in sessions/<id>, outside uploads/, which Open clears.
// The file may be longer than the recorded offset after a crash between
// writing and recording; the record is the truth, and the surplus is cut
// off at open and before every append. Quota: a session reserves its
// length in its space's counters (usage.go) from its creation until its
// record goes (dropSession), in the transactions that write and delete it.
var bucketSessions = []byte("upload_sessions")

const (
	sessionsDir   = "sessions"
	sessionFormat = 1
	// appendBufferSize is the one buffer an append streams through, so that
	// memory stays flat whatever the size of a part.
	appendBufferSize = 256 << 10
	// sessionPurgeBatch bounds the expired sessions one sweep pass removes.
	sessionPurgeBatch = 100
)

// sessionRec is a session as stored: the public session and the state of
// the checksums of its first Offset bytes.
type sessionRec struct {
	storage.UploadSession
	SumState []byte
}

// CreateSession starts a session with an empty file for its bytes,
// reserving its length against the space's quota and the disk in the
// transaction that records it.
func (s *Store) CreateSession(ctx context.Context, us storage.UploadSession) (storage.UploadSession, error) {
	if err := ctx.Err(); err != nil {
		return storage.UploadSession{}, err
	}
	if err := validSession(us); err != nil {
		return storage.UploadSession{}, fmt.Errorf("create session: %w", err)
	}
	state, err := s.inlineWriter(storage.SessionDigests(us)).MarshalBinary()
	if err != nil {
		return storage.UploadSession{}, fmt.Errorf("create session: %w", err)
	}
	us.ID = newBlobID()
	us.Offset = 0
	limit := us.OpenLimit
	us.OpenLimit = 0 // not kept
	r := sessionRec{UploadSession: us, SumState: state}
	// The file comes first: a crash before the record is written leaves a
	// file without a record, which the next open removes.
	if err := s.createSessionFile(us.ID); err != nil {
		return storage.UploadSession{}, fmt.Errorf("create session: %w", diskFull(err))
	}
	err = s.update(func(t *txn) error {
		if t.spaces().Get([]byte(us.SpaceID)) == nil {
			return storage.SpaceNotFound(us.SpaceID)
		}
		if err := t.openUpload(us.User, limit); err != nil {
			return err
		}
		if err := s.checkDisk(t, us.Length); err != nil {
			return err
		}
		if err := t.reserve(us.SpaceID, storage.UploadReservation(us)); err != nil {
			return err
		}
		r.Created = t.now.Round(0).UTC()
		return t.putSession(&r)
	})
	if err != nil {
		s.removeSessionFile(us.ID)
		return storage.UploadSession{}, fmt.Errorf("create session: %w", err)
	}
	return r.UploadSession, nil
}

// validSession checks what a caller gives CreateSession.
func validSession(us storage.UploadSession) error {
	if err := storage.ValidID("space id", us.SpaceID); err != nil {
		return err
	}
	if err := storage.ValidLengths(us.Length, us.Replaces); err != nil {
		return err
	}
	if err := storage.ValidCommit(us.Target, nil); err != nil {
		return err
	}
	if us.Expected != nil {
		if _, err := us.Expected.NewVerifier(); err != nil {
			return fmt.Errorf("%w: %w", storage.ErrInvalid, err)
		}
	}
	return nil
}

func (s *Store) sessionPath(id string) string {
	return filepath.Join(s.sessionDir, id)
}

func (s *Store) createSessionFile(id string) error {
	f, err := os.OpenFile(s.sessionPath(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = s.sync(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.syncDir(s.sessionDir)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// removeSessionFile deletes the bytes of a session that has ended. A
// failure leaves a file without a record, which the next open removes.
func (s *Store) removeSessionFile(id string) {
	if err := os.Remove(s.sessionPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("cannot remove upload session file", zap.String("session", id), zap.Error(err))
	}
}

// Session returns the live session id.
func (s *Store) Session(ctx context.Context, id string) (storage.UploadSession, error) {
	r, err := inTxn(ctx, s.view, func(t *txn) (sessionRec, error) { return t.liveSession(id, s.now()) })
	if err != nil {
		return storage.UploadSession{}, fmt.Errorf("session: %w", err)
	}
	return r.UploadSession, nil
}

// AppendSession appends the bytes of r at offset. Appends to one session
// are serialised: a second one waits for the first and then finds the
// offset moved (ErrConflict). The bytes are written and synced before the
// new offset and checksum state are recorded, so the record never claims a
// byte a crash could lose. A body longer than what the session lacks is
// ErrInvalid and nothing of it is kept.
func (s *Store) AppendSession(ctx context.Context, id string, offset int64, r io.Reader, check *checksum.Expected) (storage.UploadSession, error) {
	unlock, err := s.sessionLocks.lock(ctx, id)
	if err != nil {
		return storage.UploadSession{}, fmt.Errorf("append to session %s: %w", id, err)
	}
	defer unlock()
	us, err := s.appendLocked(id, offset, r, check)
	if err != nil {
		return us, fmt.Errorf("append to session %s: %w", id, err)
	}
	return us, nil
}

func (s *Store) appendLocked(id string, offset int64, r io.Reader, check *checksum.Expected) (storage.UploadSession, error) {
	rec, err := s.lockedSession(id)
	if err != nil {
		return storage.UploadSession{}, err
	}
	if offset != rec.Offset {
		return storage.UploadSession{}, storage.OffsetMismatch(offset, rec.Offset)
	}
	part, err := s.newPart(rec, check)
	if err != nil {
		return storage.UploadSession{}, err
	}
	defer part.f.Close()
	readErr, err := part.copyFrom(r, rec.Length-rec.Offset)
	if err == nil {
		err = part.rejection(readErr)
	}
	if err == nil && part.n > 0 {
		err = s.recordAppend(part.f, &rec, part.n, part.sum)
	}
	if err != nil {
		// Back to what the record says, so the file never runs ahead of it.
		part.f.Truncate(rec.Offset)
		return rec.UploadSession, err
	}
	return rec.UploadSession, readErr
}

// newPart opens the file of session r for a part at its offset, cutting
// off what a crash left past it, with the checksums of the bytes before.
func (s *Store) newPart(r sessionRec, check *checksum.Expected) (*partWriter, error) {
	p := &partWriter{off: r.Offset, sum: checksum.NewWriter()}
	if err := p.sum.UnmarshalBinary(r.SumState); err != nil {
		return nil, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	if check != nil {
		v, err := check.NewVerifier()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", storage.ErrInvalid, err)
		}
		p.check, p.verifier = check, v
	}
	f, err := os.OpenFile(s.sessionPath(r.ID), os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("session file: %w", err)
	}
	if err := f.Truncate(r.Offset); err != nil {
		f.Close()
		return nil, fmt.Errorf("session file: %w", diskFull(err))
	}
	p.f = f
	p.wb = s.newWriteback(f, r.Offset)
	return p, nil
}

// lockedSession reads the live session id; the caller holds its lock.
func (s *Store) lockedSession(id string) (sessionRec, error) {
	var r sessionRec
	err := s.view(func(t *txn) (err error) {
		r, err = t.liveSession(id, s.now())
		return err
	})
	return r, err
}

// recordAppend syncs the n bytes just written at r.Offset and then records
// the new offset and checksum state, updating r.
func (s *Store) recordAppend(f *os.File, r *sessionRec, n int64, sum *checksum.Writer) error {
	if err := s.sync(f); err != nil {
		return diskFull(err)
	}
	state, err := sum.MarshalBinary()
	if err != nil {
		return err
	}
	next := *r
	next.Offset += n
	next.SumState = state
	err = s.update(func(t *txn) error {
		if _, err := t.liveSession(r.ID, t.now); err != nil {
			return err
		}
		return t.putSession(&next)
	})
	if err != nil {
		return err
	}
	*r = next
	return nil
}

// partWriter writes one part of a session at its offset, feeding the
// checksums of the whole upload and, with a check, of the part.
type partWriter struct {
	f        *os.File
	off      int64 // where the part starts
	n        int64 // bytes written so far
	sum      *checksum.Writer
	check    *checksum.Expected
	verifier *checksum.Verifier
	wb       writeback
}

// rejection says why a part read to its end or to readErr must not be
// kept, or nil to keep it. A part with a check must have arrived whole
// and match; one without is kept as far as it arrived.
func (p *partWriter) rejection(readErr error) error {
	switch {
	case p.check == nil:
		return nil
	case readErr != nil:
		return readErr
	case !p.verifier.Matches():
		return fmt.Errorf("part at offset %d does not match %s %s: %w", p.off, p.check.Algorithm, p.check.Digest, storage.ErrChecksum)
	}
	return nil
}

// copyFrom copies at most limit bytes of r. It returns the error of r
// (nil at EOF) apart from the error of the copy: a write failure, or
// ErrInvalid when r has more than limit bytes.
func (p *partWriter) copyFrom(r io.Reader, limit int64) (readErr, err error) {
	buf := make([]byte, min(appendBufferSize, limit+1))
	for p.n < limit {
		n, rerr := r.Read(buf[:min(int64(len(buf)), limit-p.n)])
		if n > 0 {
			if err := p.write(buf[:n]); err != nil {
				return nil, err
			}
		}
		if rerr == io.EOF {
			return nil, nil
		}
		if rerr != nil {
			return fmt.Errorf("read part: %w", rerr), nil
		}
	}
	// Every byte the session lacks has arrived; one more is too many.
	if n, _ := io.ReadFull(r, buf[:1]); n > 0 {
		return nil, storage.PartTooLong(limit)
	}
	return nil, nil
}

func (p *partWriter) write(b []byte) error {
	hashes := []io.Writer{p.sum}
	if p.verifier != nil {
		hashes = append(hashes, p.verifier)
	}
	// A failed write makes the append fail, and its checksum state is
	// dropped with it.
	if _, err := writeHashed(p.f, p.off+p.n, b, hashes...); err != nil {
		return fmt.Errorf("write part: %w", diskFull(err))
	}
	p.n += int64(len(b))
	p.wb.wrote(p.off + p.n)
	return nil
}

// CompleteSession commits a session that has all its bytes, through the
// same path as Upload.Commit, and ends it in the commit's transaction. A
// session whose commit fails (a condition, the quota) ends too: its bytes
// went into the commit. A context ended before the commit starts leaves the
// session as it was.
func (s *Store) CompleteSession(ctx context.Context, id string, locks *storage.LockTokens, modTime time.Time) (storage.Node, bool, error) {
	unlock, err := s.sessionLocks.lock(ctx, id)
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("complete session %s: %w", id, err)
	}
	defer unlock()
	n, created, err := s.completeLocked(ctx, id, locks, modTime)
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("complete session %s: %w", id, err)
	}
	return n, created, nil
}

func (s *Store) completeLocked(ctx context.Context, id string, locks *storage.LockTokens, modTime time.Time) (storage.Node, bool, error) {
	r, err := s.lockedSession(id)
	if err != nil {
		return storage.Node{}, false, err
	}
	if r.Offset != r.Length {
		return storage.Node{}, false, storage.UploadIncomplete(r.Offset, r.Length)
	}
	sum := checksum.NewWriter()
	if err := sum.UnmarshalBinary(r.SumState); err != nil {
		return storage.Node{}, false, fmt.Errorf("%w: %w", errCorrupt, err)
	}
	sums := sum.Sums()
	if mismatch := storage.CheckReceived(r.Expected, sums); mismatch != nil {
		if err := s.endSession(id); err != nil {
			return storage.Node{}, false, err
		}
		return storage.Node{}, false, mismatch
	}
	if err := ctx.Err(); err != nil {
		return storage.Node{}, false, err
	}
	if err := s.truncateSessionFile(id, r.Length); err != nil {
		return storage.Node{}, false, err
	}
	target := r.Target
	target.Locks = locks
	if !modTime.IsZero() {
		target.ModTime = modTime
	}
	content := newContent{size: r.Length, sums: sums}
	n, created, err := s.commit(r.SpaceID, s.sessionPath(id), content, target, func(t *txn) error {
		return t.dropSession(id)
	})
	if err != nil {
		// The bytes are gone with the failed commit; so is the session.
		if derr := s.update(func(t *txn) error { return t.dropSession(id) }); derr != nil {
			s.log.Warn("cannot remove failed upload session", zap.String("session", id), zap.Error(derr))
		}
		return storage.Node{}, false, err
	}
	return n, created, nil
}

// truncateSessionFile cuts a session file to size and syncs it: a crash
// may have left bytes past the recorded end, and a commit makes the file a
// content file that must hold exactly the recorded bytes. A file of the
// right size is left alone: every append synced what it recorded. A file
// shorter than size has lost acknowledged bytes: errCorrupt.
func (s *Store) truncateSessionFile(id string, size int64) error {
	f, err := os.OpenFile(s.sessionPath(id), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("session file: %w", err)
	}
	info, err := f.Stat()
	if err == nil && info.Size() < size {
		// Never pad: zeros would become content nobody sent.
		err = fmt.Errorf("%d bytes recorded, %d stored: %w", size, info.Size(), errCorrupt)
	}
	if err == nil && info.Size() > size {
		err = f.Truncate(size)
		if err == nil {
			err = s.sync(f)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("session file: %w", diskFull(err))
	}
	return nil
}

// RemoveSession ends the live session id and drops its bytes.
func (s *Store) RemoveSession(ctx context.Context, id string) error {
	unlock, err := s.sessionLocks.lock(ctx, id)
	if err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	defer unlock()
	if _, err := s.lockedSession(id); err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	if err := s.endSession(id); err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	return nil
}

// endSession deletes the record of session id, then its bytes.
func (s *Store) endSession(id string) error {
	if err := s.update(func(t *txn) error { return t.dropSession(id) }); err != nil {
		return err
	}
	s.removeSessionFile(id)
	return nil
}

// expiredKeys returns up to limit keys of the records of a bucket that
// expired says are to be ended (expired, or unreadable).
func (s *Store) expiredKeys(bucket func(*txn) countedBucket, limit int, expired func(k, v []byte) bool) ([]string, error) {
	var keys []string
	err := s.view(func(t *txn) error {
		c := bucket(t).Cursor()
		for k, v := c.First(); k != nil && len(keys) < limit; k, v = c.Next() {
			if expired(k, v) {
				keys = append(keys, string(k))
			}
		}
		return nil
	})
	return keys, err
}

// purgeSessions ends up to limit expired sessions that no call is using
// and reports how many it ended. The background sweep calls it.
func (s *Store) purgeSessions(limit int) (int, error) {
	now := s.now()
	expired := func(k, v []byte) bool {
		r, err := decodeSession(string(k), v)
		return err != nil || !isLiveSession(r, now)
	}
	return s.purgeExpired((*txn).sessions, limit, expired, func(id string) (bool, error) {
		unlock, ok := s.sessionLocks.tryLock(id)
		if !ok {
			return false, nil // in use: the next pass takes it
		}
		defer unlock()
		return true, s.endSession(id)
	})
}

// purgeExpired ends with end up to limit records of bucket that expired
// picks, and reports how many it ended; end reports false for a record it
// left alone (in use, or gone meanwhile). The sweeps of sessions and
// chunked uploads share it.
func (s *Store) purgeExpired(bucket func(*txn) countedBucket, limit int, expired func(k, v []byte) bool, end func(id string) (bool, error)) (int, error) {
	ids, err := s.expiredKeys(bucket, limit, expired)
	if err != nil {
		return 0, err
	}
	ended := 0
	for _, id := range ids {
		ok, err := end(id)
		if err != nil {
			return ended, err
		}
		if ok {
			ended++
		}
	}
	return ended, nil
}

// recoverSessions brings session files in line with their records when the
// store opens: it ends expired and unreadable sessions, removes files
// without a record and cuts files back to their recorded offset. A file
// shorter than its offset (lost by a disk that lied about fsync, or a store
// run with NoSync) makes its session unusable: it is ended.
func (s *Store) recoverSessions() error {
	if _, err := s.purgeSessions(int(^uint(0) >> 1)); err != nil {
		return fmt.Errorf("open store: expired upload sessions: %w", err)
	}
	entries, err := os.ReadDir(s.sessionDir)
	if err != nil {
		return fmt.Errorf("open store: upload sessions: %w", err)
	}
	offsets := map[string]int64{}
	err = s.view(func(t *txn) error {
		return t.sessions().ForEach(func(k, v []byte) error {
			r, err := decodeSession(string(k), v)
			if err == nil {
				offsets[r.ID] = r.Offset
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("open store: upload sessions: %w", err)
	}
	for _, e := range entries {
		if err := s.recoverSessionFile(e, offsets); err != nil {
			return fmt.Errorf("open store: upload session %s: %w", e.Name(), err)
		}
		delete(offsets, e.Name())
	}
	for id := range offsets { // records whose file is gone
		s.log.Warn("upload session lost its bytes", zap.String("session", id))
		if err := s.endSession(id); err != nil {
			return fmt.Errorf("open store: upload session %s: %w", id, err)
		}
	}
	return nil
}

// recoverSessionFile settles one file of the sessions directory.
func (s *Store) recoverSessionFile(e fs.DirEntry, offsets map[string]int64) error {
	id := e.Name()
	offset, ok := offsets[id]
	if !ok {
		return os.RemoveAll(s.sessionPath(id))
	}
	info, err := e.Info()
	if err != nil {
		return err
	}
	switch {
	case info.Size() > offset:
		return s.truncateSessionFile(id, offset)
	case info.Size() < offset:
		s.log.Warn("upload session file shorter than recorded; session ended",
			zap.String("session", id), zap.Int64("size", info.Size()), zap.Int64("offset", offset))
		return s.endSession(id)
	}
	return nil
}

// isLiveSession reports whether r has not expired at now; a session
// without an expiry lives until it ends.
func isLiveSession(r sessionRec, now time.Time) bool {
	return r.Expires.IsZero() || now.Before(r.Expires)
}

func (t *txn) sessions() countedBucket { return t.bucket(&t.open.sessions, bucketSessions) }

// liveSession returns session id unless it is unknown or expired at now.
func (t *txn) liveSession(id string, now time.Time) (sessionRec, error) {
	if !storage.IsHexID(id) {
		// Ids come from URLs and name files: anything but an id the store
		// made is unknown, before it gets near a path.
		return sessionRec{}, storage.SessionNotFound(id)
	}
	v := t.sessions().Get([]byte(id))
	if v == nil {
		return sessionRec{}, storage.SessionNotFound(id)
	}
	r, err := decodeSession(id, v)
	if err != nil {
		return sessionRec{}, err
	}
	if !isLiveSession(r, now) {
		return sessionRec{}, fmt.Errorf("session %s expired: %w", id, storage.ErrNotFound)
	}
	return r, nil
}

// dropSession deletes the record of session id and releases what it
// reserved. An unreadable record reserved nothing the counters can tell.
func (t *txn) dropSession(id string) error {
	v := t.sessions().Get([]byte(id))
	if v == nil {
		return nil
	}
	if r, err := decodeSession(id, v); err == nil {
		if err := t.release(r.SpaceID, storage.UploadReservation(r.UploadSession)); err != nil {
			return err
		}
		if err := t.closeUpload(r.User); err != nil {
			return err
		}
	}
	return t.sessions().Delete([]byte(id))
}

func (t *txn) putSession(r *sessionRec) error {
	return t.sessions().Put([]byte(r.ID), encodeSession(r))
}

// keyedLocks serialises work on one key (a session id) while other keys
// proceed. An entry exists only while its key is held.
type keyedLocks struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when the key is released
}

// lock waits until key is free or ctx ends, and takes it.
func (l *keyedLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	for {
		unlock, ok, wait := l.take(key)
		if ok {
			return unlock, nil
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// tryLock takes key if it is free.
func (l *keyedLocks) tryLock(key string) (unlock func(), ok bool) {
	unlock, ok, _ = l.take(key)
	return unlock, ok
}

// take takes key if it is free; otherwise it returns a channel closed when
// the holder releases it.
func (l *keyedLocks) take(key string) (unlock func(), ok bool, wait <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ch, busy := l.held[key]; busy {
		return nil, false, ch
	}
	if l.held == nil {
		l.held = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	l.held[key] = ch
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.held, key)
		close(ch)
	}, true, nil
}

// encodeSession encodes r without its id (the id is the key). Layout:
// format, space, user (strings), length, offset (varint), target node,
// parent, name (strings), target mtime (time), content type, If-Match
// (strings), If-None-Match (byte), expected algorithm and digest (strings,
// empty for none), created, expires (time), checksum state (string), and,
// since sessions reserve, the replaced bytes (varint).
func encodeSession(r *sessionRec) []byte {
	b := make([]byte, 0, 128+len(r.SpaceID)+len(r.User)+len(r.Target.NodeID)+len(r.Target.ParentID)+
		len(r.Target.Name)+len(r.Target.ContentType)+len(r.Target.IfMatch)+len(r.SumState))
	b = append(b, sessionFormat)
	b = appendString(b, r.SpaceID)
	b = appendString(b, r.User)
	b = binary.AppendVarint(b, r.Length)
	b = binary.AppendVarint(b, r.Offset)
	b = appendString(b, r.Target.NodeID)
	b = appendString(b, r.Target.ParentID)
	b = appendString(b, r.Target.Name)
	b = appendTime(b, r.Target.ModTime)
	b = appendString(b, r.Target.ContentType)
	b = appendString(b, r.Target.IfMatch)
	b = append(b, boolByte(r.Target.IfNoneMatch))
	var e checksum.Expected
	if r.Expected != nil {
		e = *r.Expected
	}
	b = appendString(b, string(e.Algorithm))
	b = appendString(b, e.Digest)
	b = appendTime(b, r.Created)
	b = appendTime(b, r.Expires)
	b = appendString(b, string(r.SumState))
	return binary.AppendVarint(b, r.Replaces)
}

func decodeSession(id string, v []byte) (sessionRec, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != sessionFormat {
		return sessionRec{}, fmt.Errorf("session %s: unknown format: %w", id, errCorrupt)
	}
	var r sessionRec
	r.ID = id
	r.SpaceID = d.str()
	r.User = d.str()
	r.Length = d.varint()
	r.Offset = d.varint()
	r.Target.NodeID = d.str()
	r.Target.ParentID = d.str()
	r.Target.Name = d.str()
	r.Target.ModTime = d.time()
	r.Target.ContentType = d.str()
	r.Target.IfMatch = d.str()
	r.Target.IfNoneMatch = d.byte() == 1
	if alg, digest := d.str(), d.str(); alg != "" {
		r.Expected = &checksum.Expected{Algorithm: checksum.Algorithm(alg), Digest: digest}
	}
	r.Created = d.time()
	r.Expires = d.time()
	r.SumState = []byte(d.str())
	if d.more() {
		r.Replaces = d.varint()
	}
	if d.err != nil || r.Replaces < 0 || r.Length < 0 || r.Offset < 0 || r.Offset > r.Length {
		return sessionRec{}, fmt.Errorf("session %s: %w", id, errCorrupt)
	}
	return r, nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}
