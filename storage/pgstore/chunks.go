package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// A chunked upload is a row of chunked_uploads, its parts rows of chunks,
// each naming an immutable object under prefixChunk. A part is written
// before the transaction that records it; a replaced or removed part's
// object is released, so that a reader who opened it reads it to its end.
// Every change of an upload's parts, and its claim, holds the upload's row
// lock: a claim on one node and a PutChunk on another are decided one
// after the other.

// chunkedUploadColumns are the columns a new upload is written with.
const chunkedUploadColumns = `id, incarnation, user_id, claimed, parts, created, expires_ns, space_id, length, stored, replaces`

// chunkedUploadSelect are the columns chunkedUploadRow reads: those of
// chunkedUploadColumns and whether the upload's claim has lapsed, by the
// database's clock, which all nodes share.
const chunkedUploadSelect = chunkedUploadColumns + `, coalesce(claim_until < clock_timestamp(), false) AS claim_lapsed`

// chunkedUploadRow is a row of chunked_uploads.
type chunkedUploadRow struct {
	ID          []byte    `db:"id"`
	Incarnation string    `db:"incarnation"`
	UserID      string    `db:"user_id"`
	Claimed     bool      `db:"claimed"`
	Parts       int       `db:"parts"`
	Created     time.Time `db:"created"`
	ExpiresNS   *int64    `db:"expires_ns"`
	// SpaceID is where the file will land ("": reserves nothing); the
	// upload reserves the greater of Length and Stored there.
	SpaceID string `db:"space_id"`
	Length  int64  `db:"length"`
	Stored  int64  `db:"stored"`
	// Replaces is the size of the file the upload replaces.
	Replaces int64 `db:"replaces"`
	// ClaimLapsed is set when Claimed is a claim its node stopped
	// renewing (claimLease): liveChunkedUpload reads it as no claim.
	ClaimLapsed bool `db:"claim_lapsed"`
}

// reservation is what r holds against its space's quota, claimed or not:
// the commit that assembles it ends it before its quota check
// (endAssembly).
func (r chunkedUploadRow) reservation() int64 {
	if r.SpaceID == "" {
		return 0
	}
	return storage.ChunkedReservation(r.Length, r.Stored, r.Replaces)
}

func (r chunkedUploadRow) upload() storage.ChunkedUpload {
	u := storage.ChunkedUpload{ID: string(r.ID), User: r.UserID, Claimed: r.Claimed, Created: r.Created.UTC(),
		SpaceID: r.SpaceID, Length: r.Length, Replaces: r.Replaces}
	u.Expires = fromNanos(r.ExpiresNS)
	return u
}

// CreateChunkedUpload records u; an expired upload of the same id is
// dropped with its parts.
func (s *Store) CreateChunkedUpload(ctx context.Context, u storage.ChunkedUpload) (storage.ChunkedUpload, error) {
	if err := storage.ValidChunkedUpload(u, validText); err != nil {
		return storage.ChunkedUpload{}, fmt.Errorf("create chunked upload: %w", err)
	}
	u.Claimed, u.Created = false, s.dbNow()
	limit := u.OpenLimit
	u.OpenLimit = 0 // not kept
	err := s.inSpaceOf(ctx, u.SpaceID, func(tx pgx.Tx) error {
		if err := s.dropExpiredChunkedUpload(ctx, tx, u.ID); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM chunked_uploads WHERE id = $1)`, []byte(u.ID)).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return storage.ErrExists
		}
		if err := openUpload(ctx, tx, u.User, limit); err != nil {
			return err
		}
		if u.SpaceID != "" {
			if err := s.makeRoomIn(ctx, tx, u.SpaceID, storage.ChunkedReservation(u.Length, 0, u.Replaces)); err != nil {
				return err
			}
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO chunked_uploads (`+chunkedUploadColumns+`) VALUES ($1, $2, $3, false, 0, $4, $5, $6, $7, 0, $8)
			ON CONFLICT (id) DO NOTHING`,
			[]byte(u.ID), uuid.NewString(), u.User, u.Created, unixNanos(u.Expires), u.SpaceID, u.Length, u.Replaces)
		if err == nil && tag.RowsAffected() == 0 {
			err = storage.ErrExists
		}
		return err
	})
	if err != nil {
		return storage.ChunkedUpload{}, fmt.Errorf("create chunked upload %.64q: %w", u.ID, err)
	}
	return u, nil
}

// unixNanos is an expiry as kept: nanoseconds since the epoch, so that a
// caller reads back the very instant it gave; nil (NULL) for never.
func unixNanos(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := t.UnixNano()
	return &n
}

