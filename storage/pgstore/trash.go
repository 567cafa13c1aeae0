package pgstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// A space's trash is a second tree (schema.sql): Remove, and the target a
// Move or Copy replaces, move the node under the root of the space's trash
// in the change's own transaction, with its subtree, ids, properties,
// content and versions, and record a trash item; a restore moves it back.
// Only the top node's row changes: the nodes below it follow it, as their
// place follows from their ancestry (layout.go). Purging destroys the
// subtree in parts; a remove in a space that keeps no trash makes it an
// item being purged at once, the parts following its commit (purger.go).

// trashSuffix makes a space's id the id of its trash's pseudo space and
// of that pseudo space's root. Space ids never hold a "/".
const trashSuffix = "/trash"

// trashSpaceID is the id of the pseudo space, and of the root, that the
// trashed nodes of space spaceID belong to.
func trashSpaceID(spaceID string) string { return spaceID + trashSuffix }

// isTrashSpace reports whether id names a trash rather than a space.
func isTrashSpace(id string) bool { return strings.Contains(id, "/") }

// SetRetention applies p from now on; ExpireUndo and the next commits
// apply it to what is kept already.
func (s *Store) SetRetention(p storage.RetentionPolicy) {
	p.Spaces = maps.Clone(p.Spaces)
	s.retention.Store(&p)
	s.recountVersions.Store(true)
}

// retentionFor is the retention of space spaceID.
func (s *Store) retentionFor(spaceID string) storage.Retention {
	return s.retention.Load().For(spaceID)
}

// trashRow is a trash item as kept: the deleted top node and where it was.
type trashRow struct {
	nodeRow
	Key        string `db:"key"`
	OrigParent string `db:"orig_parent"`
	OrigName   string `db:"orig_name"`
	Location   string `db:"location"`
	DeletedNS  int64  `db:"deleted_ns"`
}

// trashColumns are the columns trashRow scans, from trash_items t joined
// with its node n.
const trashColumns = `n.id, n.space_id, coalesce(n.parent_id, '') AS parent_id, n.name, n.kind, n.size,
	n.mtime, n.etag, n.content_type, n.sha1, n.md5, n.adler32, n.content,
	t.key, t.parent_id AS orig_parent, t.name AS orig_name, t.location, t.deleted_ns
	FROM trash_items t JOIN nodes n ON n.id = t.node_id`

func (r trashRow) deleted() time.Time { return time.Unix(0, r.DeletedNS).UTC() }

// item is the storage.TrashItem of space spaceID that r is.
func (r trashRow) item(spaceID string) storage.TrashItem {
	n := r.nodeRow.node()
	n.SpaceID, n.ParentID, n.Name = spaceID, r.OrigParent, r.OrigName
	return storage.TrashItem{Key: r.Key, Node: n, Location: r.Location, Deleted: r.deleted()}
}

// trashedNode is the storage.Node of a node in the trash of spaceID: its
// space is the live one, as a restore will make it again.
func trashedNode(r nodeRow, spaceID string) storage.Node {
	n := r.node()
	n.SpaceID = spaceID
	return n
}

func queryTrash(ctx context.Context, q querier, sql string, args ...any) ([]trashRow, error) {
	rows, _ := q.Query(ctx, `SELECT `+trashColumns+` `+sql, args...)
	return pgx.CollectRows(rows, pgx.RowToStructByName[trashRow])
}

// trashItem returns item key of the trash of spaceID, or a wrapped
// ErrNotFound: an item being purged is gone already.
func trashItem(ctx context.Context, q querier, spaceID, key string) (trashRow, error) {
	rows, err := queryTrash(ctx, q, `WHERE t.space_id = $1 AND t.key = $2 AND NOT t.purging`, spaceID, key)
	if err != nil {
		return trashRow{}, err
	}
	if len(rows) == 0 {
		return trashRow{}, storage.TrashItemNotFound(key)
	}
	return rows[0], nil
}

// trashedIn returns node id of trash item it (its node or one below it),
// or a wrapped ErrNotFound.
func trashedIn(ctx context.Context, tx pgx.Tx, spaceID string, it trashRow, id string) (nodeRow, error) {
	if id == it.ID {
		return it.nodeRow, nil
	}
	r, ok, err := nodeByID(ctx, tx, id)
	if err != nil {
		return nodeRow{}, err
	}
	if !ok || r.SpaceID != spaceID {
		return nodeRow{}, storage.NodeNotFound(spaceID, id)
	}
	// Below the item's node, which is in the trash: so is the node.
	if below, err := isAncestor(ctx, tx, it.ID, id); err != nil {
		return nodeRow{}, err
	} else if !below {
		return nodeRow{}, storage.NodeNotFound(spaceID, id)
	}
	return r, nil
}

