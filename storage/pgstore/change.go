package pgstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/davspaces/davspaces/storage"
)

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

// Remove deletes a node and everything below it. The space root cannot be
// removed. The objects of its files go to the sweep unless a copy shares
// them.
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
		if err := s.removeTree(ctx, c.tx, n); err != nil {
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
	if err := validName(tr.NewName); err != nil {
		return storage.Node{}, false, fmt.Errorf("move: %w", err)
	}
	var (
		out      nodeRow
		replaced bool
	)
	err := s.change(ctx, spaceID, func(c *change) error {
		if n, err := nodeIn(ctx, c.tx, spaceID, tr.NodeID); err != nil {
			return err
		} else if n.ParentID == "" {
			return storage.ErrRootMove
		}
		x, err := s.openTransfer(ctx, c, spaceID, tr, true)
		if err != nil {
			return err
		}
		out, replaced = x.src, false
		if x.noop {
			return nil
		}
		if x.replaced {
			if err := s.removeTree(ctx, c.tx, x.target); err != nil {
				return err
			}
		}
		// A MOVE must not move a write lock with its resource (RFC 4918
		// §7.6); locks belong to nodes here, so the subtree's are dropped.
		if err := dropLocksBelow(ctx, c.tx, spaceID, x.src.ID); err != nil {
			return err
		}
		out, _, err = queryNode(ctx, c.tx, `UPDATE nodes SET parent_id = $2, name = $3, etag = $4
			WHERE id = $1 RETURNING `+nodeColumns, x.src.ID, x.dst.ID, tr.NewName, c.etag(x.src.ID))
		if err != nil {
			return err
		}
		if err := c.propagate(ctx, x.src.ParentID, -x.src.Size); err != nil {
			return err
		}
		replaced = x.replaced
		return c.propagate(ctx, x.dst.ID, x.src.Size-x.replacedSize())
	})
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("move %s to %q: %w", tr.NodeID, tr.NewName, err)
	}
	return out.node(), replaced, nil
}
