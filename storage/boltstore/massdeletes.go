package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.MassDeletes = (*Store)(nil)

// Mass-delete events (storage.MassDeletes) are kept in two buckets, made
// at the first event:
//
//	mass_deletes       space id 0x00 event id → encoded event
//	mass_delete_items  space id 0x00 event id 0x00 node id → nothing
//
// An event's items have records of their own, so that extending an event
// by one deletion writes one record whatever the event's size. Event ids
// start with the start's Unix nanoseconds, 19 digits, so that a space's
// events sort oldest first.
var (
	bucketMassDeletes     = []byte("mass_deletes")
	bucketMassDeleteItems = []byte("mass_delete_items")
)

// massDeleteFormat is the format of the event records.
const massDeleteFormat = 1

// massDeleteRec is an event as stored: the event without its items, and
// how many items it keeps.
type massDeleteRec struct {
	storage.MassDelete
	items int64
}

// encodeMassDelete encodes r without its space, id and items. Layout:
// format, user, client, label, resolved-by (strings), state (byte),
// files, items (varints), start, end, resolved (appendTime).
func encodeMassDelete(r *massDeleteRec) []byte {
	b := make([]byte, 0, 96+len(r.User)+len(r.Client)+len(r.Label)+len(r.ResolvedBy))
	b = append(b, massDeleteFormat)
	for _, s := range []string{r.User, r.Client, r.Label, r.ResolvedBy} {
		b = appendString(b, s)
	}
	b = append(b, byte(r.State))
	b = binary.AppendVarint(b, r.Files)
	b = binary.AppendVarint(b, r.items)
	b = appendTime(b, r.Start)
	b = appendTime(b, r.End)
	return appendTime(b, r.Resolved)
}

func decodeMassDelete(spaceID, id string, v []byte) (massDeleteRec, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != massDeleteFormat {
		return massDeleteRec{}, fmt.Errorf("mass delete %s: unknown format: %w", id, errCorrupt)
	}
	r := massDeleteRec{MassDelete: storage.MassDelete{ID: id, SpaceID: spaceID}}
	r.User, r.Client, r.Label, r.ResolvedBy = d.str(), d.str(), d.str(), d.str()
	r.State = storage.MassDeleteState(d.byte())
	r.Files, r.items = d.varint(), d.varint()
	r.Start, r.End, r.Resolved = d.time(), d.time(), d.time()
	if d.err != nil {
		return massDeleteRec{}, fmt.Errorf("mass delete %s: %w", id, errCorrupt)
	}
	return r, nil
}

// massDeletePrefix is the prefix of the keys of a space's events, or of
// an event's items.
func massDeletePrefix(parts ...string) []byte {
	var b []byte
	for _, p := range parts {
		b = append(append(b, p...), 0)
	}
	return b
}

// massDeleteKey is the key of event id of space spaceID.
func massDeleteKey(spaceID, id string) []byte {
	return append(massDeletePrefix(spaceID), id...)
}

// massDeleteBuckets are the buckets of the events.
type massDeleteBuckets struct {
	events, items *bolt.Bucket
}

func openMassDeleteBuckets(tx *bolt.Tx) (massDeleteBuckets, error) {
	events, err := tx.CreateBucketIfNotExists(bucketMassDeletes)
	if err != nil {
		return massDeleteBuckets{}, err
	}
	items, err := tx.CreateBucketIfNotExists(bucketMassDeleteItems)
	return massDeleteBuckets{events, items}, err
}

// existingMassDeleteBuckets are the buckets of tx; ok is false before the
// first event.
func existingMassDeleteBuckets(tx *bolt.Tx) (massDeleteBuckets, bool) {
	b := massDeleteBuckets{tx.Bucket(bucketMassDeletes), tx.Bucket(bucketMassDeleteItems)}
	return b, b.events != nil && b.items != nil
}

// findMassDelete returns event id of space spaceID with the buckets it
// stands in; storage.MassDeleteNotFound's error when there is none.
func findMassDelete(tx *bolt.Tx, spaceID, id string) (massDeleteBuckets, massDeleteRec, error) {
	b, ok := existingMassDeleteBuckets(tx)
	if !ok {
		return b, massDeleteRec{}, storage.MassDeleteNotFound(id)
	}
	r, ok, err := b.get(spaceID, id)
	switch {
	case err != nil:
		return b, r, err
	case !ok:
		return b, r, storage.MassDeleteNotFound(id)
	}
	return b, r, nil
}

// findOpenMassDelete is findMassDelete for a change: only an open event
// may change, a resolved one answers storage.MassDeleteResolved's error.
func findOpenMassDelete(tx *bolt.Tx, spaceID, id string) (massDeleteBuckets, massDeleteRec, error) {
	b, r, err := findMassDelete(tx, spaceID, id)
	if err == nil && r.State != storage.MassDeleteOpen {
		err = storage.MassDeleteResolved(r.MassDelete)
	}
	return b, r, err
}

func (b massDeleteBuckets) get(spaceID, id string) (massDeleteRec, bool, error) {
	v := b.events.Get(massDeleteKey(spaceID, id))
	if v == nil {
		return massDeleteRec{}, false, nil
	}
	r, err := decodeMassDelete(spaceID, id, v)
	return r, err == nil, err
}

func (b massDeleteBuckets) put(r *massDeleteRec) error {
	return b.events.Put(massDeleteKey(r.SpaceID, r.ID), encodeMassDelete(r))
}

