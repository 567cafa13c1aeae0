package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.OpenUploadCounter = (*Store)(nil)

// CountOpenUploads counts the upload sessions and chunked uploads in one
// snapshot.
func (s *Store) CountOpenUploads(ctx context.Context, kindOf func(string) string) (storage.OpenUploads, error) {
	open := storage.OpenUploads{Chunked: map[string]int{}}
	err := s.read(ctx, func(tx pgx.Tx) error {
		clear(open.Chunked)
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM upload_sessions`).Scan(&open.Sessions); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id FROM chunked_uploads`)
		if err != nil {
			return err
		}
		var id []byte
		_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
			open.Chunked[kindOf(string(id))]++
			return nil
		})
		return err
	})
	return open, err
}
