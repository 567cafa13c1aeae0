package pgstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

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

// Mkdir creates an empty folder.
func (s *Store) Mkdir(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	if err := validName(name); err != nil {
		return storage.Node{}, fmt.Errorf("mkdir: %w", err)
	}
	var n nodeRow
	err := s.change(ctx, spaceID, func(c *change) error {
		p, err := folderIn(ctx, c.tx, spaceID, parentID, storage.ErrConflict)
		if err != nil {
			return err
		}
		if _, exists, err := child(ctx, c.tx, p.ID, name); err != nil {
			return err
		} else if exists {
			return storage.ErrExists
		}
		if err := s.addNodes(ctx, c.tx, spaceID, 1); err != nil {
			return err
		}
		id := uuid.NewString()
		n, _, err = queryNode(ctx, c.tx, `
			INSERT INTO nodes (id, space_id, parent_id, name, kind, mtime, etag)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+nodeColumns,
			id, spaceID, p.ID, name, storage.KindFolder, c.now, c.etag(id))
		if err != nil {
			return err
		}
		return c.propagate(ctx, p.ID, 0)
	})
	if err != nil {
		return storage.Node{}, fmt.Errorf("mkdir %q: %w", name, err)
	}
	return n.node(), nil
}

// Remove takes a node and everything below it out of the space: into
// its trash (discard), or for good when the space keeps none. The space
// root cannot be removed. Destroyed files' objects go to the sweep unless
// a copy or a version shares them.
func (s *Store) Remove(ctx context.Context, spaceID, nodeID string, cond storage.Conditions) error {
	err := s.change(ctx, spaceID, func(c *change) error {
		n, err := nodeIn(ctx, c.tx, spaceID, nodeID)
		if err != nil {
			return err
		}
		if n.ParentID == "" {
			return storage.ErrRootRemove
		}
		err = s.checkHeld(ctx, c.tx, spaceID, cond.Locks, lockedNode{id: n.ID, below: n.isFolder()}, lockedNode{id: n.ParentID})
		if err != nil {
			return err
		}
		if err := cond.Check(n.ETag); err != nil {
			return err
		}
		if err := s.discard(ctx, c, spaceID, n); err != nil {
			return err
		}
		return c.propagate(ctx, n.ParentID, -n.Size)
	})
	if err != nil {
		return fmt.Errorf("remove %s: %w", nodeID, err)
	}
	return nil
}

// Move renames or moves a node within its space. Only the node's row and
// the ancestors on both paths change, so its cost does not depend on the
// size of the subtree. The node keeps its id and modification time and
// gets a new etag.
func (s *Store) Move(ctx context.Context, spaceID string, tr storage.Transfer) (storage.Node, bool, error) {
	return s.transferNode(ctx, spaceID, tr, true, func(c *change, x transfer) (nodeRow, error) {
		// A MOVE must not move a write lock with its resource (RFC 4918
		// §7.6); locks belong to nodes here, so the subtree's are dropped.
		if err := dropLocksBelow(ctx, c.tx, spaceID, x.src.ID); err != nil {
			return nodeRow{}, err
		}
		out, _, err := queryNode(ctx, c.tx, `UPDATE nodes SET parent_id = $2, name = $3, etag = $4
			WHERE id = $1 RETURNING `+nodeColumns, x.src.ID, x.dst.ID, tr.NewName, c.etag(x.src.ID))
		if err != nil {
			return nodeRow{}, err
		}
		if err := c.propagate(ctx, x.src.ParentID, -x.src.Size); err != nil {
			return nodeRow{}, err
		}
		return out, c.propagate(ctx, x.dst.ID, x.src.Size-x.replacedSize())
	})
}

// transferNode runs the move (or else copy) tr as one change: it checks
// source and target, and unless that is a no-op discards the node the
// target replaces, then lets apply do what moving or copying does, which
// returns the node at the target.
func (s *Store) transferNode(ctx context.Context, spaceID string, tr storage.Transfer, move bool,
	apply func(*change, transfer) (nodeRow, error)) (storage.Node, bool, error) {
	what := "copy"
	if move {
		what = "move"
	}
	if err := validName(tr.NewName); err != nil {
		return storage.Node{}, false, fmt.Errorf("%s: %w", what, err)
	}
	var x transfer
	var out nodeRow
	err := s.change(ctx, spaceID, func(c *change) error {
		if move {
			if n, err := nodeIn(ctx, c.tx, spaceID, tr.NodeID); err != nil {
				return err
			} else if n.ParentID == "" {
				return storage.ErrRootMove
			}
		}
		var err error
		if x, err = s.openTransfer(ctx, c, spaceID, tr, move); err != nil {
			return err
		}
		if out = x.src; x.noop {
			return nil
		}
		if x.replaced {
			if err := s.discard(ctx, c, spaceID, x.target); err != nil {
				return err
			}
		}
		out, err = apply(c, x)
		return err
	})
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("%s %s to %q: %w", what, tr.NodeID, tr.NewName, err)
	}
	return out.node(), x.replaced, nil
}

// transfer holds what Move and Copy check alike about their target.
type transfer struct {
	src      nodeRow
	dst      nodeRow // the new parent
	noop     bool    // onto itself
	target   nodeRow // the existing node at the target, if any
	replaced bool
}

// prepareTransfer resolves and checks source and target of a move or copy.
// It does not change anything.
func prepareTransfer(ctx context.Context, c *change, spaceID string, tr storage.Transfer) (transfer, error) {
	var x transfer
	var err error
	if x.src, err = nodeIn(ctx, c.tx, spaceID, tr.NodeID); err != nil {
		return x, err
	}
	if err := tr.Conditions.Check(x.src.ETag); err != nil {
		return x, err
	}
	if x.dst, err = folderIn(ctx, c.tx, spaceID, tr.NewParentID, storage.ErrCrossSpace); err != nil {
		return x, err
	}
	outcome, err := storage.CheckTransfer(tr, x.src.node(), x.dst.node(), storage.TransferLookups{
		Target: func() (storage.Node, bool, error) {
			target, exists, err := child(ctx, c.tx, x.dst.ID, tr.NewName)
			x.target = target
			return target.node(), exists, err
		},
		IsAncestor: func(ancestorID, id string) (bool, error) {
			return isAncestor(ctx, c.tx, ancestorID, id)
		},
	})
	x.noop, x.replaced = outcome == storage.TransferNoop, outcome == storage.TransferReplaces
	return x, err
}

// openTransfer prepares a move or copy and, unless it is a no-op, checks
// that the request holds the locks on what it changes.
func (s *Store) openTransfer(ctx context.Context, c *change, spaceID string, tr storage.Transfer, move bool) (transfer, error) {
	x, err := prepareTransfer(ctx, c, spaceID, tr)
	if err != nil || x.noop {
		return x, err
	}
	return x, s.checkHeld(ctx, c.tx, spaceID, tr.Locks, x.lockedNodes(move)...)
}

// lockedNodes are the nodes a move or copy changes: an existing target
// and everything below it, or else the target's folder; for a move also
// the source, everything below it and its folder.
func (x transfer) lockedNodes(move bool) []lockedNode {
	var out []lockedNode
	if move {
		out = append(out, lockedNode{id: x.src.ID, below: x.src.isFolder()}, lockedNode{id: x.src.ParentID})
	}
	if x.replaced {
		return append(out, lockedNode{id: x.target.ID, below: x.target.isFolder()})
	}
	return append(out, lockedNode{id: x.dst.ID})
}

// replacedSize is the size of the node a transfer replaces.
func (x transfer) replacedSize() int64 {
	if x.replaced {
		return x.target.Size
	}
	return 0
}

// copySize is the size a copy adds at its target.
func (x transfer) copySize(shallow bool) int64 {
	if x.src.isFolder() && shallow {
		return 0
	}
	return x.src.Size
}

// Copy duplicates a node, and unless Shallow everything below it, with new
// ids, in one transaction. Content objects are immutable, so the copies
// share them; shared dead properties are copied too. Copying a node onto
// itself changes nothing.
func (s *Store) Copy(ctx context.Context, spaceID string, tr storage.Transfer) (storage.Node, bool, error) {
	return s.transferNode(ctx, spaceID, tr, false, func(c *change, x transfer) (nodeRow, error) {
		// After the discard, so that a target kept in the trash counts
		// (its size is in the files until the propagation below) and may
		// itself make room.
		if err := s.makeRoom(ctx, c, spaceID, x.copySize(tr.Shallow)-x.replacedSize()); err != nil {
			return nodeRow{}, err
		}
		out, copied, err := c.copyTree(ctx, x.src, x.dst.ID, tr.NewName, tr.Shallow)
		if err != nil {
			return nodeRow{}, err
		}
		if err := s.addNodes(ctx, c.tx, spaceID, copied); err != nil {
			return nodeRow{}, err
		}
		if err := c.propagate(ctx, x.dst.ID, x.copySize(tr.Shallow)-x.replacedSize()); err != nil {
			return nodeRow{}, err
		}
		return out, s.countCopiedProps(ctx, c.tx, spaceID, out.ID, x.copySize(tr.Shallow)-x.replacedSize())
	})
}

// copyTree copies src as child name of parentID, with its subtree unless
// shallow, and its shared properties, in one statement; it returns the new
// top node and how many nodes it made.
func (c *change) copyTree(ctx context.Context, src nodeRow, parentID, name string, shallow bool) (nodeRow, int64, error) {
	topID := uuid.NewString()
	var copied int64
	err := c.tx.QueryRow(ctx, `
		WITH RECURSIVE sub AS (
			SELECT id FROM nodes WHERE id = $1
			UNION ALL
			SELECT n.id FROM nodes n JOIN sub ON n.parent_id = sub.id WHERE NOT $5
		), ids AS MATERIALIZED (
			SELECT id AS old, CASE WHEN id = $1 THEN $2 ELSE gen_random_uuid()::text END AS new FROM sub
		), copied AS (
			INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag,
				content_type, sha1, md5, adler32, content)
			SELECT ids.new, n.space_id,
				CASE WHEN n.id = $1 THEN $3 ELSE parent.new END,
				CASE WHEN n.id = $1 THEN $4 ELSE n.name END,
				n.kind,
				CASE WHEN n.id = $1 AND $5 AND n.kind = $6 THEN 0 ELSE n.size END,
				n.mtime, md5(ids.new || ':' || $7::text),
				n.content_type, n.sha1, n.md5, n.adler32, n.content
			FROM ids JOIN nodes n ON n.id = ids.old LEFT JOIN ids parent ON parent.old = n.parent_id
		), copiedProps AS (
			INSERT INTO props (node_id, user_id, ns, local, value)
			SELECT ids.new, '', p.ns, p.local, p.value FROM props p JOIN ids ON p.node_id = ids.old
			WHERE p.user_id = ''
		)
		SELECT count(*) FROM ids`,
		src.ID, topID, parentID, name, shallow, storage.KindFolder, c.tag).Scan(&copied)
	if err != nil {
		return nodeRow{}, 0, fmt.Errorf("copying %s: %w", src.ID, err)
	}
	top, _, err := nodeByID(ctx, c.tx, topID)
	return top, copied, err
}

// purgeStep deletes, in c, up to limit nodes of the subtree at topID
// that have nothing below them (purgeParts): files of a folder that has no
// folder below it, or else that folder, emptied, or at the end topID
// itself, which it reports as gone.
func (s *Store) purgeStep(ctx context.Context, c *change, spaceID, topID string, limit int) (bool, error) {
	leaf, ok, err := leafFolder(ctx, c.tx, topID)
	if err != nil {
		return false, err
	}
	if !ok {
		// topID is a file, or gone already (purged by another node).
		if leaf, ok, err = nodeByID(ctx, c.tx, topID); err != nil || !ok {
			return true, err
		}
	}
	parentID, ids := leaf.ParentID, []string{leaf.ID}
	if leaf.isFolder() {
		files, err := childIDs(ctx, c.tx, leaf.ID, max(limit, 1))
		if err != nil {
			return false, err
		}
		if len(files) > 0 {
			parentID, ids = leaf.ID, files
		}
	}
	if err := s.deleteNodes(ctx, c, spaceID, parentID, ids); err != nil {
		return false, fmt.Errorf("purging below %s: %w", topID, err)
	}
	return ids[0] == topID, nil
}

// leafFolder returns a folder at or below topID with no folder below it,
// walking the folders only (nodes_folders); false when topID is no
// folder.
func leafFolder(ctx context.Context, tx pgx.Tx, topID string) (nodeRow, bool, error) {
	rows, _ := tx.Query(ctx, `
		WITH RECURSIVE f AS (
			SELECT id FROM nodes WHERE id = $1 AND kind = $2
			UNION ALL
			SELECT n.id FROM nodes n JOIN f ON n.parent_id = f.id WHERE n.kind = $2
		), leaf AS (
			SELECT id FROM f WHERE NOT EXISTS (SELECT 1 FROM nodes c WHERE c.parent_id = f.id AND c.kind = $2)
			LIMIT 1
		)
		SELECT id FROM leaf`, topID, storage.KindFolder)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nodeRow{}, false, fmt.Errorf("a folder to purge below %s: %w", topID, err)
	}
	if len(ids) == 0 {
		return nodeRow{}, false, nil
	}
	return nodeByID(ctx, tx, ids[0])
}

// childIDs returns the ids of up to limit children of folder id.
func childIDs(ctx context.Context, tx pgx.Tx, id string, limit int) ([]string, error) {
	rows, _ := tx.Query(ctx, `SELECT id FROM nodes WHERE parent_id = $1 LIMIT $2`, id, limit)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("children of %s: %w", id, err)
	}
	return ids, nil
}

// deleteNodes deletes nodes ids, children of folder parentID with
// nothing below them, with their properties and versions (a step of a
// purge, purgeStep): it takes what they held off the space's counters and
// parentID's size, and hands the objects nothing references any more to
// the sweep.
func (s *Store) deleteNodes(ctx context.Context, c *change, spaceID, parentID string, ids []string) error {
	var props int64
	err := c.tx.QueryRow(ctx, `SELECT coalesce(sum(octet_length(ns) + octet_length(local) + octet_length(value)), 0)::bigint
		FROM props WHERE node_id = ANY($1)`, ids).Scan(&props)
	if err != nil {
		return fmt.Errorf("counting their properties: %w", err)
	}
	kept, err := versionsOf(ctx, c.tx, ids)
	if err != nil {
		return err
	}
	rows, _ := c.tx.Query(ctx, `DELETE FROM previews WHERE sha1 IN (
			SELECT sha1 FROM nodes WHERE id = ANY($1) AND kind = $2
			UNION SELECT sha1 FROM versions WHERE file_id = ANY($1))
		RETURNING object`, ids, storage.KindFile)
	if err := s.retireDropped(ctx, c.tx, rows); err != nil {
		return err
	}
	var (
		size, n  int64
		content  []s3content.Segment
		segments = kept.segments
	)
	rows, _ = c.tx.Query(ctx, `DELETE FROM nodes WHERE id = ANY($1) RETURNING size, content`, ids)
	_, err = pgx.ForEachRow(rows, []any{&n, &content}, func() error {
		size += n
		segments = append(segments, content...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("deleting %d nodes: %w", len(ids), err)
	}
	if err := s.addProps(ctx, c.tx, spaceID, -props); err != nil {
		return err
	}
	if err := addVersionBytes(ctx, c.tx, spaceID, -kept.size); err != nil {
		return err
	}
	if err := s.addNodes(ctx, c.tx, spaceID, -int64(len(ids))-kept.count); err != nil {
		return err
	}
	if err := c.propagate(ctx, parentID, -size); err != nil {
		return err
	}
	return s.release(ctx, c.tx, segments)
}