// ids returns the ids of the events of space spaceID, oldest first.
func (b massDeleteBuckets) ids(spaceID string) []string {
	prefix := massDeletePrefix(spaceID)
	var ids []string
	c := b.events.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		ids = append(ids, string(k[len(prefix):]))
	}
	return ids
}

// forget deletes event id of space spaceID with its items.
func (b massDeleteBuckets) forget(spaceID, id string) error {
	prefix := massDeletePrefix(spaceID, id)
	c := b.items.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return b.events.Delete(massDeleteKey(spaceID, id))
}

// addItems keeps the items of r not kept yet, up to MaxMassDeleteItems.
func (b massDeleteBuckets) addItems(r *massDeleteRec, items []string) error {
	prefix := massDeletePrefix(r.SpaceID, r.ID)
	have := func(id string) bool { return b.items.Get(append(prefix, id...)) != nil }
	room := max(storage.MaxMassDeleteItems-int(r.items), 0)
	for _, id := range storage.NewMassDeleteItems(items, have, room) {
		if err := b.items.Put(append(prefix[:len(prefix):len(prefix)], id...), nil); err != nil {
			return err
		}
		r.items++
	}
	return nil
}

// OpenMassDelete keeps the new event e (storage.MassDeletes).
func (s *Store) OpenMassDelete(ctx context.Context, e storage.MassDelete) error {
	return s.changeGrouped(ctx, "open mass delete", storage.ValidMassDelete(e), func(t *txn) error {
		b, err := openMassDeleteBuckets(t.tx)
		if err != nil {
			return err
		}
		if b.events.Get(massDeleteKey(e.SpaceID, e.ID)) != nil {
			return fmt.Errorf("mass delete %s: %w", e.ID, storage.ErrExists)
		}
		ids := b.ids(e.SpaceID)
		for len(ids) >= storage.MaxMassDeletesPerSpace {
			if err := b.forget(e.SpaceID, ids[0]); err != nil {
				return err
			}
			ids = ids[1:]
		}
		r := massDeleteRec{MassDelete: e}
		r.Items = nil
		if err := b.addItems(&r, e.Items); err != nil {
			return err
		}
		return b.put(&r)
	})
}

// ExtendMassDelete adds to open event id (storage.MassDeletes).
func (s *Store) ExtendMassDelete(ctx context.Context, spaceID, id string, items []string, files int64, end time.Time) (storage.MassDelete, error) {
	if files < 0 {
		return storage.MassDelete{}, fmt.Errorf("extend mass delete: negative files: %w", storage.ErrInvalid)
	}
	out, err := inTxn(ctx, s.updateGrouped, func(t *txn) (storage.MassDelete, error) {
		b, r, err := findOpenMassDelete(t.tx, spaceID, id)
		if err != nil {
			return storage.MassDelete{}, err
		}
		if err := b.addItems(&r, items); err != nil {
			return storage.MassDelete{}, err
		}
		r.Files += files
		if end.After(r.End) {
			r.End = end
		}
		return r.MassDelete, b.put(&r)
	})
	if err != nil {
		return storage.MassDelete{}, fmt.Errorf("extend mass delete: %w", err)
	}
	return out, nil
}

// MassDeletes returns the events of space spaceID (storage.MassDeletes).
func (s *Store) MassDeletes(ctx context.Context, spaceID string) ([]storage.MassDelete, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var events []storage.MassDelete
	err := s.view(func(t *txn) error {
		b, ok := existingMassDeleteBuckets(t.tx)
		if !ok {
			return nil
		}
		for _, id := range b.ids(spaceID) {
			r, ok, err := b.get(spaceID, id)
			if err != nil {
				return err
			}
			if ok {
				events = append(events, r.MassDelete)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("mass deletes of space %s: %w", spaceID, err)
	}
	storage.SortMassDeletes(events)
	return events, nil
}

// MassDelete returns event id with its items (storage.MassDeletes).
func (s *Store) MassDelete(ctx context.Context, spaceID, id string) (storage.MassDelete, error) {
	return inTxn(ctx, s.view, func(t *txn) (storage.MassDelete, error) {
		b, r, err := findMassDelete(t.tx, spaceID, id)
		if err != nil {
			return storage.MassDelete{}, err
		}
		e := r.MassDelete
		e.Items = make([]string, 0, r.items)
		prefix := massDeletePrefix(spaceID, id)
		c := b.items.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			e.Items = append(e.Items, string(k[len(prefix):]))
		}
		return e, nil
	})
}

// ResolveMassDelete resolves open event id (storage.MassDeletes).
func (s *Store) ResolveMassDelete(ctx context.Context, spaceID, id string, state storage.MassDeleteState, by string, at time.Time) (storage.MassDelete, error) {
	if err := storage.ValidMassDeleteResolution(state, by); err != nil {
		return storage.MassDelete{}, fmt.Errorf("resolve mass delete: %w", err)
	}
	out, err := inTxn(ctx, s.updateGrouped, func(t *txn) (storage.MassDelete, error) {
		b, r, err := findOpenMassDelete(t.tx, spaceID, id)
		if err != nil {
			return storage.MassDelete{}, err
		}
		r.State, r.ResolvedBy, r.Resolved = state, by, at
		return r.MassDelete, b.put(&r)
	})
	if err != nil {
		return storage.MassDelete{}, fmt.Errorf("resolve mass delete: %w", err)
	}
	return out, nil
}