// fromNanos is the expiry unixNanos kept.
func fromNanos(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(0, *n).UTC()
}

// dropExpiredChunkedUpload drops upload id if it exists and has expired.
func (s *Store) dropExpiredChunkedUpload(ctx context.Context, tx pgx.Tx, id string) error {
	var expired bool
	err := tx.QueryRow(ctx, `SELECT expires_ns <= $2 FROM chunked_uploads WHERE id = $1 AND expires_ns IS NOT NULL FOR UPDATE`,
		[]byte(id), s.now().UnixNano()).Scan(&expired)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && !expired) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.dropChunkedUpload(ctx, tx, id)
}

// dropChunkedUpload deletes upload id with its parts and releases their
// objects.
func (s *Store) dropChunkedUpload(ctx context.Context, tx pgx.Tx, id string) error {
	rows, err := tx.Query(ctx, `SELECT object FROM chunks WHERE upload_id = $1`, []byte(id))
	if err != nil {
		return err
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM chunked_uploads WHERE id = $1`, []byte(id)); err != nil {
		return err
	}
	return s.release(ctx, tx, segmentsOf(keys))
}

// segmentsOf turns the objects of parts into segments to release; an
// empty part has none.
func segmentsOf(keys []string) []s3content.Segment {
	segs := make([]s3content.Segment, 0, len(keys))
	for _, k := range keys {
		if k != "" {
			segs = append(segs, s3content.Segment{Key: k})
		}
	}
	return segs
}

// ChunkedUpload returns the live upload id.
func (s *Store) ChunkedUpload(ctx context.Context, id string) (storage.ChunkedUpload, error) {
	var row chunkedUploadRow
	err := s.onChunkedUpload(ctx, id, false, func(_ pgx.Tx, u chunkedUploadRow) error {
		row = u
		return nil
	})
	if err != nil {
		return storage.ChunkedUpload{}, fmt.Errorf("chunked upload: %w", err)
	}
	return row.upload(), nil
}

// onChunkedUpload runs fn on the live upload id: in a read-only snapshot,
// or when hold in a transaction that holds the upload's row.
func (s *Store) onChunkedUpload(ctx context.Context, id string, hold bool, fn func(pgx.Tx, chunkedUploadRow) error) error {
	run, lock := s.read, ""
	if hold {
		run, lock = s.tx, "FOR UPDATE"
	}
	return run(ctx, func(tx pgx.Tx) error {
		u, err := s.liveChunkedUpload(ctx, tx, id, lock)
		if err != nil {
			return err
		}
		return fn(tx, u)
	})
}

// liveChunkedUpload reads upload id unless it is unknown or expired; lock
// is appended to the query ("FOR UPDATE" to hold its row).
func (s *Store) liveChunkedUpload(ctx context.Context, tx pgx.Tx, id, lock string) (chunkedUploadRow, error) {
	if id == "" || len(id) > storage.MaxChunkedUploadIDBytes {
		return chunkedUploadRow{}, storage.ChunkedUploadNotFound(id)
	}
	u, err := oneRow(ctx, tx, pgx.RowToStructByName[chunkedUploadRow], storage.ChunkedUploadNotFound(id),
		`SELECT `+chunkedUploadSelect+` FROM chunked_uploads
		WHERE id = $1 AND (expires_ns IS NULL OR expires_ns > $2) `+lock, []byte(id), s.now().UnixNano())
	if u.ClaimLapsed {
		// The node that claimed it died mid-assembly: the upload is as it
		// was before the claim, for the client's retry.
		u.Claimed = false
	}
	return u, err
}

// roomForChunk says why part name may not be put into upload u now, or
// nil.
func (s *Store) roomForChunk(ctx context.Context, tx pgx.Tx, u chunkedUploadRow, name string) error {
	return storage.CheckChunkRoom(string(u.ID), u.Claimed, u.Parts, storage.ChunkCap(s.chunkCap.Load()), func() (exists bool, err error) {
		err = tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM chunks WHERE upload_id = $1 AND name = $2)`,
			u.ID, []byte(name)).Scan(&exists)
		return exists, err
	})
}

// PutChunk streams r into a new object and then records it as part name,
// releasing the object of the part it replaces in the same transaction.
// That transaction checks again that the upload is the same one, live and
// unclaimed, so after a claim no part changes.
func (s *Store) PutChunk(ctx context.Context, id, name string, r io.Reader) (storage.Chunk, error) {
	c, err := s.putChunk(ctx, id, name, r)
	if err != nil {
		return storage.Chunk{}, fmt.Errorf("put part %.64q of chunked upload %.64q: %w", name, id, err)
	}
	return c, nil
}