// spaceExists fails with ErrNotFound unless space spaceID exists.
func spaceExists(ctx context.Context, tx pgx.Tx, spaceID string) error {
	var exists bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM spaces WHERE id = $1 AND type <> 'trash')`, spaceID).Scan(&exists)
	if err == nil && !exists {
		return storage.SpaceNotFound(spaceID)
	}
	return err
}

// TrashItems returns up to limit items of the trash of a space, newest
// first, after the item keyed after: a keyset page in the order
// (deleted_ns DESC, key), so that no page reads the ones before it.
func (s *Store) TrashItems(ctx context.Context, spaceID, after string, limit int) ([]storage.TrashItem, error) {
	cur, err := storage.ValidTrashPage(after, limit)
	if err != nil {
		return nil, err
	}
	var out []storage.TrashItem
	err = s.read(ctx, func(tx pgx.Tx) error {
		if err := spaceExists(ctx, tx, spaceID); err != nil {
			return err
		}
		rows, err := queryTrash(ctx, tx, `WHERE t.space_id = $1 AND NOT t.purging
			AND ($2 = '' OR t.deleted_ns < $3 OR t.deleted_ns = $3 AND t.key > $2)
			ORDER BY t.deleted_ns DESC, t.key LIMIT $4`, spaceID, cur.Key, cur.Deleted, limit)
		out = mapRows(rows, func(r trashRow) storage.TrashItem { return r.item(spaceID) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("trash of space %s: %w", spaceID, err)
	}
	return out, nil
}

// TrashNode returns trash item key and the node names lead to below it.
func (s *Store) TrashNode(ctx context.Context, spaceID, key string, names []string) (storage.TrashItem, storage.Node, error) {
	if err := storage.ValidTrashKey(key); err != nil {
		return storage.TrashItem{}, storage.Node{}, err
	}
	var (
		item storage.TrashItem
		node storage.Node
	)
	err := s.read(ctx, func(tx pgx.Tx) error {
		it, err := trashItem(ctx, tx, spaceID, key)
		if err != nil {
			return err
		}
		item, node = it.item(spaceID), it.item(spaceID).Node
		r := it.nodeRow
		for _, name := range names {
			if err := validName(name); err != nil {
				return fmt.Errorf("walk: %w", err)
			}
			c, ok, err := child(ctx, tx, r.ID, name)
			if err != nil {
				return err
			}
			if !ok || !r.isFolder() {
				return storage.ChildNotFound(r.ID, name)
			}
			r = c
			node = trashedNode(r, spaceID)
		}
		return nil
	})
	if err != nil {
		return storage.TrashItem{}, storage.Node{}, fmt.Errorf("trash item %q: %w", key, err)
	}
	return item, node, nil
}

// ReadTrashDir returns up to limit children of folder folderID of trash
// item key, ordered by name, after the name after.
func (s *Store) ReadTrashDir(ctx context.Context, spaceID, key, folderID, after string, limit int) ([]storage.Node, error) {
	if err := storage.ValidTrashKey(key); err != nil {
		return nil, err
	}
	var out []storage.Node
	err := s.read(ctx, func(tx pgx.Tx) error {
		it, err := trashItem(ctx, tx, spaceID, key)
		if err != nil {
			return err
		}
		f, err := trashedIn(ctx, tx, spaceID, it, folderID)
		if err != nil {
			return err
		}
		if !f.isFolder() {
			return storage.NotAFolder(folderID)
		}
		var max *int // NULL: LIMIT ALL
		if limit > 0 {
			max = &limit
		}
		rows, err := listNodes(ctx, tx, `SELECT `+listColumns+` FROM nodes
			WHERE parent_id = $1 AND name > $2 ORDER BY name LIMIT $3`, f.ID, after, max)
		out = mapRows(rows, func(r nodeRow) storage.Node { return trashedNode(r, spaceID) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read trash dir %s of %q: %w", folderID, key, err)
	}
	return out, nil
}

// discard takes node n of the space out of its tree, with everything
// below it: into the trash when the space keeps one, else for good, in
// parts once c commits (purger.go), c only hiding it. Their shares go, so that a
// restore revives none. The caller propagates the
// size the parent loses.
func (s *Store) discard(ctx context.Context, c *change, spaceID string, n nodeRow) error {
	if err := deleteSharesBelow(ctx, c.tx, spaceID, n); err != nil {
		return err
	}
	if err := s.moveToTrash(ctx, c, spaceID, n); err != nil {
		return err
	}
	if s.retentionFor(spaceID).KeepsTrash() {
		return nil
	}
	// Destroyed in parts after c, as a purge: c only hides the tree.
	if err := markPurging(ctx, c.tx, n.ID); err != nil {
		return err
	}
	s.purgeLater(c.tx, spaceID, n.ID)
	return nil
}

// moveToTrash makes node n of the space, with its subtree, a new item of
// the space's trash: the locks on them go (as a remove drops them), their
// ids, properties, content and versions stay.
func (s *Store) moveToTrash(ctx context.Context, c *change, spaceID string, n nodeRow) error {
	names, err := pathNames(ctx, c.tx, n.ID)
	if err != nil {
		return err
	}
	if err := ensureTrash(ctx, c, spaceID); err != nil {
		return err
	}
	if err := dropLocksBelow(ctx, c.tx, spaceID, n.ID); err != nil {
		return err
	}
	key := storage.TrashKey(c.now, n.ID)
	trash := trashSpaceID(spaceID)
	_, err = c.tx.Exec(ctx, `UPDATE nodes SET parent_id = $2, name = $3 WHERE id = $1`, n.ID, trash, key)
	if err != nil {
		return fmt.Errorf("moving %s to the trash: %w", n.ID, err)
	}
	_, err = c.tx.Exec(ctx, `INSERT INTO trash_items (space_id, key, node_id, parent_id, name, location, deleted_ns)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		spaceID, key, n.ID, n.ParentID, n.Name, storage.TrashLocation(names), c.now.UnixNano())
	if err != nil {
		return fmt.Errorf("recording trash item %s: %w", key, err)
	}
	return c.propagate(ctx, trash, n.Size)
}

