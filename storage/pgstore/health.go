package pgstore

import (
	"context"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.HealthChecker = (*Store)(nil)

// Health asks the database and the bucket one cheap question each, within
// ctx: a node whose backends are stalled or down says so (status.php's
// maintenance, the load balancer's health check). Taking a connection
// from the pool is part of the question: a pool that no request gives
// back is a stalled node too.
func (s *Store) Health(ctx context.Context) error {
	pool, err := s.db()
	if err != nil {
		return err
	}
	var one int
	if err := pool.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("database: %w", classify(err))
	}
	if err := s.objects.Probe(ctx); err != nil {
		return fmt.Errorf("bucket: %w", err)
	}
	return nil
}