func (s *Store) putChunk(ctx context.Context, id, name string, r io.Reader) (storage.Chunk, error) {
	if err := storage.ValidChunkName(name); err != nil {
		return storage.Chunk{}, err
	}
	var u chunkedUploadRow
	err := s.onChunkedUpload(ctx, id, false, func(tx pgx.Tx, live chunkedUploadRow) error {
		u = live
		return s.roomForChunk(ctx, tx, u, name)
	})
	if err != nil {
		return storage.Chunk{}, err
	}
	body := &failureReader{r: r}
	key, size, err := s.putStream(ctx, prefixChunk, body)
	if body.err != nil {
		err = fmt.Errorf("read part: %w", body.err)
	}
	if err == nil {
		err = s.recordChunk(ctx, u, name, key, size)
	}
	if err != nil {
		if key != "" {
			s.discardObject(ctx, key)
		}
		return storage.Chunk{}, err
	}
	return storage.Chunk{Name: name, Size: size}, nil
}

// putStream stores the bytes of r as a new object under prefix, recorded
// as pending, and returns its key; an empty r needs no object (key "").
func (s *Store) putStream(ctx context.Context, prefix string, r io.Reader) (key string, size int64, err error) {
	body, size, err := sizedStream(r)
	if err != nil || size == 0 {
		return "", 0, err
	}
	key = newObjectKey(prefix)
	size, err = s.putObject(ctx, key, body, size)
	return key, size, err
}

// failureReader remembers the failure of r, which the bucket's client may
// report in its own words.
type failureReader struct {
	r   io.Reader
	err error
}

func (f *failureReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		f.err = err
	}
	return n, err
}

// recordChunk records object key (size bytes) as part name of the upload
// written, which must still be the incarnation the part was written for,
// and releases the object of the part it replaces.
func (s *Store) recordChunk(ctx context.Context, written chunkedUploadRow, name, key string, size int64) error {
	id := string(written.ID)
	return s.inSpaceOf(ctx, written.SpaceID, func(tx pgx.Tx) error {
		u, err := s.liveChunkedUpload(ctx, tx, id, "FOR UPDATE")
		if err != nil {
			return err
		}
		if u.Incarnation != written.Incarnation {
			// Removed and started again while the part was written.
			return storage.ChunkedUploadNotFound(id)
		}
		if err := s.roomForChunk(ctx, tx, u, name); err != nil {
			return err
		}
		var (
			old     []string
			oldSize int64
		)
		if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(object), '{}'), coalesce(sum(size), 0)::bigint
			FROM chunks WHERE upload_id = $1 AND name = $2`, u.ID, []byte(name)).Scan(&old, &oldSize); err != nil {
			return err
		}
		if err := s.recordStored(ctx, tx, u, u.Stored-oldSize+size); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO chunks (upload_id, name, size, object) VALUES ($1, $2, $3, $4)
			ON CONFLICT (upload_id, name) DO UPDATE SET size = excluded.size, object = excluded.object`,
			u.ID, []byte(name), size, key)
		if err == nil && len(old) == 0 {
			_, err = tx.Exec(ctx, `UPDATE chunked_uploads SET parts = parts + 1 WHERE id = $1`, u.ID)
		}
		if err != nil {
			return err
		}
		if key != "" {
			if err := adopt(ctx, tx, key); err != nil {
				return err
			}
		}
		return s.release(ctx, tx, segmentsOf(old))
	})
}

