package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

// An eviction under quota pressure takes trash items out of the trash in
// the transaction of the upload that needs their room, and that
// transaction must stay short whatever an item holds. So the eviction
// only hides an item (hideTrashItem): its record moves from the trash
// bucket to bucketPurging, its place entry goes, and its bytes leave the
// space's trash counter, all in a few writes; its nodes stay below the
// trash root as they were. Every lookup of the trash reads the trash
// bucket only, so a hidden item is not listed, not restored, not revived
// and not evicted again, as if purged already. Once the upload's
// transaction commits, the store purges it in parts (purgeInParts)
// before the upload returns; an item a stop or a failure leaves hidden
// is the next expiry pass's (finishHidden). Until its last part, its
// nodes, properties and versions count in the space's node, property
// and version counters, which only ever overstates what the space holds.
// The retention's expiry hides an expired item the same way before it
// purges it in parts (expireTrashItem), so that a restore racing it is
// decided in the one transaction that hides it: the restore brings the
// item back whole or finds nothing.
var bucketPurging = []byte("trash_purging") // space id \0 trash key → encoded trash item, hidden until purged

func (t *txn) purging() countedBucket { return t.bucket(&t.open.purging, bucketPurging) }

// hiddenItem returns item key of space spaceID hidden for a purge.
func (t *txn) hiddenItem(spaceID, key string) (trashRec, error) {
	v := t.purging().Get(trashItemKey(spaceID, key))
	if v == nil {
		return trashRec{}, storage.TrashItemNotFound(key)
	}
	item, err := decodeTrash(key, v)
	item.hidden = true
	return item, err
}

// isHidden reports whether the trash of space spaceID has an item key
// hidden for a purge.
func (t *txn) isHidden(spaceID, key string) bool {
	return t.purging().Get(trashItemKey(spaceID, key)) != nil
}

// hideTrashItem takes item out of the trash of space spaceID, its room
// free at once, and returns the purge that destroys it in parts once t
// commits (purgeInParts). From the commit on, a restore, a purge or an
// eviction of the item finds nothing: whoever hid it purges it, whole.
func (t *txn) hideTrashItem(spaceID string, item trashRec) (trashPurge, error) {
	top, err := t.itemNode(item)
	if err != nil {
		return trashPurge{}, err
	}
	if err := t.deleteTrashItem(spaceID, item); err != nil {
		return trashPurge{}, err
	}
	if err := t.purging().Put(trashItemKey(spaceID, item.Key), encodeTrash(&item)); err != nil {
		return trashPurge{}, err
	}
	if err := t.addUndo(spaceID, -top.Size, 0); err != nil {
		return trashPurge{}, err
	}
	return trashPurge{spaceID: spaceID, key: item.Key, hidden: true}, nil
}

// itemToPurge returns the trash item p names: a hidden one, or one of the
// trash.
func (t *txn) itemToPurge(p trashPurge) (trashRec, error) {
	if p.hidden {
		return t.hiddenItem(p.spaceID, p.key)
	}
	return t.trashItem(p.spaceID, p.key)
}

// hiddenItems returns up to limit items hidden for a purge, of any space.
func (t *txn) hiddenItems(limit int) ([]trashPurge, error) {
	var out []trashPurge
	c := t.purging().Cursor()
	for k, _ := c.First(); k != nil && len(out) < limit; k, _ = c.Next() {
		spaceID, key, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return nil, fmt.Errorf("hidden trash key %q: %w", k, errCorrupt)
		}
		out = append(out, trashPurge{spaceID: string(spaceID), key: string(key), hidden: true})
	}
	return out, nil
}

// finishHidden purges, each in parts, up to limit trash items left hidden
// by a purge that did not finish (a stop, a failure), and returns how
// many it purged. One that another purge finishes meanwhile is skipped.
func (s *Store) finishHidden(ctx context.Context, limit int) (int, error) {
	var hidden []trashPurge
	err := s.view(func(t *txn) (err error) {
		hidden, err = t.hiddenItems(limit)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("hidden trash items: %w", err)
	}
	purged := 0
	for _, p := range hidden {
		err := s.purgeInParts(ctx, p, purgeNodesPerTxn)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return purged, fmt.Errorf("purge hidden trash item %s: %w", p.key, err)
		}
		purged++
	}
	return purged, nil
}