// pathNames returns the names from the root of its space to node id.
func pathNames(ctx context.Context, tx pgx.Tx, id string) ([]string, error) {
	rows, _ := tx.Query(ctx, `
		WITH RECURSIVE up AS (
			SELECT id, parent_id, name, 0 AS depth FROM nodes WHERE id = $1
			UNION ALL
			SELECT n.id, n.parent_id, n.name, up.depth + 1 FROM nodes n JOIN up ON n.id = up.parent_id
			WHERE up.depth < `+maxCheckDepth+`
		)
		SELECT name FROM up WHERE parent_id IS NOT NULL ORDER BY depth DESC`, id)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("path of %s: %w", id, err)
	}
	return names, nil
}

// ensureTrash creates the pseudo space and root of the space's trash (the
// only node whose space_id is the pseudo space's), unless they exist: a
// space gets them with its root, one made by older code with its first
// deletion.
func ensureTrash(ctx context.Context, c *change, spaceID string) error {
	trash := trashSpaceID(spaceID)
	_, err := c.tx.Exec(ctx, `INSERT INTO spaces (id, type, name, quota) VALUES ($1, 'trash', '', $2)
		ON CONFLICT (id) DO NOTHING`, trash, storage.NoQuota)
	if err != nil {
		return fmt.Errorf("trash of space %s: %w", spaceID, err)
	}
	_, err = c.tx.Exec(ctx, `INSERT INTO nodes (id, space_id, parent_id, name, kind, mtime, etag)
		VALUES ($1, $1, NULL, '', $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
		trash, storage.KindFolder, c.now, c.etag(trash))
	if err != nil {
		return fmt.Errorf("trash root of space %s: %w", spaceID, err)
	}
	return nil
}

// RestoreTrash moves node t.NodeID of trash item key back into the space.
// The target's folder must be a live folder of the space; an existing
// target is replaced only with Overwrite (and goes to the trash), and
// IfNoneMatch refuses one as Copy does. Locks are checked on the target,
// or its folder when there is none. IfMatch is not checked: the trashed
// node has no etag a client could have seen.
func (s *Store) RestoreTrash(ctx context.Context, spaceID, key string, t storage.Transfer) (storage.Node, bool, error) {
	if err := storage.ValidTrashKey(key); err != nil {
		return storage.Node{}, false, err
	}
	if err := validName(t.NewName); err != nil {
		return storage.Node{}, false, fmt.Errorf("restore: %w", err)
	}
	var (
		out      nodeRow
		replaced bool
	)
	err := s.change(ctx, spaceID, func(c *change) (err error) {
		out, replaced, err = s.restoreIn(ctx, c, spaceID, key, t)
		return err
	})
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("restore %s of trash item %q: %w", t.NodeID, key, err)
	}
	return out.node(), replaced, nil
}

// restoreIn is RestoreTrash in change c.
func (s *Store) restoreIn(ctx context.Context, c *change, spaceID, key string, t storage.Transfer) (nodeRow, bool, error) {
	it, err := trashItem(ctx, c.tx, spaceID, key)
	if err != nil {
		return nodeRow{}, false, err
	}
	n, err := trashedIn(ctx, c.tx, spaceID, it, t.NodeID)
	if err != nil {
		return nodeRow{}, false, err
	}
	dst, err := folderIn(ctx, c.tx, spaceID, t.NewParentID, storage.ErrConflict)
	if err != nil {
		return nodeRow{}, false, err
	}
	target, exists, err := child(ctx, c.tx, dst.ID, t.NewName)
	if err != nil {
		return nodeRow{}, false, err
	}
	if exists && (!t.Overwrite || t.Conditions.IfNoneMatch) {
		return nodeRow{}, false, storage.TargetExists(t.NewName)
	}
	locked := lockedNode{id: dst.ID}
	if exists {
		locked = lockedNode{id: target.ID, below: target.isFolder()}
	}
	if err := s.checkHeld(ctx, c.tx, spaceID, t.Locks, locked); err != nil {
		return nodeRow{}, false, err
	}
	if exists {
		if err := s.discard(ctx, c, spaceID, target); err != nil {
			return nodeRow{}, false, err
		}
		if err := c.propagate(ctx, dst.ID, -target.Size); err != nil {
			return nodeRow{}, false, err
		}
	}
	out, err := s.restoreNode(ctx, c, spaceID, n, dst.ID, t.NewName)
	return out, exists, err
}

// restoreNode moves trashed node n with its subtree back into the space,
// as child name of folder parentID with a fresh etag; the trash item
// whose node it is goes, one it was below is left smaller. It returns the
// node as restored.
func (s *Store) restoreNode(ctx context.Context, c *change, spaceID string, n nodeRow, parentID, name string) (nodeRow, error) {
	_, err := c.tx.Exec(ctx, `UPDATE nodes SET parent_id = $2, name = $3, etag = $4 WHERE id = $1`,
		n.ID, parentID, name, c.etag(n.ID))
	if err != nil {
		return nodeRow{}, fmt.Errorf("restoring %s: %w", n.ID, err)
	}
	if _, err := c.tx.Exec(ctx, `DELETE FROM trash_items WHERE node_id = $1`, n.ID); err != nil {
		return nodeRow{}, err
	}
	if err := c.propagate(ctx, n.ParentID, -n.Size); err != nil {
		return nodeRow{}, err
	}
	if err := c.propagate(ctx, parentID, n.Size); err != nil {
		return nodeRow{}, err
	}
	r, _, err := nodeByID(ctx, c.tx, n.ID)
	return r, err
}

// PurgeTrash destroys trash item key with the versions of its files, in
// parts (purgeParts).
func (s *Store) PurgeTrash(ctx context.Context, spaceID, key string) error {
	if err := storage.ValidTrashKey(key); err != nil {
		return err
	}
	if err := s.purgeTrashKey(ctx, spaceID, key); err != nil {
		return fmt.Errorf("purge trash item %q: %w", key, err)
	}
	return nil
}

// A purge goes in parts, so that no transaction of it lasts long however
// large the item: the first marks the item purging (trash_items.purging),
// which takes it out of every listing and lookup at once, so that a
// restore racing it is decided whole by the space's lock; then each
// transaction deletes nodes of its subtree from the bottom up, purgeBatch
// a step (purgeStep), until emptyBudget has passed, with their
// properties and versions, gives their bytes and counts back to the trash
// and the space, and hands their objects to the sweep. Small steps keep
// what a transaction runs past its budget small on a loaded machine,
// where deleting a node with the rows that cascade from it takes longer.
// Between two parts the item is a smaller, hidden trash item whose sizes
// and counters add up, so a check finds nothing wrong; one left half
// purged by a node that stopped is finished by the next EmptyTrash of the
// space or the sweep's next pass (finishPurges).

// purgeBatch bounds the nodes one step of a purge deletes
// (Options.purgeBatch aside).
const purgeBatch = 200

// purgeDeadline is when a transaction of a purge that starts now commits,
// after the step that passes it.
func (s *Store) purgeDeadline() time.Time { return time.Now().Add(s.emptyBudget) }

// purgeTrashKey purges trash item key of the space in parts.
func (s *Store) purgeTrashKey(ctx context.Context, spaceID, key string) error {
	var (
		topID string
		gone  bool
	)
	err := s.change(ctx, spaceID, func(c *change) error {
		it, err := trashItem(ctx, c.tx, spaceID, key)
		if err != nil {
			return err
		}
		if err := markPurging(ctx, c.tx, it.ID); err != nil {
			return err
		}
		topID = it.ID
		gone, err = s.purgeWithin(ctx, c, spaceID, topID, s.purgeDeadline())
		return err
	})
	if err != nil {
		return err
	}
	return s.purgeParts(ctx, spaceID, topID, gone)
}

// purgeParts goes on with the purge of the item at topID, a transaction
// a part, until its node is gone.
func (s *Store) purgeParts(ctx context.Context, spaceID, topID string, gone bool) error {
	for !gone {
		err := s.change(ctx, spaceID, func(c *change) (err error) {
			gone, err = s.purgeWithin(ctx, c, spaceID, topID, s.purgeDeadline())
			return err
		})
		if err != nil {
			return fmt.Errorf("purging %s: %w", topID, err)
		}
	}
	return nil
}

// markPurging takes trash item node topID out of the trash's listings and
// lookups, for a purge in parts.
func markPurging(ctx context.Context, tx pgx.Tx, topID string) error {
	_, err := tx.Exec(ctx, `UPDATE trash_items SET purging = true WHERE node_id = $1`, topID)
	if err != nil {
		return fmt.Errorf("marking %s as being purged: %w", topID, err)
	}
	return nil
}

// EmptyTrash purges every item in the trash of a space, parts of items
// per transaction (purgeSome), so that emptying a large trash, or a
// large item, holds the space's lock for no long stretch, and other
// requests to the space go on between the transactions. Each item goes
// whole in effect: hidden at once, deleted in parts. Items deleted
// meanwhile go too, and purges a stopped node left half done.
func (s *Store) EmptyTrash(ctx context.Context, spaceID string) error {
	for {
		more, err := s.purgeSome(ctx, spaceID)
		if err != nil {
			return fmt.Errorf("empty the trash of space %s: %w", spaceID, err)
		}
		if !more {
			return nil
		}
	}
}

// emptyBudget is how long one transaction of a purge runs
// (Options.emptyBudget aside): it commits after the part that passes it.
const emptyBudget = 200 * time.Millisecond

// purgeSome purges items of the trash of a space, those being purged
// first, then in key order, until the trash is empty or the transaction's
// budget is spent, in one transaction; it reports whether it stopped for
// the budget.
func (s *Store) purgeSome(ctx context.Context, spaceID string) (more bool, err error) {
	err = s.change(ctx, spaceID, func(c *change) error {
		more = false
		deadline := s.purgeDeadline()
		for {
			topID, ok, err := nextPurge(ctx, c.tx, spaceID)
			if err != nil || !ok {
				return err
			}
			if _, err := s.purgeWithin(ctx, c, spaceID, topID, deadline); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				more = true
				return nil
			}
		}
	})
	return more, err
}

// nextPurge returns the node of the item of the space's trash to purge
// next: one being purged, or else the first by key, which it marks so.
func nextPurge(ctx context.Context, tx pgx.Tx, spaceID string) (string, bool, error) {
	var topID string
	err := tx.QueryRow(ctx, `SELECT node_id FROM trash_items WHERE space_id = $1 AND purging LIMIT 1`,
		spaceID).Scan(&topID)
	if errors.Is(err, pgx.ErrNoRows) {
		err = tx.QueryRow(ctx, `UPDATE trash_items SET purging = true WHERE space_id = $1 AND key = (
				SELECT key FROM trash_items WHERE space_id = $1 ORDER BY key LIMIT 1)
			RETURNING node_id`, spaceID).Scan(&topID)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("the next item to purge: %w", err)
	}
	return topID, true, nil
}

// purgeWithin deletes the subtree at topID, an item being purged, step
// by step, until it is gone, which it reports, or deadline has passed.
func (s *Store) purgeWithin(ctx context.Context, c *change, spaceID, topID string, deadline time.Time) (bool, error) {
	for {
		gone, err := s.purgeStep(ctx, c, spaceID, topID, s.purgeBatch)
		if err != nil || gone || time.Now().After(deadline) {
			return gone, err
		}
	}
}
