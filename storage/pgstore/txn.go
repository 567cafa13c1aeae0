package pgstore

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// change is one transaction changing a space's tree, holding the space's
// row lock: its time, and the tag that makes the etags of the nodes it
// changes fresh.
type change struct {
	tx  pgx.Tx
	now time.Time
	tag string
}

// change runs fn as one change of the space's tree. A retried attempt gets
// a new time and tag.
func (s *Store) change(ctx context.Context, spaceID string, fn func(*change) error) error {
	return s.inSpace(ctx, spaceID, func(tx pgx.Tx) error {
		return fn(&change{tx: tx, now: s.now().UTC(), tag: uuid.NewString()})
	})
}

// changeIn is a change in tx, which holds the space's row lock already.
func (s *Store) changeIn(tx pgx.Tx) *change {
	return &change{tx: tx, now: s.now().UTC(), tag: uuid.NewString()}
}

// etag is the etag node id gets in this change: distinct for every node
// and every change, and the same for a node changed twice in one change.
func (c *change) etag(id string) string {
	sum := md5.Sum([]byte(id + ":" + c.tag))
	return hex.EncodeToString(sum[:])
}

// propagate adds delta to the size of folder parentID and of each of its
// ancestors, and gives each a fresh etag and, unless it is later already,
// the change's time as modification time: one statement, however deep.
func (c *change) propagate(ctx context.Context, parentID string, delta int64) error {
	_, err := c.tx.Exec(ctx, `
		WITH RECURSIVE up AS (
			SELECT id, parent_id FROM nodes WHERE id = $1
			UNION ALL
			SELECT n.id, n.parent_id FROM nodes n JOIN up ON n.id = up.parent_id
		)
		UPDATE nodes SET size = nodes.size + $2, mtime = greatest(nodes.mtime, $3),
			etag = md5(nodes.id || ':' || $4::text)
		FROM up WHERE nodes.id = up.id`, parentID, delta, c.now, c.tag)
	if err != nil {
		return fmt.Errorf("propagating to the ancestors of %s: %w", parentID, err)
	}
	return nil
}

// tx runs fn in a read-committed transaction and commits it, retrying the
// whole of it when PostgreSQL aborts it for a serialisation failure or a
// deadlock.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.run(ctx, pgx.TxOptions{}, fn)
}

// read runs fn in a read-only transaction that sees one snapshot of the
// whole database, for answers that must agree with themselves (a listing
// page and its properties).
func (s *Store) read(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.run(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// readRows collects with scan the rows query selects, in one read-only
// snapshot (read).
func readRows[T any](ctx context.Context, s *Store, scan pgx.RowToFunc[T], query string, args ...any) ([]T, error) {
	var found []T
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, query, args...)
		var err error
		found, err = pgx.CollectRows(rows, scan)
		return err
	})
	return found, err
}

// execOne runs statement, which changes one row at most: none when it
// changes no row (the row was not there, or the insert met a conflict).
func execOne(ctx context.Context, tx pgx.Tx, none error, statement string, args ...any) error {
	tag, err := tx.Exec(ctx, statement, args...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return none
	}
	return nil
}

// mapRows converts each of rows with to, in their order: the rows a
// query read into the values the store answers with.
func mapRows[R, T any](rows []R, to func(R) T) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = to(r)
	}
	return out
}

// oneRow collects with scan the one row query selects; notFound when
// there is none.
func oneRow[T any](ctx context.Context, q querier, scan pgx.RowToFunc[T], notFound error, query string, args ...any) (T, error) {
	rows, _ := q.Query(ctx, query, args...)
	r, err := pgx.CollectExactlyOneRow(rows, scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, notFound
	}
	return r, err
}

// queryRows collects with scan the rows query selects, in one statement
// outside any transaction.
func queryRows[T any](ctx context.Context, s *Store, scan pgx.RowToFunc[T], query string, args ...any) ([]T, error) {
	pool, err := s.db()
	if err != nil {
		return nil, err
	}
	rows, _ := pool.Query(ctx, query, args...)
	return pgx.CollectRows(rows, scan)
}

// inSpace runs fn in a transaction holding the space's row lock: every
// change of a space's tree, locks or quota goes through it. ErrNotFound
// when the space does not exist.
func (s *Store) inSpace(ctx context.Context, spaceID string, fn func(pgx.Tx) error) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM spaces WHERE id = $1 AND type <> 'trash' FOR UPDATE`, spaceID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.SpaceNotFound(spaceID)
		}
		if err != nil {
			return err
		}
		return fn(tx)
	})
}

// maxAttempts bounds the retries of a transaction PostgreSQL aborted.
const maxAttempts = 5

func (s *Store) run(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	pool, err := s.db()
	if err != nil {
		return err
	}
	if opts.AccessMode == pgx.ReadOnly {
		return runTx(ctx, pool, opts, fn)
	}
	var attempts []pgx.Tx
	defer func() { s.settlePurges(ctx, attempts, err == nil) }()
	attempt := func(tx pgx.Tx) error {
		attempts = append(attempts, tx)
		return fn(tx)
	}
	if !s.countWrites {
		err = runTx(ctx, pool, opts, attempt)
		return err
	}
	var written int64
	err = runTx(ctx, pool, opts, func(tx pgx.Tx) error {
		before, err := rowsWritten(ctx, tx)
		if err != nil {
			return err
		}
		if err := attempt(tx); err != nil {
			return err
		}
		after, err := rowsWritten(ctx, tx)
		written = after - before
		return err
	})
	if err == nil {
		s.written.Add(written)
		s.commits.Add(1)
	}
	return err
}

// rowsWritten is what pg_stat_xact_user_tables counts of rows inserted,
// updated and deleted. Besides the transaction's own, it may hold those
// of the connection's earlier transactions that the server has not yet
// folded into its statistics, so only a difference taken within one
// transaction tells what it wrote.
func rowsWritten(ctx context.Context, tx pgx.Tx) (int64, error) {
	var n int64
	err := tx.QueryRow(ctx, `SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::bigint
		FROM pg_stat_xact_user_tables`).Scan(&n)
	return n, err
}

// RecordsWritten is how many rows the committed transactions of the store
// inserted, updated or deleted (storetest.WriteCounter), cascades
// included, as PostgreSQL counts them; 0 unless Options.CountWrites.
func (s *Store) RecordsWritten() int64 { return s.written.Load() }

// runTx is run on pool, reached or not.
func runTx(ctx context.Context, pool *pgxpool.Pool, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	var err error
	for range maxAttempts {
		err = pgx.BeginTxFunc(ctx, pool, opts, fn)
		if !retryable(err) {
			break
		}
	}
	return classify(err)
}

// retryable reports a transaction aborted only because of a concurrent one.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// classify makes a database that cannot be reached a storage.ErrUnavailable
// (answered 503, retry later) and leaves storage errors as they are.
func classify(err error) error {
	if err == nil || errors.Is(err, storage.ErrUnavailable) {
		return err
	}
	if unreachable(err) {
		return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
	}
	return err
}

func unreachable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exceptions; 57P01-03: shutting down or
		// starting up; 53300: too many connections.
		return pgErr.Code[:2] == "08" || pgErr.Code == "57P01" || pgErr.Code == "57P02" ||
			pgErr.Code == "57P03" || pgErr.Code == "53300"
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, net.ErrClosed)
}
