package pgstore

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// An object's life: recordPending before its first byte is sent (so that
// a crash mid-upload leaves a row for the sweep), adopt in the transaction
// that makes a node, session or chunk reference it, release in the one
// that drops its last reference. The sweep deletes what is due.

// newObjectKey returns a fresh object key under prefix.
func newObjectKey(prefix string) string {
	u := uuid.New()
	return prefix + hex.EncodeToString(u[:])
}

// The key prefixes, one per kind of content, so that a bucket listing
// tells them apart.
const (
	prefixFile    = "files/"
	prefixSession = "sessions/"
	prefixChunk   = "chunks/"
)

// recordPending notes that key is about to be written; the sweep removes
// it after UploadGrace unless a commit adopts it first.
func (s *Store) recordPending(ctx context.Context, key string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO object_sweep (key, sweep_after, written) VALUES ($1, $2, true)`,
			key, s.now().Add(s.uploadGrace))
		return err
	})
}

// putObject records key as pending and writes the bytes of r to it (size
// -1 when unknown). It returns the number of bytes stored.
func (s *Store) putObject(ctx context.Context, key string, r io.Reader, size int64) (int64, error) {
	if err := s.recordPending(ctx, key); err != nil {
		return 0, fmt.Errorf("recording object %s: %w", key, err)
	}
	return s.objects.Put(ctx, key, r, size)
}

// adopt takes keys off the sweep's list, in the transaction that makes
// something reference them.
func adopt(ctx context.Context, tx pgx.Tx, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `DELETE FROM object_sweep WHERE key = ANY($1)`, keys)
	return err
}

// release hands the objects of segments that neither a node nor a
// version references any more to the sweep, in the transaction that
// dropped a reference; the sweep deletes them after ObjectGrace, so that
// readers who opened them finish. One statement, however many segments.
func (s *Store) release(ctx context.Context, tx pgx.Tx, segments []s3content.Segment) error {
	keys := segmentKeys(segments)
	if len(keys) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO object_sweep (key, sweep_after)
		SELECT DISTINCT k, $2::timestamptz FROM unnest($1::text[]) AS k
		WHERE NOT EXISTS (SELECT 1 FROM nodes WHERE content @> jsonb_build_array(jsonb_build_object('k', k)))
			AND NOT EXISTS (SELECT 1 FROM versions WHERE content @> jsonb_build_array(jsonb_build_object('k', k)))
		ON CONFLICT (key) DO NOTHING`, keys, s.now().Add(s.objectGrace))
	if err != nil {
		return fmt.Errorf("releasing %d objects: %w", len(keys), err)
	}
	return nil
}

// discardObject removes an object after a failed write (a refused part, a
// failed record) with its sweep row, unless a commit adopted it after all
// (one whose answer was lost with its connection): the row, locked while
// the object goes, tells. It does not use ctx's cancellation, since a
// cancelled request is a common reason to discard; what fails here stays
// in object_sweep for the sweep.
func (s *Store) discardObject(ctx context.Context, key string) {
	ctx = context.WithoutCancel(ctx)
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM object_sweep WHERE key = $1`, key)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		return s.objects.Remove(ctx, key)
	})
	if err != nil {
		s.log.Warn("cannot remove a discarded object; the sweep will", zap.String("key", key), zap.Error(err))
	}
}

// smallObject is how much of a stream of unknown length is read ahead: a
// stream that ends within it is stored with one request instead of a
// multipart upload's three.
const smallObject = 1 << 20

// sizedStream reads ahead up to smallObject bytes of r and returns a
// reader of all of r with its size, or -1 when r is longer. An error of r
// before then is returned.
func sizedStream(r io.Reader) (io.Reader, int64, error) {
	buf := make([]byte, smallObject)
	n, err := io.ReadFull(r, buf)
	switch err {
	case io.EOF, io.ErrUnexpectedEOF:
		return bytes.NewReader(buf[:n]), int64(n), nil
	case nil:
		return io.MultiReader(bytes.NewReader(buf), r), -1, nil
	}
	return nil, 0, err
}

// Open returns the content of a file and the node as of that content: one
// read of the node's row names both, and objects never change, so the
// node's size, etag and checksums describe exactly the bytes read even
// while the file is replaced. A replaced object stays readable for
// ObjectGrace. The content is a storage.Prefetcher and asks the bucket for
// nothing until it is read or prefetched: a HEAD or a 304 costs no request,
// and a range is fetched once, from its start.
func (s *Store) Open(ctx context.Context, spaceID, nodeID string) (storage.Node, storage.Content, error) {
	pool, err := s.db()
	if err != nil {
		return storage.Node{}, nil, fmt.Errorf("open: %w", err)
	}
	r, err := nodeIn(ctx, pool, spaceID, nodeID)
	if err != nil {
		return storage.Node{}, nil, fmt.Errorf("open: %w", classify(err))
	}
	if r.isFolder() {
		return storage.Node{}, nil, storage.IsAFolder(nodeID)
	}
	return r.node(), s.objects.NewReader(ctx, r.Content), nil
}
