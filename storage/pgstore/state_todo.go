package pgstore

// Stubs of the lock, session and chunk methods not written yet; each goes
// when its real implementation lands.

import (
	"context"
	"io"

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

func (s *Store) CreateChunkedUpload(ctx context.Context, u storage.ChunkedUpload) (storage.ChunkedUpload, error) {
	return storage.ChunkedUpload{}, errTODO
}
func (s *Store) ChunkedUpload(ctx context.Context, id string) (storage.ChunkedUpload, error) {
	return storage.ChunkedUpload{}, errTODO
}
func (s *Store) PutChunk(ctx context.Context, id, name string, r io.Reader) (storage.Chunk, error) {
	return storage.Chunk{}, errTODO
}
func (s *Store) Chunks(ctx context.Context, id string) ([]storage.Chunk, error) { return nil, errTODO }
func (s *Store) ClaimChunkedUpload(ctx context.Context, id string) ([]storage.Chunk, error) {
	return nil, errTODO
}
func (s *Store) OpenChunk(ctx context.Context, id, name string) (io.ReadCloser, error) {
	return nil, errTODO
}
func (s *Store) RemoveChunk(ctx context.Context, id, name string) error   { return errTODO }
func (s *Store) RemoveChunkedUpload(ctx context.Context, id string) error { return errTODO }
