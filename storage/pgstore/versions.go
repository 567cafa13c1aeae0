package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// A version is a row of versions holding the objects a file's content was
// made of: keeping one costs no copy, and the objects stay until neither a
// node nor a version references them (release).

// versionRow is a row of versions.
type versionRow struct {
	FileID string `db:"file_id"`
	Key    string `db:"key"`
	contentColumns
	ReplacedNS int64 `db:"replaced_ns"`
}

const versionColumns = `file_id, key, size, mtime, etag, content_type, sha1, md5, adler32, content, replaced_ns`

// version is the storage.Version of a file of space spaceID that r is.
func (r versionRow) version(spaceID string) storage.Version {
	return storage.Version{
		Key: r.Key,
		Node: storage.Node{
			ID:          r.FileID,
			SpaceID:     spaceID,
			Kind:        storage.KindFile,
			Size:        r.Size,
			ModTime:     r.ModTime.UTC(),
			ETag:        r.ETag,
			ContentType: r.ContentType,
			Checksums:   checksum.Sums{SHA1: r.SHA1, MD5: r.MD5, Adler32: r.Adler32},
		},
		Replaced: time.Unix(0, r.ReplacedNS).UTC(),
	}
}

// fileVersions returns the versions of file fileID, newest first.
func fileVersions(ctx context.Context, tx pgx.Tx, fileID string) ([]versionRow, error) {
	rows, _ := tx.Query(ctx, `SELECT `+versionColumns+` FROM versions WHERE file_id = $1
		ORDER BY replaced_ns DESC, key DESC`, fileID)
	return pgx.CollectRows(rows, pgx.RowToStructByName[versionRow])
}

// fileVersion returns version key of file fileID, or a wrapped
// ErrNotFound.
func fileVersion(ctx context.Context, q querier, fileID, key string) (versionRow, error) {
	rows, _ := q.Query(ctx, `SELECT `+versionColumns+` FROM versions WHERE file_id = $1 AND key = $2`, fileID, key)
	v, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[versionRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return versionRow{}, storage.VersionNotFound(fileID, key)
	}
	return v, err
}

// liveFile returns file fileID of the space, or a wrapped ErrNotFound
// (a folder has no versions).
func liveFile(ctx context.Context, q querier, spaceID, fileID string) (nodeRow, error) {
	r, err := nodeIn(ctx, q, spaceID, fileID)
	if err == nil && r.isFolder() {
		err = storage.NodeNotFound(spaceID, fileID)
	}
	return r, err
}

