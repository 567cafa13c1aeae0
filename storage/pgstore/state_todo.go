package pgstore

// The stub of the commit of objects already written, which pgcore
// provides with the node methods.

import (
	"context"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// commitContent commits segments, objects already written, as the
// content of the file c names, exactly as an Upload's commit does: pgcore
// provides it, adopting the segments' objects in its transaction.
func (s *Store) commitContent(ctx context.Context, spaceID string, segments []s3content.Segment, size int64, sums checksum.Sums, c storage.Commit) (storage.Node, bool, error) {
	return storage.Node{}, false, errTODO
}
