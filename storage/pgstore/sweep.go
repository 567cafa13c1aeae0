package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// The sweep runs on every node. Each pass takes its rows with FOR UPDATE
// SKIP LOCKED, in batches: two nodes sweeping at once take different rows
// instead of waiting for or fighting over the same, and a session or
// upload a request holds is left for the next pass.

// sweepBatch bounds the rows one transaction of the sweep takes.
const sweepBatch = 100

// sweepLoop removes expired sessions and chunked uploads and the objects
// due in object_sweep, every sweepEvery, until Close.
func (s *Store) sweepLoop() {
	defer s.loops.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.closing
		cancel()
	}()
	storage.SweepEvery(s.closing, s.sweepEvery, func() {
		if !s.reached.Load() {
			return
		}
		if err := s.sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("sweep", zap.Error(err))
		}
	})
}

// sweep makes one pass: expired trash, versions, sessions and chunked
// uploads first, so that the objects they release are due in a later
// pass, then the objects due now. It reports what it removed, whether it
// failed or not.
func (s *Store) sweep(ctx context.Context) error {
	var r storage.SweepReport
	err := s.sweepSteps(ctx, &r)
	r.Failed = r.Failed || err != nil
	s.Report(r)
	return err
}

// sweepSteps makes the pass of sweep, counting into r what it removes.
func (s *Store) sweepSteps(ctx context.Context, r *storage.SweepReport) error {
	// A failed expiry (a space's lock held long, an outage) must not keep
	// the objects and uploads already due from going.
	n, err := s.ExpireUndo(ctx)
	r.Undo = n
	if err != nil && ctx.Err() == nil {
		r.Failed = true
		s.log.Warn("sweep: trash and versions", zap.Error(err))
	}
	steps := []struct {
		what    string
		run     func(context.Context) (int, error)
		removed *int
	}{
		{"expired upload sessions", s.sweepSessions, &r.UploadSessions},
		{"expired chunked uploads", s.sweepChunkedUploads, &r.ChunkedUploads},
		{"objects", s.sweepObjects, &r.Content},
		{"expired attempts", s.sweepAttempts, new(int)},
	}
	for _, step := range steps {
		if err := drain(ctx, step.run, step.removed); err != nil {
			return fmt.Errorf("%s: %w", step.what, err)
		}
	}
	if err := s.sweepIncompleteUploads(ctx); err != nil {
		return fmt.Errorf("incomplete multipart uploads: %w", err)
	}
	return nil
}

// drain runs batch until it takes less than a whole batch, adding what
// each took to taken.
func drain(ctx context.Context, batch func(context.Context) (int, error), taken *int) error {
	for {
		n, err := batch(ctx)
		*taken += n
		if err != nil || n < sweepBatch {
			return err
		}
	}
}

// sweepSessions ends a batch of expired sessions and releases their parts.
func (s *Store) sweepSessions(ctx context.Context) (int, error) {
	return sweepRows(ctx, s, s.release, `
		DELETE FROM upload_sessions WHERE id IN (
			SELECT id FROM upload_sessions WHERE expires_ns <= $1
			LIMIT $2 FOR UPDATE SKIP LOCKED)
		RETURNING parts`, s.now().UnixNano(), sweepBatch)
}

// sweepRows ends with end, in one transaction, each of the rows query
// selects and holds (a batch of expired ones, one value a row), and
// counts them.
func sweepRows[T any](ctx context.Context, s *Store, end func(context.Context, pgx.Tx, T) error, query string, args ...any) (int, error) {
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		ended, err := pgx.CollectRows(rows, pgx.RowTo[T])
		if err != nil {
			return err
		}
		n = len(ended)
		for _, r := range ended {
			if err := end(ctx, tx, r); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// sweepChunkedUploads ends a batch of expired chunked uploads and releases
// their parts.
func (s *Store) sweepChunkedUploads(ctx context.Context) (int, error) {
	drop := func(ctx context.Context, tx pgx.Tx, id []byte) error { return s.dropChunkedUpload(ctx, tx, string(id)) }
	return sweepRows(ctx, s, drop, `
		SELECT id FROM chunked_uploads WHERE expires_ns <= $1
		LIMIT $2 FOR UPDATE SKIP LOCKED`, s.now().UnixNano(), sweepBatch)
}

// sweepObjects deletes a batch of due objects from the bucket and then
// their rows, holding the rows meanwhile so that no other node takes them.
// An object a node's content references after all (a commit that did not
// adopt what it took over) is kept: only its row goes.
func (s *Store) sweepObjects(ctx context.Context) (int, error) {
	var n int
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT key, written, EXISTS (
				SELECT 1 FROM nodes WHERE content @> jsonb_build_array(jsonb_build_object('k', object_sweep.key))
			) OR EXISTS (
				SELECT 1 FROM versions WHERE content @> jsonb_build_array(jsonb_build_object('k', object_sweep.key))
			) FROM object_sweep WHERE sweep_after <= $1
			ORDER BY sweep_after LIMIT $2 FOR UPDATE OF object_sweep SKIP LOCKED`, s.dbNow(), sweepBatch)
		if err != nil {
			return err
		}
		var keys, unreferenced, unfinished []string
		var key string
		var written, referenced bool
		_, err = pgx.ForEachRow(rows, []any{&key, &written, &referenced}, func() error {
			keys = append(keys, key)
			if !referenced {
				unreferenced = append(unreferenced, key)
			}
			if !referenced && written {
				unfinished = append(unfinished, key)
			}
			return nil
		})
		if err != nil || len(keys) == 0 {
			return err
		}
		n = len(keys)
		if len(unreferenced) > 0 {
			if err := s.objects.Remove(ctx, unreferenced...); err != nil {
				return err
			}
		}
		if err := s.abortUnfinished(ctx, unfinished); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM object_sweep WHERE key = ANY($1)`, keys)
		return err
	})
	return n, err
}

// abortUnfinished aborts the multipart uploads of objects whose writer
// never finished them (a node killed mid-PUT): their sweep rows are due,
// so the writer has had UploadGrace. Each key is listed on its own, since
// some servers (MinIO) list the uploads of one exact key only.
func (s *Store) abortUnfinished(ctx context.Context, keys []string) error {
	for _, key := range keys {
		uploads, err := s.objects.ListIncomplete(ctx, key, farFuture)
		if err != nil {
			return err
		}
		for _, u := range uploads {
			if u.Key != key {
				continue // a longer key with key as its prefix
			}
			if err := s.objects.AbortIncomplete(ctx, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// farFuture is a cutoff that every upload started before.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// sweepIncompleteUploads aborts the multipart uploads under the store's
// prefixes that are older than UploadGrace, including those of objects
// whose sweep row is lost. Servers that list uploads by prefix (S3) find
// them here; those that do not (MinIO) leave it to abortUnfinished.
func (s *Store) sweepIncompleteUploads(ctx context.Context) error {
	cutoff := s.now().Add(-s.uploadGrace)
	for _, prefix := range []string{prefixFile, prefixSession, prefixChunk} {
		uploads, err := s.objects.ListIncomplete(ctx, prefix, cutoff)
		if err != nil {
			return err
		}
		for _, u := range uploads {
			if err := s.objects.AbortIncomplete(ctx, u); err != nil {
				return err
			}
		}
	}
	return nil
}
