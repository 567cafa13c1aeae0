package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// The tree's layout (schema.sql, node_root): a node's space_id names the
// live space it belongs to, wherever in it or its trash it is, and the
// root its parents lead to tells which of the two. A node looked up by id
// is live exactly when its space_id and its root are the space's id;
// one found by name below a folder so checked is in the same place as
// that folder, and needs no check of its own.

// layoutBatch bounds the rows one transaction of the migration rewrites,
// so that none runs long: each row rewritten updates every index of nodes.
const layoutBatch = 1000

// migrateLayout brings a database of layout 1, where every node in a
// trash held the trash's pseudo space id and a move into the trash or back
// rewrote each row of the subtree, to layout 2 when a node opens it,
// before the node serves (it answers 503 meanwhile): the nodes in each
// trash get their live space's id, batch rows per transaction. Nodes
// opening together share the work, as each batch rewrites rows that still
// hold a trash's id. Whether any trash holds such rows is asked of the
// database every time, not recorded: a node of the older version that ran
// on the database since would have written some.
func (s *Store) migrateLayout(ctx context.Context, batch int) error {
	rows, _ := s.pool.Query(ctx, `SELECT s.id FROM spaces s WHERE s.type = 'trash'
		AND EXISTS (SELECT 1 FROM nodes n WHERE n.space_id = s.id AND n.parent_id IS NOT NULL) ORDER BY s.id`)
	trashes, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("open store: layout: %w", classify(err))
	}
	if len(trashes) > 0 {
		s.log.Info("rewriting the nodes in the trash to layout 2 before serving; an attempt cut short goes on where it stopped",
			zap.Int("trashes", len(trashes)))
	}
	var moved int64
	for _, trash := range trashes {
		n, err := s.relabelTrash(ctx, trash, batch)
		if err != nil {
			return fmt.Errorf("open store: layout: trash %s: %w", trash, err)
		}
		moved += n
	}
	if moved > 0 {
		s.log.Info("the nodes in the trash are brought to layout 2",
			zap.Int("trashes", len(trashes)), zap.Int64("nodes", moved))
	}
	return nil
}

// relabelTrash gives the nodes below trash root trash the id of its live
// space, batch rows per transaction, and returns how many it rewrote. The
// root keeps its own id: it is what tells the trash from the space.
func (s *Store) relabelTrash(ctx context.Context, trash string, batch int) (int64, error) {
	spaceID := strings.TrimSuffix(trash, trashSuffix)
	var total int64
	for {
		var n int64
		err := runTx(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE nodes SET space_id = $1 WHERE id IN (
				SELECT id FROM nodes WHERE space_id = $2 AND parent_id IS NOT NULL LIMIT $3)`,
				spaceID, trash, batch)
			n = tag.RowsAffected()
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < int64(batch) {
			return total, nil
		}
	}
}

// rootedRow is a node with the root its parents lead to ("" for none).
type rootedRow struct {
	nodeRow
	Root string `db:"root"`
}

// rootedNode returns node id with its root, and whether it exists.
func rootedNode(ctx context.Context, q querier, id string) (rootedRow, bool, error) {
	rows, _ := q.Query(ctx, `SELECT `+nodeColumns+`, coalesce(node_root(id), '') AS root FROM nodes WHERE id = $1`, id)
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[rootedRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return rootedRow{}, false, nil
	}
	return r, err == nil, err
}

// live reports whether the node is a live node of space spaceID.
func (r rootedRow) live(spaceID string) bool {
	return r.SpaceID == spaceID && r.Root == spaceID && !isTrashSpace(spaceID)
}

// trashed reports whether the node is in the trash of space spaceID.
func (r rootedRow) trashed(spaceID string) bool {
	return r.SpaceID == spaceID && r.Root == trashSpaceID(spaceID)
}

// rootOf returns the root node id's parents lead to; "" when the node is
// gone or they lead to none.
func rootOf(ctx context.Context, q querier, id string) (string, error) {
	rows, _ := q.Query(ctx, `SELECT coalesce(node_root($1), '')`, id)
	root, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("root of %s: %w", id, err)
	}
	return root, nil
}

// liveIn fails with a wrapped ErrNotFound unless folder or node id is a
// live node of the space.
func liveIn(ctx context.Context, q querier, spaceID, id string) error {
	root, err := rootOf(ctx, q, id)
	if err != nil {
		return err
	}
	if root != spaceID || isTrashSpace(spaceID) {
		return storage.NodeNotFound(spaceID, id)
	}
	return nil
}
