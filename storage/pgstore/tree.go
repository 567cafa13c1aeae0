package pgstore

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// change is one transaction changing a space's tree, holding the space's
// row lock: its time, and the tag that makes the etags of the nodes it
// changes fresh.
type change struct {
	tx  pgx.Tx
	now time.Time
	tag string
}

// change runs fn as one change of the space's tree. A retried attempt gets
// a new time and tag.
func (s *Store) change(ctx context.Context, spaceID string, fn func(*change) error) error {
	return s.inSpace(ctx, spaceID, func(tx pgx.Tx) error {
		return fn(&change{tx: tx, now: s.now().UTC(), tag: uuid.NewString()})
	})
}

// etag is the etag node id gets in this change: distinct for every node
// and every change, and the same for a node changed twice in one change.
func (c *change) etag(id string) string {
	sum := md5.Sum([]byte(id + ":" + c.tag))
	return hex.EncodeToString(sum[:])
}

// propagate adds delta to the size of folder parentID and of each of its
// ancestors, and gives each a fresh etag and, unless it is later already,
// the change's time as modification time: one statement, however deep.
func (c *change) propagate(ctx context.Context, parentID string, delta int64) error {
	_, err := c.tx.Exec(ctx, `
		WITH RECURSIVE up AS (
			SELECT id, parent_id FROM nodes WHERE id = $1
			UNION ALL
			SELECT n.id, n.parent_id FROM nodes n JOIN up ON n.id = up.parent_id
		)
		UPDATE nodes SET size = nodes.size + $2, mtime = greatest(nodes.mtime, $3),
			etag = md5(nodes.id || ':' || $4::text)
		FROM up WHERE nodes.id = up.id`, parentID, delta, c.now, c.tag)
	if err != nil {
		return fmt.Errorf("propagating to the ancestors of %s: %w", parentID, err)
	}
	return nil
}

// isAncestor reports whether ancestorID is id or one of its ancestors.
func isAncestor(ctx context.Context, tx pgx.Tx, ancestorID, id string) (bool, error) {
	var found bool
	err := tx.QueryRow(ctx, `
		WITH RECURSIVE up AS (
			SELECT id, parent_id FROM nodes WHERE id = $2
			UNION ALL
			SELECT n.id, n.parent_id FROM nodes n JOIN up ON n.id = up.parent_id
		)
		SELECT EXISTS (SELECT 1 FROM up WHERE id = $1)`, ancestorID, id).Scan(&found)
	return found, err
}

// subtreeContent returns the segments of the files at and below top.
func subtreeContent(ctx context.Context, tx pgx.Tx, topID string) ([]s3content.Segment, error) {
	rows, _ := tx.Query(ctx, `
		WITH RECURSIVE sub AS (
			SELECT id, kind, content FROM nodes WHERE id = $1
			UNION ALL
			SELECT n.id, n.kind, n.content FROM nodes n JOIN sub ON n.parent_id = sub.id
		)
		SELECT s.k, s.n FROM sub, jsonb_to_recordset(sub.content) AS s(k text, n bigint)
		WHERE sub.kind = $2`, topID, storage.KindFile)
	return pgx.CollectRows(rows, pgx.RowToStructByPos[s3content.Segment])
}

// removeTree deletes r and everything below it, with their properties and
// locks (by cascade), and hands the objects no node references any more to
// the sweep.
func (s *Store) removeTree(ctx context.Context, tx pgx.Tx, r nodeRow) error {
	segments := r.Content
	if r.isFolder() {
		var err error
		if segments, err = subtreeContent(ctx, tx, r.ID); err != nil {
			return fmt.Errorf("listing the content below %s: %w", r.ID, err)
		}
	}
	props, err := subtreePropBytes(ctx, tx, r.ID, false)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM nodes WHERE id = $1`, r.ID); err != nil {
		return fmt.Errorf("removing %s: %w", r.ID, err)
	}
	if err := s.addProps(ctx, tx, r.SpaceID, -props); err != nil {
		return err
	}
	return s.release(ctx, tx, segments)
}

// dropLocksBelow deletes the locks on top and on every node below it. It
// walks up from each lock of the space, so its cost depends on the locks
// and the depth, not on the size of the subtree.
func dropLocksBelow(ctx context.Context, tx pgx.Tx, spaceID, topID string) error {
	_, err := tx.Exec(ctx, `
		DELETE FROM locks l WHERE l.space_id = $1 AND EXISTS (
			WITH RECURSIVE up AS (
				SELECT n.id, n.parent_id FROM nodes n WHERE n.id = l.node_id
				UNION ALL
				SELECT n.id, n.parent_id FROM nodes n JOIN up ON n.id = up.parent_id
			)
			SELECT 1 FROM up WHERE up.id = $2)`, spaceID, topID)
	if err != nil {
		return fmt.Errorf("dropping the locks below %s: %w", topID, err)
	}
	return nil
}
