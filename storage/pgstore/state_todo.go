package pgstore

// Stubs of the lock, session and chunk methods not written yet; each goes
// when its real implementation lands.

import (
	"context"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// sweepLoop removes expired sessions and chunked uploads and the objects
// due in object_sweep, every sweepEvery, until Close.
func (s *Store) sweepLoop() {
	defer close(s.sweepDone)
	<-s.closing
}

// commitContent commits segments, objects already written, as the
// content of the file c names, exactly as an Upload's commit does: pgcore
// provides it, adopting the segments' objects in its transaction.
func (s *Store) commitContent(ctx context.Context, spaceID string, segments []s3content.Segment, size int64, sums checksum.Sums, c storage.Commit) (storage.Node, bool, error) {
	return storage.Node{}, false, errTODO
}
