package boltstore

import (
	"context"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.OpenUploadCounter = (*Store)(nil)

// CountOpenUploads counts the upload sessions and chunked uploads in one
// read transaction.
func (s *Store) CountOpenUploads(_ context.Context, kindOf func(string) string) (storage.OpenUploads, error) {
	open := storage.OpenUploads{Chunked: map[string]int{}}
	err := s.view(func(t *txn) error {
		if err := t.sessions().ForEach(func(_, _ []byte) error {
			open.Sessions++
			return nil
		}); err != nil {
			return err
		}
		return t.chunkedUploads().ForEach(func(id, _ []byte) error {
			open.Chunked[kindOf(string(id))]++
			return nil
		})
	})
	return open, err
}
