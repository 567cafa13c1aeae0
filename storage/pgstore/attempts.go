package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.AttemptBudgets = (*Store)(nil)

// The budgets of attempts (storage.AttemptBudgets): one row per key with
// the times of its attempts within the window, oldest first, which every
// node shares. A take is one statement that prunes, counts and appends
// under the row's lock, so concurrent takes on any number of nodes never
// take more than the limit. granted is whether the row's last take took
// an attempt; expires is when its last attempt leaves the window, after
// which the sweep deletes the row: the table holds the keys that made an
// attempt within the last window, each with at most
// storage.MaxAttemptLimit times.
const attemptSchema = `
CREATE TABLE IF NOT EXISTS attempts (
	key     text PRIMARY KEY,
	taken   timestamptz[] NOT NULL,
	granted boolean NOT NULL,
	expires timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_expires ON attempts (expires);
`

// takeAttempt is TakeAttempt's statement: $1 the key, $2 now, $3 the
// limit, $4 the window in microseconds. It returns whether an attempt
// was taken and the key's attempts within the window after it.
const takeAttempt = `
INSERT INTO attempts AS a (key, taken, granted, expires)
VALUES ($1, ARRAY[$2::timestamptz], true, $2::timestamptz + $4 * interval '1 microsecond')
ON CONFLICT (key) DO UPDATE SET (taken, granted, expires) = (
	SELECT CASE WHEN cardinality(k.kept) < $3 THEN k.kept || $2::timestamptz ELSE k.kept END,
		cardinality(k.kept) < $3,
		CASE WHEN cardinality(k.kept) < $3
			THEN greatest(a.expires, $2::timestamptz + $4 * interval '1 microsecond')
			ELSE a.expires END
	FROM (SELECT ARRAY(
		SELECT t FROM unnest(a.taken) AS t
		WHERE t > $2::timestamptz - $4 * interval '1 microsecond' ORDER BY t) AS kept) AS k)
RETURNING granted, taken`

// AttemptWait is how long key has no attempt left (storage.AttemptBudgets).
func (s *Store) AttemptWait(ctx context.Context, key string, b storage.AttemptBudget, now time.Time) (time.Duration, error) {
	pool, err := s.attemptsDB(key, b)
	if err != nil {
		return 0, fmt.Errorf("attempt wait: %w", err)
	}
	var taken []time.Time
	err = pool.QueryRow(ctx, `SELECT taken FROM attempts WHERE key = $1`, key).Scan(&taken)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("attempt wait: %w", err)
	}
	return storage.AttemptWaitOf(storage.RecentAttempts(taken, b, now), b, now), nil
}

// TakeAttempt takes one of key's attempts (storage.AttemptBudgets).
func (s *Store) TakeAttempt(ctx context.Context, key string, b storage.AttemptBudget, now time.Time) (bool, time.Duration, error) {
	pool, err := s.attemptsDB(key, b)
	if err != nil {
		return false, 0, fmt.Errorf("take attempt: %w", err)
	}
	var (
		granted bool
		recent  []time.Time
	)
	err = pool.QueryRow(ctx, takeAttempt, key, now, b.Limit, b.Window.Microseconds()).Scan(&granted, &recent)
	if err != nil {
		return false, 0, fmt.Errorf("take attempt: %w", err)
	}
	if granted {
		return true, 0, nil
	}
	return false, storage.AttemptWaitOf(recent, b, now), nil
}

// ReturnAttempt gives back the attempt of key taken at taken
// (storage.AttemptBudgets): one time equal to it leaves the row.
func (s *Store) ReturnAttempt(ctx context.Context, key string, taken time.Time) error {
	pool, err := s.attemptsDB(key, storage.AttemptBudget{Limit: 1, Window: 1})
	if err != nil {
		return fmt.Errorf("return attempt: %w", err)
	}
	_, err = pool.Exec(ctx, `
		UPDATE attempts SET taken = taken[:array_position(taken, $2::timestamptz) - 1]
			|| taken[array_position(taken, $2::timestamptz) + 1:]
		WHERE key = $1 AND $2::timestamptz = ANY (taken)`, key, taken)
	if err != nil {
		return fmt.Errorf("return attempt: %w", err)
	}
	return nil
}

// attemptsDB checks a call's key and budget and returns the pool.
func (s *Store) attemptsDB(key string, b storage.AttemptBudget) (*pgxpool.Pool, error) {
	if err := storage.ValidAttempt(key, b); err != nil {
		return nil, err
	}
	return s.db()
}

// sweepAttempts deletes a batch of the keys whose attempts all left their
// window.
func (s *Store) sweepAttempts(ctx context.Context) (int, error) {
	pool, err := s.db()
	if err != nil {
		return 0, err
	}
	tag, err := pool.Exec(ctx, `
		DELETE FROM attempts WHERE key IN (
			SELECT key FROM attempts WHERE expires <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, s.now(), sweepBatch)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}
