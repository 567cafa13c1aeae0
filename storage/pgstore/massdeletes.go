package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.MassDeletes = (*Store)(nil)

// massDeleteSchema keeps the mass-delete events (storage.MassDeletes), a
// row each, and their items, a row each, so that extending an event by
// one deletion inserts one row whatever the event's size. item_count
// lets an extension check MaxMassDeleteItems without counting. Events
// have no foreign key on spaces: they go with their space's rows
// nowhere else, and a space is never dropped while it has a trash.
const massDeleteSchema = `
CREATE TABLE IF NOT EXISTS mass_deletes (
	space_id    text NOT NULL,
	id          text NOT NULL,
	user_id     text NOT NULL,
	client      text NOT NULL,
	label       text NOT NULL,
	files       bigint NOT NULL,
	item_count  bigint NOT NULL DEFAULT 0,
	started     timestamptz NOT NULL,
	ended       timestamptz NOT NULL,
	state       smallint NOT NULL DEFAULT 0,
	resolved    timestamptz,
	resolved_by text NOT NULL DEFAULT '',
	PRIMARY KEY (space_id, id)
);
CREATE TABLE IF NOT EXISTS mass_delete_items (
	space_id text NOT NULL,
	event_id text NOT NULL,
	node_id  text NOT NULL,
	PRIMARY KEY (space_id, event_id, node_id),
	FOREIGN KEY (space_id, event_id) REFERENCES mass_deletes (space_id, id) ON DELETE CASCADE
);
`

const massDeleteColumns = `space_id, id, user_id, client, label, files, started, ended, state, resolved, resolved_by`

// massDeleteLock serializes the changes of one space's events, so that
// the cap holds and an extension sees the count of items it adds to.
const massDeleteLock = `SELECT pg_advisory_xact_lock(hashtextextended('mass_deletes ' || $1, 0))`

// OpenMassDelete keeps the new event e (storage.MassDeletes).
func (s *Store) OpenMassDelete(ctx context.Context, e storage.MassDelete) error {
	if err := storage.ValidMassDelete(e); err != nil {
		return fmt.Errorf("open mass delete: %w", err)
	}
	pool, err := s.db()
	if err != nil {
		return fmt.Errorf("open mass delete: %w", err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, massDeleteLock, e.SpaceID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM mass_deletes WHERE space_id = $1 AND id IN
			(SELECT id FROM mass_deletes WHERE space_id = $1 ORDER BY id DESC OFFSET $2)`,
			e.SpaceID, storage.MaxMassDeletesPerSpace-1); err != nil {
			return err
		}
		err := execOne(ctx, tx, fmt.Errorf("mass delete %s: %w", e.ID, storage.ErrExists),
			`INSERT INTO mass_deletes (space_id, id, user_id, client, label, files, started, ended)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
			e.SpaceID, e.ID, e.User, e.Client, e.Label, e.Files, e.Start, e.End)
		if err != nil {
			return err
		}
		return addMassDeleteItems(ctx, tx, e.SpaceID, e.ID, e.Items, 0)
	})
	if err != nil {
		return fmt.Errorf("open mass delete: %w", err)
	}
	return nil
}

