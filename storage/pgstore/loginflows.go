package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.LoginFlows = (*Store)(nil)

// loginFlowSchema keeps the open login flows (storage.LoginFlows), one row
// each, which every node reads: the browser's grant by the login key, the
// client's poll by the poll key, the sweep by expiry. user_id and sealed
// are NULL until the grant.
const loginFlowSchema = `
CREATE TABLE IF NOT EXISTS login_flows (
	login_key   text PRIMARY KEY,
	poll_key    text NOT NULL UNIQUE,
	client      text NOT NULL,
	created     timestamptz NOT NULL,
	expires     timestamptz NOT NULL,
	poll_public bytea NOT NULL,
	user_id     text,
	sealed      bytea
);
CREATE INDEX IF NOT EXISTS login_flows_expires ON login_flows (expires);
`

const loginFlowColumns = `login_key, poll_key, client, created, expires, poll_public, user_id, sealed`

// loginFlowsLock serializes creations, so that the count of open flows
// never passes the cap however many nodes create at once.
const loginFlowsLock = `SELECT pg_advisory_xact_lock(hashtextextended('login_flows', 0))`

// CreateLoginFlow keeps f (storage.LoginFlows).
func (s *Store) CreateLoginFlow(ctx context.Context, f storage.LoginFlow) error {
	if err := storage.ValidLoginFlow(f); err != nil {
		return fmt.Errorf("create login flow: %w", err)
	}
	pool, err := s.db()
	if err != nil {
		return fmt.Errorf("create login flow: %w", err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, loginFlowsLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM login_flows WHERE login_key IN
			(SELECT login_key FROM login_flows WHERE expires <= $1 ORDER BY expires LIMIT $2)`,
			f.Created, storage.LoginFlowSweep); err != nil {
			return err
		}
		var open int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM login_flows`).Scan(&open); err != nil {
			return err
		}
		if open >= storage.MaxLoginFlows {
			return storage.LoginFlowCapReached()
		}
		return execOne(ctx, tx, fmt.Errorf("login flow key: %w", storage.ErrExists),
			`INSERT INTO login_flows (login_key, poll_key, client, created, expires, poll_public)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			f.LoginKey, f.PollKey, f.Client, f.Created, f.Expires, f.PollPublic)
	})
	if err != nil {
		return fmt.Errorf("create login flow: %w", err)
	}
	return nil
}

// LoginFlow returns the open flow of loginKey (storage.LoginFlows).
func (s *Store) LoginFlow(ctx context.Context, loginKey string, now time.Time) (storage.LoginFlow, error) {
	pool, err := s.db()
	if err != nil {
		return storage.LoginFlow{}, fmt.Errorf("login flow: %w", err)
	}
	rows, err := pool.Query(ctx, `SELECT `+loginFlowColumns+` FROM login_flows WHERE login_key = $1 AND expires > $2`, loginKey, now)
	if err != nil {
		return storage.LoginFlow{}, fmt.Errorf("login flow: %w", err)
	}
	return oneLoginFlow(rows)
}

// GrantLoginFlow grants the open flow of loginKey (storage.LoginFlows):
// the update sets a grant only where there is none, so that of two
// grants one wins.
func (s *Store) GrantLoginFlow(ctx context.Context, loginKey, user string, sealed []byte, now time.Time) error {
	if err := storage.ValidLoginFlowGrant(user, sealed); err != nil {
		return fmt.Errorf("grant login flow: %w", err)
	}
	pool, err := s.db()
	if err != nil {
		return fmt.Errorf("grant login flow: %w", err)
	}
	tag, err := pool.Exec(ctx, `UPDATE login_flows SET user_id = $2, sealed = $3
		WHERE login_key = $1 AND expires > $4 AND user_id IS NULL`, loginKey, user, sealed, now)
	if err != nil {
		return fmt.Errorf("grant login flow: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	if _, err := s.LoginFlow(ctx, loginKey, now); err != nil {
		return err
	}
	return storage.LoginFlowGranted()
}

// DeleteLoginFlow ends the flow of loginKey (storage.LoginFlows).
func (s *Store) DeleteLoginFlow(ctx context.Context, loginKey string) error {
	pool, err := s.db()
	if err != nil {
		return fmt.Errorf("delete login flow: %w", err)
	}
	tag, err := pool.Exec(ctx, `DELETE FROM login_flows WHERE login_key = $1`, loginKey)
	if err != nil {
		return fmt.Errorf("delete login flow: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return storage.LoginFlowNotFound()
	}
	return nil
}

// TakeLoginFlow takes the granted flow of pollKey (storage.LoginFlows): one
// DELETE … RETURNING, which of concurrent takes one alone gets a row of.
func (s *Store) TakeLoginFlow(ctx context.Context, pollKey string, now time.Time) (storage.LoginFlow, error) {
	pool, err := s.db()
	if err != nil {
		return storage.LoginFlow{}, fmt.Errorf("take login flow: %w", err)
	}
	rows, err := pool.Query(ctx, `DELETE FROM login_flows
		WHERE poll_key = $1 AND expires > $2 AND user_id IS NOT NULL
		RETURNING `+loginFlowColumns, pollKey, now)
	if err != nil {
		return storage.LoginFlow{}, fmt.Errorf("take login flow: %w", err)
	}
	return oneLoginFlow(rows)
}

func oneLoginFlow(rows pgx.Rows) (storage.LoginFlow, error) {
	f, err := pgx.CollectExactlyOneRow(rows, scanLoginFlow)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return storage.LoginFlow{}, storage.LoginFlowNotFound()
	case err != nil:
		return storage.LoginFlow{}, fmt.Errorf("login flow: %w", err)
	}
	return f, nil
}

func scanLoginFlow(row pgx.CollectableRow) (storage.LoginFlow, error) {
	var (
		f    storage.LoginFlow
		user *string
	)
	err := row.Scan(&f.LoginKey, &f.PollKey, &f.Client, &f.Created, &f.Expires, &f.PollPublic, &user, &f.Sealed)
	if user != nil {
		f.User = *user
	}
	return f, err
}
