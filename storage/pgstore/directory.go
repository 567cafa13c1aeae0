package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// storage.Directory is implemented here.
var _ storage.Directory = (*Store)(nil)

// directorySchema adds the directory to the schema, a step of its own
// after schema.sql (migrate). Searches compare the folded columns, which
// hold storage.FoldDirectoryText of their fields, with strpos: the same
// matching as the embedded store's, whatever the database's locale, and no
// pattern characters to escape. A search of users reads every row, which
// stays quick at the sizes of a directory; one of groups reads each
// distinct group once.
const directorySchema = `
CREATE TABLE IF NOT EXISTS directory (
	id           text COLLATE "C" PRIMARY KEY,
	display_name text NOT NULL,
	email        text NOT NULL,
	groups       text[] NOT NULL DEFAULT '{}', -- as given
	seen         timestamptz,                  -- NULL: the zero time
	id_folded    text NOT NULL,
	name_folded  text NOT NULL,
	email_folded text NOT NULL
);
CREATE TABLE IF NOT EXISTS directory_groups (
	name    text COLLATE "C" NOT NULL,
	user_id text COLLATE "C" NOT NULL REFERENCES directory (id) ON DELETE CASCADE,
	folded  text NOT NULL,
	PRIMARY KEY (name, user_id)
);
CREATE INDEX IF NOT EXISTS directory_groups_user ON directory_groups (user_id);
`

// RememberUser keeps e as the entry of e.ID (storage.Directory). The
// upsert comes first: it locks the user's row, so that concurrent writers
// of one user replace their groups one after the other.
func (s *Store) RememberUser(ctx context.Context, e storage.DirectoryEntry) error {
	if err := storage.CheckDirectoryEntry(e); err != nil {
		return fmt.Errorf("remember user: %w", err)
	}
	fold := storage.FoldDirectoryText
	groups := e.Groups
	if groups == nil {
		groups = []string{}
	}
	folded := make([]string, len(groups))
	for i, g := range groups {
		folded[i] = fold(g)
	}
	var seen *time.Time
	if !e.Seen.IsZero() {
		seen = &e.Seen
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `
			INSERT INTO directory (id, display_name, email, groups, seen, id_folded, name_folded, email_folded)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (id) DO UPDATE SET display_name = $2, email = $3, groups = $4, seen = $5,
				id_folded = $6, name_folded = $7, email_folded = $8`,
			e.ID, e.DisplayName, e.Email, groups, seen, fold(e.ID), fold(e.DisplayName), fold(e.Email))
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM directory_groups WHERE user_id = $1`, e.ID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			INSERT INTO directory_groups (name, user_id, folded)
			SELECT g.name, $1, g.folded FROM unnest($2::text[], $3::text[]) AS g (name, folded)
			ON CONFLICT DO NOTHING`, e.ID, groups, folded)
		return err
	})
	if err != nil {
		return fmt.Errorf("remember user %s: %w", e.ID, err)
	}
	return nil
}

// directoryColumns are the columns directoryRow scans.
const directoryColumns = `id, display_name, email, groups, seen`

// directoryRow is a row of directory.
type directoryRow struct {
	ID          string     `db:"id"`
	DisplayName string     `db:"display_name"`
	Email       string     `db:"email"`
	Groups      []string   `db:"groups"`
	Seen        *time.Time `db:"seen"`
}

func (r directoryRow) entry() storage.DirectoryEntry {
	e := storage.DirectoryEntry{ID: r.ID, DisplayName: r.DisplayName, Email: r.Email}
	if len(r.Groups) > 0 {
		e.Groups = r.Groups
	}
	if r.Seen != nil {
		e.Seen = r.Seen.UTC()
	}
	return e
}

// DirectoryUser returns the entry of user id (storage.Directory).
func (s *Store) DirectoryUser(ctx context.Context, id string) (storage.DirectoryEntry, error) {
	pool, err := s.db()
	if err != nil {
		return storage.DirectoryEntry{}, fmt.Errorf("directory entry: %w", err)
	}
	rows, _ := pool.Query(ctx, `SELECT `+directoryColumns+` FROM directory WHERE id = $1`, id)
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[directoryRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.DirectoryEntry{}, fmt.Errorf("directory entry: user %.64q never signed in: %w", id, storage.ErrNotFound)
	}
	if err != nil {
		return storage.DirectoryEntry{}, fmt.Errorf("directory entry of %s: %w", id, classify(err))
	}
	return r.entry(), nil
}

// SearchUsers returns the users query finds, by id (storage.Directory).
func (s *Store) SearchUsers(ctx context.Context, query string, limit int) ([]storage.DirectoryEntry, error) {
	found, err := queryRows(ctx, s, pgx.RowToStructByName[directoryRow], `
		SELECT `+directoryColumns+` FROM directory
		WHERE strpos(id_folded, $1) > 0 OR strpos(name_folded, $1) > 0 OR strpos(email_folded, $1) > 0
		ORDER BY id LIMIT $2`, storage.FoldDirectoryText(query), storage.DirectoryLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("search users: %w", classify(err))
	}
	return mapRows(found, directoryRow.entry), nil
}

// SearchGroups returns the names of groups query finds (storage.Directory).
func (s *Store) SearchGroups(ctx context.Context, query string, limit int) ([]string, error) {
	// A skip scan of the primary key: one index probe per distinct group
	// rather than a row per member, as the embedded store seeks.
	groups, err := queryRows(ctx, s, pgx.RowTo[string], `
		WITH RECURSIVE distinct_groups AS (
			(SELECT name, folded FROM directory_groups ORDER BY name LIMIT 1)
			UNION ALL
			SELECT next.name, next.folded FROM distinct_groups AS g,
			LATERAL (SELECT name, folded FROM directory_groups WHERE name > g.name ORDER BY name LIMIT 1) AS next
		)
		SELECT name FROM distinct_groups WHERE strpos(folded, $1) > 0
		ORDER BY name LIMIT $2`, storage.FoldDirectoryText(query), storage.DirectoryLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("search groups: %w", classify(err))
	}
	return groups, nil
}