// addMassDeleteItems keeps those of items event id does not keep yet, up
// to MaxMassDeleteItems, given the count it keeps.
func addMassDeleteItems(ctx context.Context, tx pgx.Tx, spaceID, id string, items []string, count int64) error {
	fresh := storage.NewMassDeleteItems(items, func(string) bool { return false }, max(storage.MaxMassDeleteItems-int(count), 0))
	if len(fresh) == 0 {
		return nil
	}
	tag, err := tx.Exec(ctx, `INSERT INTO mass_delete_items (space_id, event_id, node_id)
		SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING`, spaceID, id, fresh)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE mass_deletes SET item_count = item_count + $3 WHERE space_id = $1 AND id = $2`,
		spaceID, id, tag.RowsAffected())
	return err
}

// ExtendMassDelete adds to open event id (storage.MassDeletes).
func (s *Store) ExtendMassDelete(ctx context.Context, spaceID, id string, items []string, files int64, end time.Time) (storage.MassDelete, error) {
	if files < 0 {
		return storage.MassDelete{}, fmt.Errorf("extend mass delete: negative files: %w", storage.ErrInvalid)
	}
	pool, err := s.db()
	if err != nil {
		return storage.MassDelete{}, fmt.Errorf("extend mass delete: %w", err)
	}
	var out storage.MassDelete
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, massDeleteLock, spaceID); err != nil {
			return err
		}
		e, count, err := massDeleteRow(ctx, tx, spaceID, id)
		if err != nil {
			return err
		}
		if e.State != storage.MassDeleteOpen {
			return storage.MassDeleteResolved(e)
		}
		if err := addMassDeleteItems(ctx, tx, spaceID, id, items, count); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `UPDATE mass_deletes SET files = files + $3, ended = greatest(ended, $4)
			WHERE space_id = $1 AND id = $2 RETURNING `+massDeleteColumns, spaceID, id, files, end)
		if err != nil {
			return err
		}
		out, err = pgx.CollectExactlyOneRow(rows, scanMassDelete)
		return err
	})
	if err != nil {
		return storage.MassDelete{}, fmt.Errorf("extend mass delete: %w", err)
	}
	return out, nil
}

// massDeleteRow reads event id and how many items it keeps.
func massDeleteRow(ctx context.Context, q pgx.Tx, spaceID, id string) (storage.MassDelete, int64, error) {
	var count int64
	rows, err := q.Query(ctx, `SELECT `+massDeleteColumns+`, item_count FROM mass_deletes WHERE space_id = $1 AND id = $2`, spaceID, id)
	if err != nil {
		return storage.MassDelete{}, 0, err
	}
	e, err := pgx.CollectExactlyOneRow(rows, func(row pgx.CollectableRow) (storage.MassDelete, error) {
		var e storage.MassDelete
		var resolved *time.Time
		err := row.Scan(&e.SpaceID, &e.ID, &e.User, &e.Client, &e.Label, &e.Files, &e.Start, &e.End, &e.State, &resolved, &e.ResolvedBy, &count)
		if resolved != nil {
			e.Resolved = *resolved
		}
		return e, err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.MassDelete{}, 0, storage.MassDeleteNotFound(id)
	}
	return e, count, err
}

// MassDeletes returns the events of space spaceID (storage.MassDeletes).
func (s *Store) MassDeletes(ctx context.Context, spaceID string) ([]storage.MassDelete, error) {
	events, err := queryRows(ctx, s, scanMassDelete, `SELECT `+massDeleteColumns+` FROM mass_deletes WHERE space_id = $1`, spaceID)
	if err != nil {
		return nil, fmt.Errorf("mass deletes of space %s: %w", spaceID, err)
	}
	storage.SortMassDeletes(events)
	return events, nil
}

// MassDelete returns event id with its items (storage.MassDeletes), in
// one snapshot.
func (s *Store) MassDelete(ctx context.Context, spaceID, id string) (storage.MassDelete, error) {
	pool, err := s.db()
	if err != nil {
		return storage.MassDelete{}, fmt.Errorf("mass delete: %w", err)
	}
	var e storage.MassDelete
	err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var err error
		if e, _, err = massDeleteRow(ctx, tx, spaceID, id); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT node_id FROM mass_delete_items WHERE space_id = $1 AND event_id = $2 ORDER BY node_id`, spaceID, id)
		if err != nil {
			return err
		}
		e.Items, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return storage.MassDelete{}, fmt.Errorf("mass delete: %w", err)
	}
	return e, nil
}

// ResolveMassDelete resolves open event id (storage.MassDeletes): the
// update sets a state only where the event is open, so that of two
// resolutions one wins.
func (s *Store) ResolveMassDelete(ctx context.Context, spaceID, id string, state storage.MassDeleteState, by string, at time.Time) (storage.MassDelete, error) {
	if err := storage.ValidMassDeleteResolution(state, by); err != nil {
		return storage.MassDelete{}, fmt.Errorf("resolve mass delete: %w", err)
	}
	pool, err := s.db()
	if err != nil {
		return storage.MassDelete{}, fmt.Errorf("resolve mass delete: %w", err)
	}
	rows, err := pool.Query(ctx, `UPDATE mass_deletes SET state = $3, resolved_by = $4, resolved = $5
		WHERE space_id = $1 AND id = $2 AND state = 0 RETURNING `+massDeleteColumns, spaceID, id, state, by, at)
	if err != nil {
		return storage.MassDelete{}, fmt.Errorf("resolve mass delete: %w", err)
	}
	e, err := pgx.CollectExactlyOneRow(rows, scanMassDelete)
	if err == nil {
		return e, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return storage.MassDelete{}, fmt.Errorf("resolve mass delete: %w", err)
	}
	current, err := s.MassDelete(ctx, spaceID, id)
	if err != nil {
		return storage.MassDelete{}, err
	}
	return storage.MassDelete{}, fmt.Errorf("resolve mass delete: %w", storage.MassDeleteResolved(current))
}

func scanMassDelete(row pgx.CollectableRow) (storage.MassDelete, error) {
	var (
		e        storage.MassDelete
		resolved *time.Time
	)
	err := row.Scan(&e.SpaceID, &e.ID, &e.User, &e.Client, &e.Label, &e.Files, &e.Start, &e.End, &e.State, &resolved, &e.ResolvedBy)
	if resolved != nil {
		e.Resolved = *resolved
	}
	return e, err
}
