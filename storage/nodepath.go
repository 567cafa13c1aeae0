package storage

import (
	"context"
	"fmt"
	"slices"
)

// MaxNodeDepth bounds a walk from a node up to its space's root: a tree
// deeper than this is damaged, not used.
const MaxNodeDepth = 4096

// NodeReader reads one node of a space.
type NodeReader interface {
	Node(ctx context.Context, spaceID, id string) (Node, error)
}

// NodeNames returns the names from below node top (the space's root when
// top is "") down to n, n's own included, walking up one lookup a folder:
// nil for top (or the root) itself.
func NodeNames(ctx context.Context, r NodeReader, n Node, top string) ([]string, error) {
	var names []string
	for n.ParentID != "" && n.ID != top {
		if len(names) == MaxNodeDepth {
			return nil, fmt.Errorf("the path of node %s: deeper than %d folders", n.ID, MaxNodeDepth)
		}
		names = append(names, n.Name)
		parent, err := r.Node(ctx, n.SpaceID, n.ParentID)
		if err != nil {
			return nil, fmt.Errorf("the path of node %s: %w", n.ID, err)
		}
		n = parent
	}
	slices.Reverse(names)
	return names, nil
}
