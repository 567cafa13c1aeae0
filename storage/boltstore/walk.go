package boltstore

import (
	"context"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

// Walk resolves a path below a node in one snapshot, where a lookup per
// segment would take a read transaction each. It returns the node nodeID
// of the space, then the child called names[0] of it, the child called
// names[1] of that, and so on: it stops, without an error, before the
// first name that does not exist or whose parent is a file. A missing
// node nodeID is ErrNotFound, an invalid name looked up ErrInvalid.
func (s *Store) Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var nodes []storage.Node
	err := s.view(func(t *txn) error {
		r, err := t.nodeIn(spaceID, nodeID)
		if err != nil {
			return err
		}
		nodes = make([]storage.Node, 0, len(names)+1)
		nodes = append(nodes, r.Node)
		for _, name := range names {
			if !r.IsFolder() {
				return nil
			}
			if err := storage.ValidName(name, nil); err != nil {
				return fmt.Errorf("walk: %w", err)
			}
			child, ok, err := t.child(r.ID, name)
			if err != nil || !ok {
				return err
			}
			r = child
			nodes = append(nodes, r.Node)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return nodes, nil
}