// FileVersions returns the versions of a file of the space, newest first.
func (s *Store) FileVersions(ctx context.Context, spaceID, fileID string) ([]storage.Version, error) {
	var out []storage.Version
	err := s.read(ctx, func(tx pgx.Tx) error {
		if _, err := liveFile(ctx, tx, spaceID, fileID); err != nil {
			return err
		}
		rows, err := fileVersions(ctx, tx, fileID)
		out = mapRows(rows, func(r versionRow) storage.Version { return r.version(spaceID) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("versions of %s: %w", fileID, err)
	}
	storage.SortVersions(out)
	return out, nil
}

// OpenVersion returns version key of a file and its content, as Open
// does: the objects stay readable for ObjectGrace after the version goes.
func (s *Store) OpenVersion(ctx context.Context, spaceID, fileID, key string) (storage.Version, storage.Content, error) {
	if err := storage.ValidVersionKey(fileID, key); err != nil {
		return storage.Version{}, nil, err
	}
	var v versionRow
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		if _, err := liveFile(ctx, tx, spaceID, fileID); err != nil {
			return err
		}
		v, err = fileVersion(ctx, tx, fileID, key)
		return err
	})
	if err != nil {
		return storage.Version{}, nil, fmt.Errorf("open version %q of %s: %w", key, fileID, err)
	}
	return v.version(spaceID), s.objects.NewReader(ctx, v.Content), nil
}

// RestoreVersion makes version key the content of a file again and keeps
// the content it replaces as the newest version: the space's use does not
// change (when it keeps versions), so a full space may restore too.
func (s *Store) RestoreVersion(ctx context.Context, spaceID, fileID, key string, cond storage.Conditions) (storage.Node, error) {
	if err := storage.ValidVersionKey(fileID, key); err != nil {
		return storage.Node{}, err
	}
	var out nodeRow
	err := s.change(ctx, spaceID, func(c *change) error {
		cur, err := liveFile(ctx, c.tx, spaceID, fileID)
		if err != nil {
			return err
		}
		if err := s.checkHeld(ctx, c.tx, spaceID, cond.Locks, lockedNode{id: cur.ID}); err != nil {
			return err
		}
		if err := cond.Check(cur.ETag); err != nil {
			return err
		}
		v, err := fileVersion(ctx, c.tx, fileID, key)
		if err != nil {
			return err
		}
		// The restored version goes first, so that pruning after keeping
		// the current content cannot take it.
		if err := s.dropVersion(ctx, c.tx, spaceID, fileID, key, false); err != nil {
			return err
		}
		if _, err := s.keepVersion(ctx, c, spaceID, cur); err != nil {
			return err
		}
		if err := s.makeRoom(ctx, c, spaceID, v.Size-cur.Size); err != nil {
			return err
		}
		out, _, err = queryNode(ctx, c.tx, `UPDATE nodes SET size = $2, mtime = $3, etag = $4, content_type = $5,
			sha1 = $6, md5 = $7, adler32 = $8, content = $9 WHERE id = $1 RETURNING `+nodeColumns,
			fileID, v.Size, v.ModTime, c.etag(fileID), v.ContentType, v.SHA1, v.MD5, v.Adler32, v.Content)
		if err != nil {
			return err
		}
		if err := s.release(ctx, c.tx, cur.Content); err != nil {
			return err
		}
		return c.propagate(ctx, cur.ParentID, v.Size-cur.Size)
	})
	if err != nil {
		return storage.Node{}, fmt.Errorf("restore version %q of %s: %w", key, fileID, err)
	}
	return out.node(), nil
}

// keepVersion keeps the content of file old as its newest version, when
// the space keeps versions, prunes the file's versions to the space's
// retention, and reports whether it kept one. Its objects stay
// referenced: the caller's release of them after replacing the content
// leaves them, unless the version went.
func (s *Store) keepVersion(ctx context.Context, c *change, spaceID string, old nodeRow) (bool, error) {
	r := s.retentionFor(spaceID)
	if !r.KeepsVersions() {
		return false, nil
	}
	seq, err := nextVersionSeq(ctx, c.tx, old.ID, c.now)
	if err != nil {
		return false, err
	}
	_, err = c.tx.Exec(ctx, `INSERT INTO versions (file_id, key, space_id, size, mtime, etag, content_type,
		sha1, md5, adler32, content, replaced_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		old.ID, storage.VersionKey(c.now, seq), spaceID, old.Size, old.ModTime, old.ETag, old.ContentType,
		old.SHA1, old.MD5, old.Adler32, contentColumn(old.Content), c.now.UnixNano())
	if err != nil {
		return false, fmt.Errorf("keeping a version of %s: %w", old.ID, err)
	}
	if err := addVersionBytes(ctx, c.tx, spaceID, old.Size); err != nil {
		return false, err
	}
	if err := s.countNodes(ctx, c.tx, spaceID, 1); err != nil {
		return false, err
	}
	if pruned, err := s.pruneVersions(ctx, c.tx, spaceID, old.ID, r, c.now); err != nil || pruned > 0 {
		return err == nil, err
	}
	return s.keepWithinNodeCap(ctx, c.tx, spaceID, old.ID)
}

// keepWithinNodeCap drops the oldest version of file fileID, the one just
// kept when it is the only one, if the space is past its node cap, and
// reports whether the one just kept stays: a version is kept only where
// the cap has room for it, so that an edit is never refused for what it
// would keep for undo, as the oldest undo makes room for an upload under
// the quota (trimUndo).
func (s *Store) keepWithinNodeCap(ctx context.Context, tx pgx.Tx, spaceID, fileID string) (bool, error) {
	over, err := s.overNodeCap(ctx, tx, spaceID)
	if err != nil || !over {
		return err == nil, err
	}
	vs, err := fileVersions(ctx, tx, fileID)
	if err != nil || len(vs) == 0 {
		return false, err
	}
	// Newest first: the oldest is the one just kept when it is alone.
	return len(vs) > 1, s.dropVersion(ctx, tx, spaceID, fileID, vs[len(vs)-1].Key, len(vs) > 1)
}

// contentColumn is segments as the content column keeps them: '[]' for
// none, not null.
func contentColumn(segments []s3content.Segment) []s3content.Segment {
	if segments == nil {
		return []s3content.Segment{}
	}
	return segments
}

// nextVersionSeq is the seq of the version of file fileID replaced at
// now (storage.VersionKey): the count of its versions, or more when that
// key is taken (a clock that did not move since versions were pruned).
func nextVersionSeq(ctx context.Context, tx pgx.Tx, fileID string, now time.Time) (int, error) {
	var seq int
	err := tx.QueryRow(ctx, `SELECT count(*) FROM versions WHERE file_id = $1`, fileID).Scan(&seq)
	for err == nil {
		var taken bool
		err = tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM versions WHERE file_id = $1 AND key = $2)`,
			fileID, storage.VersionKey(now, seq)).Scan(&taken)
		if !taken {
			break
		}
		seq++
	}
	return seq, err
}

