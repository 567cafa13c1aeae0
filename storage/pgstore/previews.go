package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// The preview cache (storage.PreviewCache): each preview is an object
// under prefixPreview, named after its key and made unique, so that a
// preview kept again never overwrites an object a reader or the sweep has
// in hand; the previews table says which object holds each key, how large
// it is and when it was last used. Replaced, evicted and dropped objects
// go to the sweep like released content.

var _ storage.PreviewCache = (*Store)(nil)

const prefixPreview = "previews/"

// previewSchema adds the preview cache to the schema. last_used is a
// number from the preview_uses sequence, taken at each keep and read:
// unlike a time, it orders the uses of every node exactly.
const previewSchema = `
CREATE TABLE IF NOT EXISTS previews (
	name         text PRIMARY KEY,
	sha1         text NOT NULL,
	object       text NOT NULL,
	content_type text NOT NULL,
	size         bigint NOT NULL,
	last_used    bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS previews_sha1 ON previews (sha1);
CREATE SEQUENCE IF NOT EXISTS preview_uses;
`

// CachedPreview returns the preview kept under key (storage.PreviewCache),
// marking it used.
func (s *Store) CachedPreview(ctx context.Context, key storage.PreviewKey) ([]byte, string, error) {
	if !key.Valid() {
		return nil, "", fmt.Errorf("cached preview: invalid key: %w", storage.ErrInvalid)
	}
	if s.previewCacheSize.Load() <= 0 {
		return nil, "", storage.ErrNotFound
	}
	var (
		object, contentType string
		size                int64
	)
	err := s.tx(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `UPDATE previews SET last_used = nextval('preview_uses') WHERE name = $1
			RETURNING object, content_type, size`, key.Name()).Scan(&object, &contentType, &size)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, "", storage.ErrNotFound
	}
	if err != nil {
		return nil, "", fmt.Errorf("cached preview %s: %w", key.Name(), err)
	}
	data, err := s.readPreview(ctx, object, size)
	if err != nil {
		return nil, "", fmt.Errorf("cached preview %s: %w", key.Name(), err)
	}
	return data, contentType, nil
}

// readPreview reads the size bytes of object; a missing object (swept
// after its row went) is ErrNotFound.
func (s *Store) readPreview(ctx context.Context, object string, size int64) ([]byte, error) {
	if size == 0 {
		return []byte{}, nil
	}
	body, err := s.objects.Get(ctx, object, 0, size)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(body, data); err != nil {
		return nil, fmt.Errorf("reading object %s: %w", object, err)
	}
	return data, nil
}

// KeepPreview keeps data, a preview of contentType, under key
// (storage.PreviewCache), evicting the least recently used previews the
// cap has no more room for. A preview larger than the cap is not kept.
func (s *Store) KeepPreview(ctx context.Context, key storage.PreviewKey, data []byte, contentType string) error {
	if !key.Valid() || contentType == "" {
		return fmt.Errorf("keep preview: invalid key or content type: %w", storage.ErrInvalid)
	}
	limit := s.previewCacheSize.Load()
	if limit <= 0 || int64(len(data)) > limit {
		return nil
	}
	object := newObjectKey(prefixPreview + key.Name() + "-")
	if _, err := s.putObject(ctx, object, bytes.NewReader(data), int64(len(data))); err != nil {
		s.discardObject(ctx, object)
		return fmt.Errorf("keep preview %s: %w", key.Name(), err)
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		return s.putPreview(ctx, tx, key, object, contentType, int64(len(data)), limit)
	})
	if err != nil {
		s.discardObject(ctx, object)
		return fmt.Errorf("keep preview %s: %w", key.Name(), err)
	}
	return nil
}

// putPreview records object as the preview of key, the object it
// replaces and those the cap evicts going to the sweep.
func (s *Store) putPreview(ctx context.Context, tx pgx.Tx, key storage.PreviewKey, object, contentType string, size, limit int64) error {
	rows, _ := tx.Query(ctx, `DELETE FROM previews WHERE name = $1 RETURNING object`, key.Name())
	retired, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO previews (name, sha1, object, content_type, size, last_used)
		VALUES ($1, $2, $3, $4, $5, nextval('preview_uses')) ON CONFLICT (name) DO NOTHING`,
		key.Name(), key.SHA1, object, contentType, size)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		// A concurrent keep of the same key won: ours is not needed.
		retired = append(retired, object)
	} else if err := adopt(ctx, tx, object); err != nil {
		return err
	}
	rows, _ = tx.Query(ctx, `
		WITH over AS (
			SELECT name FROM (SELECT name, sum(size) OVER (ORDER BY last_used DESC) AS running FROM previews) u
			WHERE running > $1)
		DELETE FROM previews p USING over WHERE p.name = over.name RETURNING p.object`, limit)
	evicted, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	return s.retirePreviews(ctx, tx, append(retired, evicted...))
}

// retirePreviews hands preview objects no row names any more to the
// sweep, after the grace of released content, for readers that took
// their row before.
func (s *Store) retirePreviews(ctx context.Context, tx pgx.Tx, objects []string) error {
	if len(objects) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO object_sweep (key, sweep_after) SELECT unnest($1::text[]), $2::timestamptz
		ON CONFLICT (key) DO UPDATE SET sweep_after = LEAST(object_sweep.sweep_after, EXCLUDED.sweep_after)`,
		objects, s.now().Add(s.objectGrace))
	if err != nil {
		return fmt.Errorf("retiring %d previews: %w", len(objects), err)
	}
	return nil
}

// dropPreviews drops the previews of the contents of checksums sha1s, in
// the transaction that deletes those contents.
func (s *Store) dropPreviews(ctx context.Context, tx pgx.Tx, sha1s ...string) error {
	rows, _ := tx.Query(ctx, `DELETE FROM previews WHERE sha1 = ANY($1) RETURNING object`, sha1s)
	return s.retireDropped(ctx, tx, rows)
}

func (s *Store) retireDropped(ctx context.Context, tx pgx.Tx, rows pgx.Rows) error {
	objects, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("dropping previews: %w", err)
	}
	return s.retirePreviews(ctx, tx, objects)
}

// SetPreviewCacheSize sets the cap of the preview cache in bytes, in
// storage.PreviewCacheSize's terms (0: the default, negative: none). The
// cache shrinks to a lower cap at the next keep.
func (s *Store) SetPreviewCacheSize(bytes int64) {
	s.previewCacheSize.Store(storage.PreviewCacheSize(bytes))
}
