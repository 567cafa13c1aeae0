package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// spaceColumns are the columns spaceRow scans.
const spaceColumns = `id, type, name, owner, owner_display_name, quota, members`

// spaceRow is a row of spaces.
type spaceRow struct {
	ID               string                  `db:"id"`
	Type             string                  `db:"type"`
	Name             string                  `db:"name"`
	Owner            string                  `db:"owner"`
	OwnerDisplayName string                  `db:"owner_display_name"`
	Quota            int64                   `db:"quota"`
	Members          map[string]storage.Role `db:"members"`
}

// space is the space as stored: a personal space's quota is NoQuota
// unless it has one of its own.
func (r spaceRow) space() storage.Space {
	members := r.Members
	if members == nil {
		members = map[string]storage.Role{}
	}
	return storage.Space{
		ID:               r.ID,
		Type:             storage.SpaceType(r.Type),
		Name:             r.Name,
		Owner:            r.Owner,
		OwnerDisplayName: r.OwnerDisplayName,
		Quota:            r.Quota,
		Members:          members,
	}
}

// querySpace returns the one space the query selects (with spaceColumns),
// and whether there is one.
func querySpace(ctx context.Context, q querier, sql string, args ...any) (storage.Space, bool, error) {
	rows, _ := q.Query(ctx, sql, args...)
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[spaceRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.Space{}, false, nil
	}
	if err != nil {
		return storage.Space{}, false, err
	}
	return r.space(), true, nil
}

// PersonalSpace returns the personal space of u, creating it on first use
// and updating the owner's display name when it changed. Nodes creating it
// at once agree on one space: the unique index spaces_personal lets one
// insert win, and the others read what it made.
func (s *Store) PersonalSpace(ctx context.Context, u storage.User) (storage.Space, error) {
	if err := storage.ValidUserID(u.ID); err != nil {
		return storage.Space{}, fmt.Errorf("personal space: %w", err)
	}
	const byOwner = `SELECT ` + spaceColumns + ` FROM spaces WHERE type = 'personal' AND owner = $1`
	pool, err := s.db()
	if err != nil {
		return storage.Space{}, fmt.Errorf("personal space: %w", err)
	}
	sp, found, err := querySpace(ctx, pool, byOwner, u.ID)
	err = classify(err)
	if err == nil && (!found || sp.OwnerDisplayName != u.DisplayName) {
		err = s.tx(ctx, func(tx pgx.Tx) (err error) {
			sp, err = createOrRenamePersonal(ctx, tx, u, s.now().UTC())
			return err
		})
	}
	if err != nil {
		return storage.Space{}, fmt.Errorf("personal space of %s: %w", u.ID, err)
	}
	return storage.EffectiveQuota(sp, s.personalQuota.Load()), nil
}

// createOrRenamePersonal creates the personal space of u unless another
// transaction did, and brings its owner's display name up to date.
func createOrRenamePersonal(ctx context.Context, tx pgx.Tx, u storage.User, now time.Time) (storage.Space, error) {
	id := uuid.NewString()
	tag, err := tx.Exec(ctx, `
		INSERT INTO spaces (id, type, name, owner, owner_display_name, quota)
		VALUES ($1, 'personal', $2, $3, $4, $5)
		ON CONFLICT (owner) WHERE type = 'personal' DO NOTHING`,
		id, personalName(u), u.ID, u.DisplayName, storage.NoQuota)
	if err != nil {
		return storage.Space{}, err
	}
	if tag.RowsAffected() == 1 {
		if err := createRoot(ctx, tx, id, now); err != nil {
			return storage.Space{}, err
		}
	}
	sp, _, err := querySpace(ctx, tx, `
		UPDATE spaces SET owner_display_name = $2, name = $3
		WHERE type = 'personal' AND owner = $1
		RETURNING `+spaceColumns, u.ID, u.DisplayName, personalName(u))
	return sp, err
}

// personalName is the name of a personal space: the owner's display name,
// or the user id when it is unknown.
func personalName(u storage.User) string {
	if u.DisplayName != "" {
		return u.DisplayName
	}
	return u.ID
}

