package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// ReadDir returns up to limit children of a folder ordered by name bytes,
// starting strictly after the name after ("" starts at the beginning). A
// limit of 0 or less returns all remaining children.
func (s *Store) ReadDir(ctx context.Context, spaceID, folderID, after string, limit int) ([]storage.Node, error) {
	var rows []nodeRow
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		rows, err = readDir(ctx, tx, spaceID, folderID, after, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]storage.Node, len(rows))
	for i, r := range rows {
		out[i] = r.node()
	}
	return out, nil
}

// ReadDirProps is ReadDir with each child's dead properties, read in the
// same snapshot as the page.
func (s *Store) ReadDirProps(ctx context.Context, spaceID, folderID, user, after string, limit int) ([]storage.Entry, error) {
	if err := storage.ValidPropUser(user); err != nil {
		return nil, fmt.Errorf("read dir %s: %w", folderID, err)
	}
	out := []storage.Entry{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := readDir(ctx, tx, spaceID, folderID, after, limit)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		props, err := childProps(ctx, tx, folderID, after, rows[len(rows)-1].Name, user)
		if err != nil {
			return err
		}
		out = make([]storage.Entry, len(rows))
		for i, r := range rows {
			out[i] = storage.Entry{Node: r.node(), Props: props[r.ID]}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readDir returns up to limit children of a folder, in name order,
// starting after the name after.
func readDir(ctx context.Context, tx pgx.Tx, spaceID, folderID, after string, limit int) ([]nodeRow, error) {
	f, err := nodeIn(ctx, tx, spaceID, folderID)
	if err != nil {
		return nil, err
	}
	if !f.isFolder() {
		return nil, storage.NotAFolder(folderID)
	}
	var max *int // NULL: LIMIT ALL
	if limit > 0 {
		max = &limit
	}
	return listNodes(ctx, tx, `SELECT `+listColumns+` FROM nodes
		WHERE parent_id = $1 AND name > $2 ORDER BY name LIMIT $3`, folderID, after, max)
}

// Walk resolves a path below a node in one snapshot. It returns the node
// nodeID of the space, then the child called names[0] of it, the child
// called names[1] of that, and so on: it stops, without an error, before
// the first name that does not exist or whose parent is a file. A missing
// node nodeID is ErrNotFound, an invalid name looked up ErrInvalid.
func (s *Store) Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error) {
	var nodes []storage.Node
	err := s.read(ctx, func(tx pgx.Tx) error {
		r, err := nodeIn(ctx, tx, spaceID, nodeID)
		if err != nil {
			return err
		}
		nodes = make([]storage.Node, 0, len(names)+1)
		nodes = append(nodes, r.node())
		for _, name := range names {
			if !r.isFolder() {
				return nil
			}
			if err := validName(name); err != nil {
				return fmt.Errorf("walk: %w", err)
			}
			c, ok, err := child(ctx, tx, r.ID, name)
			if err != nil || !ok {
				return err
			}
			r = c
			nodes = append(nodes, r.node())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return nodes, nil
}
