package boltstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/davspaces/davspaces/storage"
)

// PersonalSpace returns the personal space of u, creating it on first use
// and updating the owner's display name when it changed.
func (s *Store) PersonalSpace(ctx context.Context, u storage.User) (storage.Space, error) {
	if err := ctx.Err(); err != nil {
		return storage.Space{}, err
	}
	if err := storage.ValidUserID(u.ID); err != nil {
		return storage.Space{}, fmt.Errorf("personal space: %w", err)
	}
	// Fast path: the space exists and is up to date.
	var sp storage.Space
	found := false
	err := s.view(func(t *txn) error {
		id := t.personal().Get([]byte(u.ID))
		if id == nil {
			return nil
		}
		var err error
		sp, err = t.space(string(id))
		found = err == nil && sp.OwnerDisplayName == u.DisplayName
		return err
	})
	if err != nil {
		return storage.Space{}, fmt.Errorf("personal space of %s: %w", u.ID, err)
	}
	if found {
		return storage.EffectiveQuota(sp, s.personalQuota.Load()), nil
	}
	// Create or update in one write transaction, so concurrent first
	// requests of a user end up with the same space.
	err = s.update(func(t *txn) error {
		if id := t.personal().Get([]byte(u.ID)); id != nil {
			var err error
			if sp, err = t.space(string(id)); err != nil {
				return err
			}
			if sp.OwnerDisplayName == u.DisplayName {
				return nil
			}
			sp.OwnerDisplayName = u.DisplayName
			sp.Name = personalName(u)
			return t.spaces().Put([]byte(sp.ID), encodeSpace(&sp))
		}
		sp = storage.Space{
			ID:               uuid.NewString(),
			Type:             storage.SpacePersonal,
			Name:             personalName(u),
			Owner:            u.ID,
			OwnerDisplayName: u.DisplayName,
			Quota:            storage.NoQuota,
			Members:          map[string]storage.Role{},
		}
		if err := t.personal().Put([]byte(u.ID), []byte(sp.ID)); err != nil {
			return err
		}
		return t.createSpace(&sp)
	})
	if err != nil {
		return storage.Space{}, fmt.Errorf("personal space of %s: %w", u.ID, err)
	}
	return storage.EffectiveQuota(sp, s.personalQuota.Load()), nil
}

// personalName is the name of a personal space: the owner's display name,
// or the user id when it is unknown.
func personalName(u storage.User) string {
	if u.DisplayName != "" {
		return u.DisplayName
	}
	return u.ID
}

// PutSpace creates or updates the project space s.ID: its name, quota and
// members are replaced. Updating an existing personal space keeps its type
// and owner; a personal space whose quota is NoQuota has the store's
// default personal quota.
func (s *Store) PutSpace(ctx context.Context, sp storage.Space) (storage.Space, error) {
	if err := ctx.Err(); err != nil {
		return storage.Space{}, err
	}
	sp, err := storage.PreparePutSpace(sp)
	if err != nil {
		return storage.Space{}, fmt.Errorf("put space: %w", err)
	}
	var out storage.Space
	err = s.update(func(t *txn) error {
		var (
			old storage.Space
			err error
		)
		v := t.spaces().Get([]byte(sp.ID))
		if v != nil {
			if old, err = decodeSpace(sp.ID, v); err != nil {
				return err
			}
		}
		if err := storage.CheckPutSpace(sp, old, v != nil); err != nil {
			return err
		}
		if v != nil {
			old.Name, old.Quota, old.Members = sp.Name, sp.Quota, sp.Members
			out = old
			return t.spaces().Put([]byte(sp.ID), encodeSpace(&out))
		}
		if t.nodes().Get([]byte(sp.ID)) != nil {
			return storage.SpaceIDTaken(sp.ID)
		}
		out = storage.Space{ID: sp.ID, Type: storage.SpaceProject, Name: sp.Name, Quota: sp.Quota, Members: sp.Members}
		return t.createSpace(&out)
	})
	if err != nil {
		return storage.Space{}, fmt.Errorf("put space %s: %w", sp.ID, err)
	}
	return storage.EffectiveQuota(out, s.personalQuota.Load()), nil
}

// Space returns the space with the given id.
func (s *Store) Space(ctx context.Context, id string) (storage.Space, error) {
	sp, err := inTxn(ctx, s.view, func(t *txn) (storage.Space, error) { return t.space(id) })
	if err != nil {
		return storage.Space{}, err
	}
	return storage.EffectiveQuota(sp, s.personalQuota.Load()), nil
}

// space returns the space as stored: a personal space's quota is NoQuota
// unless it has one of its own.
func (t *txn) space(id string) (storage.Space, error) {
	v := t.spaces().Get([]byte(id))
	if v == nil {
		return storage.Space{}, storage.SpaceNotFound(id)
	}
	return decodeSpace(id, v)
}

// createSpace stores a new space and its root folder, whose id is the space
// id.
func (t *txn) createSpace(sp *storage.Space) error {
	if err := t.spaces().Put([]byte(sp.ID), encodeSpace(sp)); err != nil {
		return err
	}
	root := rec{Node: storage.Node{
		ID:      sp.ID,
		SpaceID: sp.ID,
		Kind:    storage.KindFolder,
		ModTime: t.now,
		ETag:    t.etag(sp.ID),
	}}
	return t.placeNode(&root)
}

// Spaces returns every personal and project space, ordered by id, with
// the quota that applies to each; it reads one snapshot.
func (s *Store) Spaces(ctx context.Context) ([]storage.Space, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []storage.Space
	err := s.view(func(t *txn) error {
		return t.spaces().ForEach(func(k, v []byte) error {
			sp, err := decodeSpace(string(k), v)
			if err != nil {
				return err
			}
			out = append(out, storage.EffectiveQuota(sp, s.personalQuota.Load()))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("listing spaces: %w", err)
	}
	return out, nil
}