// createRoot makes the root folder of a new space, whose id is the
// space's, and the root of its trash: so every delete writes the same
// rows, the first one too.
func createRoot(ctx context.Context, tx pgx.Tx, spaceID string, now time.Time) error {
	c := change{tx: tx, now: now, tag: uuid.NewString()}
	_, err := tx.Exec(ctx, `INSERT INTO nodes (id, space_id, parent_id, name, kind, mtime, etag)
		VALUES ($1, $1, NULL, '', $2, $3, $4)`, spaceID, storage.KindFolder, now, c.etag(spaceID))
	if err != nil {
		return fmt.Errorf("root of space %s: %w", spaceID, err)
	}
	return ensureTrash(ctx, &c, spaceID)
}

// PutSpace creates or updates the project space sp.ID: its name, quota and
// members are replaced. Updating an existing personal space keeps its type
// and owner.
func (s *Store) PutSpace(ctx context.Context, sp storage.Space) (storage.Space, error) {
	sp, err := storage.PreparePutSpace(sp)
	if err != nil {
		return storage.Space{}, fmt.Errorf("put space: %w", err)
	}
	var out storage.Space
	err = s.tx(ctx, func(tx pgx.Tx) (err error) {
		out, err = s.putSpace(ctx, tx, sp)
		return err
	})
	if err != nil {
		return storage.Space{}, fmt.Errorf("put space %s: %w", sp.ID, err)
	}
	return storage.EffectiveQuota(out, s.personalQuota.Load()), nil
}

func (s *Store) putSpace(ctx context.Context, tx pgx.Tx, sp storage.Space) (storage.Space, error) {
	for {
		old, exists, err := querySpace(ctx, tx, `SELECT `+spaceColumns+` FROM spaces WHERE id = $1 FOR UPDATE`, sp.ID)
		if err != nil {
			return storage.Space{}, err
		}
		if err := storage.CheckPutSpace(sp, old, exists); err != nil {
			return storage.Space{}, err
		}
		if exists {
			out, _, err := querySpace(ctx, tx, `UPDATE spaces SET name = $2, quota = $3, members = $4
				WHERE id = $1 RETURNING `+spaceColumns, sp.ID, sp.Name, sp.Quota, sp.Members)
			return out, err
		}
		if n, taken, err := nodeByID(ctx, tx, sp.ID); err != nil {
			return storage.Space{}, err
		} else if taken && n.SpaceID == sp.ID {
			// Another node created the space since this transaction
			// looked (read committed sees its commit now): update it.
			continue
		} else if taken {
			return storage.Space{}, storage.SpaceIDTaken(sp.ID)
		}
		out, created, err := querySpace(ctx, tx, `
			INSERT INTO spaces (id, type, name, quota, members) VALUES ($1, 'project', $2, $3, $4)
			ON CONFLICT (id) DO NOTHING RETURNING `+spaceColumns, sp.ID, sp.Name, sp.Quota, sp.Members)
		if err != nil {
			return storage.Space{}, err
		}
		if created {
			return out, createRoot(ctx, tx, sp.ID, s.now().UTC())
		}
		// Another node created it meanwhile: update what it made.
	}
}

// Space returns the space with the given id.
func (s *Store) Space(ctx context.Context, id string) (storage.Space, error) {
	pool, err := s.db()
	if err != nil {
		return storage.Space{}, err
	}
	sp, found, err := querySpace(ctx, pool, `SELECT `+spaceColumns+` FROM spaces WHERE id = $1 AND type <> 'trash'`, id)
	if err != nil {
		return storage.Space{}, classify(err)
	}
	if !found {
		return storage.Space{}, storage.SpaceNotFound(id)
	}
	return storage.EffectiveQuota(sp, s.personalQuota.Load()), nil
}

// Spaces returns every personal and project space, ordered by id, with
// the quota that applies to each.
func (s *Store) Spaces(ctx context.Context) ([]storage.Space, error) {
	rs, err := queryRows(ctx, s, pgx.RowToStructByName[spaceRow], `SELECT `+spaceColumns+` FROM spaces WHERE type <> 'trash' ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("listing spaces: %w", classify(err))
	}
	return mapRows(rs, func(r spaceRow) storage.Space { return storage.EffectiveQuota(r.space(), s.personalQuota.Load()) }), nil
}
