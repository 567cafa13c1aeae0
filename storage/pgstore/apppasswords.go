package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.AppPasswords = (*Store)(nil)

// appPasswordSchema keeps app passwords (storage.AppPasswords), one row
// each, which every node reads: a check reads its row by id, a user's
// list by the user index. Expires and last_used are NULL for never.
const appPasswordSchema = `
CREATE TABLE IF NOT EXISTS app_passwords (
	id        text PRIMARY KEY,
	user_id   text NOT NULL,
	label     text NOT NULL,
	hash      bytea NOT NULL,
	created   timestamptz NOT NULL,
	expires   timestamptz,
	last_used timestamptz,
	space_id  text NOT NULL DEFAULT '',
	path      text NOT NULL DEFAULT '',
	read_only boolean NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS app_passwords_user ON app_passwords (user_id, created);
`

const appPasswordColumns = `id, user_id, label, hash, created, expires, last_used, space_id, path, read_only`

// CreateAppPassword keeps p (storage.AppPasswords). The user's rows are
// counted under a transaction lock of the user, so that concurrent
// creations on any number of nodes never pass the cap.
func (s *Store) CreateAppPassword(ctx context.Context, p storage.AppPassword) error {
	if err := storage.ValidAppPassword(p); err != nil {
		return fmt.Errorf("create app password: %w", err)
	}
	pool, err := s.db()
	if err != nil {
		return fmt.Errorf("create app password: %w", err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('app_passwords ' || $1, 0))`, p.User); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM app_passwords WHERE user_id = $1 AND expires <= $2`, p.User, p.Created); err != nil {
			return err
		}
		var kept int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM app_passwords WHERE user_id = $1`, p.User).Scan(&kept); err != nil {
			return err
		}
		if kept >= storage.MaxAppPasswordsPerUser {
			return storage.AppPasswordCapReached()
		}
		return execOne(ctx, tx, fmt.Errorf("app password id: %w", storage.ErrExists), `INSERT INTO app_passwords (`+appPasswordColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
			p.ID, p.User, p.Label, p.Hash, p.Created, nullTime(p.Expires), nullTime(p.LastUsed), p.Space, p.Path, p.ReadOnly)
	})
	if err != nil {
		return fmt.Errorf("create app password: %w", err)
	}
	return nil
}

// AppPasswords returns user's passwords (storage.AppPasswords).
func (s *Store) AppPasswords(ctx context.Context, user string) ([]storage.AppPassword, error) {
	list, err := queryRows(ctx, s, scanAppPassword, `SELECT `+appPasswordColumns+` FROM app_passwords WHERE user_id = $1`, user)
	if err != nil {
		return nil, fmt.Errorf("app passwords: %w", err)
	}
	storage.SortAppPasswords(list)
	return list, nil
}

// AppPassword returns the password of id (storage.AppPasswords).
func (s *Store) AppPassword(ctx context.Context, id string) (storage.AppPassword, error) {
	pool, err := s.db()
	if err != nil {
		return storage.AppPassword{}, fmt.Errorf("app password: %w", err)
	}
	rows, err := pool.Query(ctx, `SELECT `+appPasswordColumns+` FROM app_passwords WHERE id = $1`, id)
	if err != nil {
		return storage.AppPassword{}, fmt.Errorf("app password: %w", err)
	}
	p, err := pgx.CollectExactlyOneRow(rows, scanAppPassword)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return storage.AppPassword{}, storage.AppPasswordNotFound()
	case err != nil:
		return storage.AppPassword{}, fmt.Errorf("app password: %w", err)
	}
	return p, nil
}

// DeleteAppPassword forgets user's password id (storage.AppPasswords).
func (s *Store) DeleteAppPassword(ctx context.Context, user, id string) error {
	pool, err := s.db()
	if err != nil {
		return fmt.Errorf("delete app password: %w", err)
	}
	tag, err := pool.Exec(ctx, `DELETE FROM app_passwords WHERE id = $1 AND user_id = $2`, id, user)
	if err != nil {
		return fmt.Errorf("delete app password: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return storage.AppPasswordNotFound()
	}
	return nil
}

// TouchAppPassword sets the LastUsed of id (storage.AppPasswords); the
// statement writes no row used within the interval.
func (s *Store) TouchAppPassword(ctx context.Context, id string, at time.Time) error {
	pool, err := s.db()
	if err != nil {
		return fmt.Errorf("touch app password: %w", err)
	}
	_, err = pool.Exec(ctx, `UPDATE app_passwords SET last_used = $2
		WHERE id = $1 AND (last_used IS NULL OR last_used <= $3)`,
		id, at, at.Add(-storage.AppPasswordTouchInterval))
	if err != nil {
		return fmt.Errorf("touch app password: %w", err)
	}
	return nil
}

func scanAppPassword(row pgx.CollectableRow) (storage.AppPassword, error) {
	var (
		p                 storage.AppPassword
		expires, lastUsed *time.Time
	)
	err := row.Scan(&p.ID, &p.User, &p.Label, &p.Hash, &p.Created, &expires, &lastUsed, &p.Space, &p.Path, &p.ReadOnly)
	if expires != nil {
		p.Expires = *expires
	}
	if lastUsed != nil {
		p.LastUsed = *lastUsed
	}
	return p, err
}
