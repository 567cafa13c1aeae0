package pgstore

import (
	"context"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

// Open returns the content of a file and the node as of that content: one
// read of the node's row names both, and objects never change, so the
// node's size, etag and checksums describe exactly the bytes read even
// while the file is replaced. A replaced object stays readable for
// ObjectGrace. The content is a storage.Prefetcher and asks the bucket for
// nothing until it is read or prefetched: a HEAD or a 304 costs no request,
// and a range is fetched once, from its start.
func (s *Store) Open(ctx context.Context, spaceID, nodeID string) (storage.Node, storage.Content, error) {
	pool, err := s.db()
	if err != nil {
		return storage.Node{}, nil, fmt.Errorf("open: %w", err)
	}
	r, err := nodeIn(ctx, pool, spaceID, nodeID)
	if err != nil {
		return storage.Node{}, nil, fmt.Errorf("open: %w", classify(err))
	}
	if r.isFolder() {
		return storage.Node{}, nil, storage.IsAFolder(nodeID)
	}
	return r.node(), s.objects.NewReader(ctx, r.Content), nil
}