// Chunks lists the parts of the live upload id in byte order of names.
func (s *Store) Chunks(ctx context.Context, id string) ([]storage.Chunk, error) {
	var chunks []storage.Chunk
	err := s.onChunkedUpload(ctx, id, false, func(tx pgx.Tx, u chunkedUploadRow) (err error) {
		chunks, err = listChunks(ctx, tx, u.ID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("parts of chunked upload: %w", err)
	}
	return chunks, nil
}

// listChunks returns the parts of an upload; bytea sorts in byte order.
func listChunks(ctx context.Context, tx pgx.Tx, id []byte) ([]storage.Chunk, error) {
	rows, err := tx.Query(ctx, `SELECT name, size FROM chunks WHERE upload_id = $1 ORDER BY name`, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.Chunk, error) {
		var name []byte
		var c storage.Chunk
		err := row.Scan(&name, &c.Size)
		c.Name = string(name)
		return c, err
	})
}

// ClaimChunkedUpload marks the live upload id claimed under its row lock:
// of two claims, on any nodes, the second finds the mark. The claim is a
// lease this node renews until the upload ends (holdClaim): the claim of
// a node that died mid-assembly lapses, and a claim after that takes the
// upload over, so that the client's retry on another node assembles it.
func (s *Store) ClaimChunkedUpload(ctx context.Context, id string) ([]storage.Chunk, error) {
	var (
		chunks []storage.Chunk
		key    []byte
		token  = uuid.NewString()
	)
	err := s.onChunkedUpload(ctx, id, true, func(tx pgx.Tx, u chunkedUploadRow) (err error) {
		if u.Claimed {
			return storage.ChunkedUploadClaimedTwice(id)
		}
		if u.ClaimLapsed {
			s.log.Warn("taking over the assembly of a chunked upload whose node stopped renewing its claim",
				zap.String("upload", id))
		}
		if _, err := tx.Exec(ctx, `UPDATE chunked_uploads SET claimed = true, claim_token = $2,
			claim_until = clock_timestamp() + make_interval(secs => $3) WHERE id = $1`,
			u.ID, token, s.claimLease.Seconds()); err != nil {
			return err
		}
		key = u.ID
		chunks, err = listChunks(ctx, tx, u.ID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim chunked upload: %w", err)
	}
	s.holdClaim(key, token)
	return chunks, nil
}

// claimLease is how long a claim outlives the last renewal of its node:
// long enough that a busy database does not make a live node's claim
// lapse, short enough that a client retrying after a node died is not
// refused for long.
const claimLease = 10 * time.Second

// holdClaim renews claim token of upload id every quarter of the lease
// until the claim ends: the upload is gone (its commit or its removal
// ended it), another node took it over, or the store closes.
func (s *Store) holdClaim(id []byte, token string) {
	if !s.startLoop() {
		return
	}
	go func() {
		defer s.loops.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tick := time.NewTicker(s.claimLease / 4)
		defer tick.Stop()
		for {
			select {
			case <-s.closing:
				return
			case <-tick.C:
			}
			held, err := s.renewClaim(ctx, id, token)
			switch {
			case err != nil:
				// An outage: the next tick tries again, within the lease.
				s.log.Warn("renewing the claim of a chunked upload", zap.ByteString("upload", id), zap.Error(err))
			case !held:
				return
			}
		}
	}()
}

// renewClaim extends claim token of upload id by a lease; held is false
// once the upload no longer has that claim.
func (s *Store) renewClaim(ctx context.Context, id []byte, token string) (held bool, err error) {
	pool, err := s.db()
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.claimLease/4)
	defer cancel()
	tag, err := pool.Exec(ctx, `UPDATE chunked_uploads SET claim_until = clock_timestamp() + make_interval(secs => $3)
		WHERE id = $1 AND claimed AND claim_token = $2`, id, token, s.claimLease.Seconds())
	if err != nil {
		return false, classify(err)
	}
	return tag.RowsAffected() == 1, nil
}

// OpenChunk streams the object of part name. A part replaced or removed
// after the lookup keeps its object for ObjectGrace.
func (s *Store) OpenChunk(ctx context.Context, id, name string) (io.ReadCloser, error) {
	var key string
	err := s.onChunkedUpload(ctx, id, false, func(tx pgx.Tx, u chunkedUploadRow) error {
		err := tx.QueryRow(ctx, `SELECT object FROM chunks WHERE upload_id = $1 AND name = $2`, u.ID, []byte(name)).Scan(&key)
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.ChunkNotFound(id, name)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open part %.64q of chunked upload: %w", name, err)
	}
	if key == "" {
		return io.NopCloser(strings.NewReader("")), nil
	}
	rc, err := s.objects.Get(ctx, key, 0, -1)
	if err != nil {
		return nil, fmt.Errorf("open part %.64q of chunked upload %.64q: %w", name, id, err)
	}
	return rc, nil
}

// RemoveChunk drops part name of the live, unclaimed upload id and
// releases its object.
func (s *Store) RemoveChunk(ctx context.Context, id, name string) error {
	err := s.onChunkedUpload(ctx, id, true, func(tx pgx.Tx, u chunkedUploadRow) error {
		if u.Claimed {
			return storage.ChunkedUploadClaimed(id)
		}
		var (
			key  string
			size int64
		)
		err := tx.QueryRow(ctx, `DELETE FROM chunks WHERE upload_id = $1 AND name = $2 RETURNING object, size`,
			u.ID, []byte(name)).Scan(&key, &size)
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.ChunkNotFound(id, name)
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE chunked_uploads SET parts = parts - 1, stored = greatest(stored - $2, 0)
			WHERE id = $1`, u.ID, size); err != nil {
			return err
		}
		return s.release(ctx, tx, segmentsOf([]string{key}))
	})
	if err != nil {
		return fmt.Errorf("remove part %.64q of chunked upload: %w", name, err)
	}
	return nil
}

// recordStored records that upload u stores stored bytes now, checking its
// space's quota when its reservation grows; the caller holds the space's
// row lock (inSpaceOf), then the upload's.
func (s *Store) recordStored(ctx context.Context, tx pgx.Tx, u chunkedUploadRow, stored int64) error {
	next := u
	next.Stored = stored
	if u.SpaceID != "" {
		if err := s.makeRoomIn(ctx, tx, u.SpaceID, next.reservation()-u.reservation()); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `UPDATE chunked_uploads SET stored = $2 WHERE id = $1`, u.ID, stored)
	return err
}

// PutChunkAfter stores the part as PutChunk does: this store carries no
// digests from part to part yet, and its assembly reads the parts again.
func (s *Store) PutChunkAfter(ctx context.Context, id, name, _ string, r io.Reader) (storage.Chunk, error) {
	return s.PutChunk(ctx, id, name, r)
}

// AppendChunks writes nothing: without carried digests the caller copies
// every part.
func (s *Store) AppendChunks(ctx context.Context, _ storage.Upload, id string, _ []string) (int, error) {
	return 0, ctx.Err()
}

// ReserveChunkedUpload raises the length the live, unclaimed upload id
// announces, holding its space's row lock, then the upload's.
func (s *Store) ReserveChunkedUpload(ctx context.Context, id string, length int64) error {
	var spaceID string
	err := s.onChunkedUpload(ctx, id, false, func(_ pgx.Tx, u chunkedUploadRow) error {
		spaceID = u.SpaceID
		return nil
	})
	if err == nil {
		err = s.inSpaceOf(ctx, spaceID, func(tx pgx.Tx) error {
			u, err := s.liveChunkedUpload(ctx, tx, id, "FOR UPDATE")
			switch {
			case err != nil:
				return err
			case u.Claimed:
				return storage.ChunkedUploadClaimed(id)
			case length <= u.Length:
				return nil
			}
			next := u
			next.Length = length
			if u.SpaceID != "" {
				if err := s.makeRoomIn(ctx, tx, u.SpaceID, next.reservation()-u.reservation()); err != nil {
					return err
				}
			}
			_, err = tx.Exec(ctx, `UPDATE chunked_uploads SET length = $2 WHERE id = $1`, u.ID, length)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("reserve for chunked upload %.64q: %w", id, err)
	}
	return nil
}

// inSpaceOf runs fn holding the row lock of space spaceID, or in a plain
// transaction for an upload that names no space.
func (s *Store) inSpaceOf(ctx context.Context, spaceID string, fn func(pgx.Tx) error) error {
	if spaceID == "" {
		return s.tx(ctx, fn)
	}
	return s.inSpace(ctx, spaceID, fn)
}

// endAssembly ends the chunked upload that commit c assembles, in the
// commit's transaction (which holds its space's row lock) and before its
// quota check: the upload's reservation becomes the file's use in one
// step. An upload gone meanwhile (removed, expired) reserves nothing any
// more, and one that is not claimed is not the one assembled
// (Commit.Ends): both are left alone.
func (s *Store) endAssembly(ctx context.Context, tx pgx.Tx, c storage.Commit) error {
	rows, err := tx.Query(ctx, `SELECT `+chunkedUploadSelect+` FROM chunked_uploads WHERE id = $1 FOR UPDATE`,
		[]byte(c.Assembles))
	if err != nil {
		return err
	}
	u, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[chunkedUploadRow])
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("chunked upload %.64q: %w", c.Assembles, err)
	case !c.Ends(u.upload()):
		return nil
	}
	return s.dropChunkedUpload(ctx, tx, c.Assembles)
}

// RemoveChunkedUpload ends the live upload id and releases its parts.
func (s *Store) RemoveChunkedUpload(ctx context.Context, id string) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := s.liveChunkedUpload(ctx, tx, id, "FOR UPDATE"); err != nil {
			return err
		}
		return s.dropChunkedUpload(ctx, tx, id)
	})
	if err != nil {
		return fmt.Errorf("remove chunked upload: %w", err)
	}
	return nil
}