// pruneVersions drops the versions of file fileID that retention r no
// longer keeps at now, and reports how many went.
func (s *Store) pruneVersions(ctx context.Context, tx pgx.Tx, spaceID, fileID string, r storage.Retention, now time.Time) (int, error) {
	rows, err := fileVersions(ctx, tx, fileID)
	if err != nil {
		return 0, err
	}
	vs := mapRows(rows, func(r versionRow) storage.Version { return r.version(spaceID) })
	storage.SortVersions(vs)
	prune := r.VersionsToPrune(vs, now)
	for _, v := range prune {
		if err := s.dropVersion(ctx, tx, spaceID, fileID, v.Key, true); err != nil {
			return 0, err
		}
	}
	return len(prune), nil
}

// dropVersion deletes version key of file fileID, which the space's
// counter stops counting; with release, its objects go to the sweep
// unless something else holds them (a restored version's become the
// file's instead). A version gone already is no error: an eviction may
// name one its file's purge took.
func (s *Store) dropVersion(ctx context.Context, tx pgx.Tx, spaceID, fileID, key string, release bool) error {
	rows, _ := tx.Query(ctx, `DELETE FROM versions WHERE file_id = $1 AND key = $2 RETURNING size, content, sha1`, fileID, key)
	var (
		size    int64
		content []s3content.Segment
		sha1    string
	)
	n, err := pgx.ForEachRow(rows, []any{&size, &content, &sha1}, func() error { return nil })
	if err != nil || n.RowsAffected() == 0 {
		return err
	}
	if err := addVersionBytes(ctx, tx, spaceID, -size); err != nil {
		return err
	}
	if err := s.addNodes(ctx, tx, spaceID, -1); err != nil {
		return err
	}
	if !release {
		return nil
	}
	if err := s.dropPreviews(ctx, tx, sha1); err != nil {
		return err
	}
	return s.release(ctx, tx, content)
}

// keptVersions is what the versions of a subtree's files hold.
type keptVersions struct {
	size     int64
	count    int64
	segments []s3content.Segment
}

// versionsOf returns what the versions of files ids hold.
func versionsOf(ctx context.Context, tx pgx.Tx, ids []string) (keptVersions, error) {
	rows, _ := tx.Query(ctx, `SELECT size, content FROM versions WHERE file_id = ANY($1)`, ids)
	kept, err := collectKept(rows)
	if err != nil {
		return keptVersions{}, fmt.Errorf("listing the versions of %d files: %w", len(ids), err)
	}
	return kept, nil
}

// collectKept adds up rows of (size, content) of versions.
func collectKept(rows pgx.Rows) (keptVersions, error) {
	var (
		kept    keptVersions
		size    int64
		content []s3content.Segment
	)
	_, err := pgx.ForEachRow(rows, []any{&size, &content}, func() error {
		kept.size += size
		kept.count++
		kept.segments = append(kept.segments, content...)
		return nil
	})
	return kept, err
}

// addVersionBytes counts delta bytes of versions into the space.
func addVersionBytes(ctx context.Context, tx pgx.Tx, spaceID string, delta int64) error {
	if delta == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE spaces SET versions_bytes = greatest(versions_bytes + $2, 0) WHERE id = $1`, spaceID, delta)
	if err != nil {
		return fmt.Errorf("counting versions of space %s: %w", spaceID, err)
	}
	return nil
}
