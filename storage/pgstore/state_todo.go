package pgstore

// Stubs of the lock, session and chunk methods not written yet; each goes
// when its real implementation lands.

import (
	"context"
	"io"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// sweepLoop removes expired sessions and chunked uploads and the objects
// due in object_sweep, every sweepEvery, until Close.
func (s *Store) sweepLoop() {
	defer close(s.sweepDone)
	<-s.closing
}

func (s *Store) CreateSession(ctx context.Context, us storage.UploadSession) (storage.UploadSession, error) {
	return storage.UploadSession{}, errTODO
}
func (s *Store) Session(ctx context.Context, id string) (storage.UploadSession, error) {
	return storage.UploadSession{}, errTODO
}
func (s *Store) AppendSession(ctx context.Context, id string, offset int64, r io.Reader, check *checksum.Expected) (storage.UploadSession, error) {
	return storage.UploadSession{}, errTODO
}
func (s *Store) CompleteSession(ctx context.Context, id string, locks *storage.LockTokens, modTime time.Time) (storage.Node, bool, error) {
	return storage.Node{}, false, errTODO
}
func (s *Store) RemoveSession(ctx context.Context, id string) error { return errTODO }

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
