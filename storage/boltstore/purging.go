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
// purges it in parts (expireTrashItem), and so do a purge of an item and
// an emptying of the trash (PurgeTrash, EmptyTrash), so that a restore
// racing them is decided in the one transaction that hides the item: the
// restore brings the item back whole or finds nothing.
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
	return t.hiddenItemsIn(nil, nil, limit)
}

// hiddenItemsIn returns up to limit items hidden for a purge whose
// records are keyed from from (nil: the first) to to (nil: the last),
// both included.
func (t *txn) hiddenItemsIn(from, to []byte, limit int) ([]trashPurge, error) {
	var out []trashPurge
	c := t.purging().Cursor()
	k, _ := c.First()
	if from != nil {
		k, _ = c.Seek(from)
	}
	for ; k != nil && len(out) < limit && (to == nil || bytes.Compare(k, to) <= 0); k, _ = c.Next() {
		spaceID, key, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return nil, fmt.Errorf("hidden trash key %q: %w", k, errCorrupt)
		}
		out = append(out, trashPurge{spaceID: string(spaceID), key: string(key), hidden: true})
	}
	return out, nil
}

// emptyHidePerTxn is how many trash items a transaction of an emptying
// hides at most: each is a few writes, and the transaction stays short
// however many items the trash holds.
const emptyHidePerTxn = 200

// lastTrashKey returns the key of the last item of the trash of space
// spaceID, "" when it is empty. Keys start with the time the item was
// deleted (storage.TrashKey), so it is the newest.
func (t *txn) lastTrashKey(spaceID string) (string, error) {
	prefix := trashItemKey(spaceID, "")
	c := t.trash().Cursor()
	k, _ := c.Seek(append([]byte(spaceID), 1)) // past every key of the space
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return "", nil
	}
	return string(k[len(prefix):]), nil
}

// hideTrashBatch hides up to limit items of the trash of space spaceID,
// oldest first, none keyed after last, and returns how many it hid.
func (t *txn) hideTrashBatch(spaceID, last string, limit int) (int, error) {
	prefix, end := trashItemKey(spaceID, ""), trashItemKey(spaceID, last)
	var items []trashRec
	c := t.trash().Cursor()
	for k, v := c.Seek(prefix); k != nil && len(items) < limit && bytes.HasPrefix(k, prefix) && bytes.Compare(k, end) <= 0; k, v = c.Next() {
		item, err := decodeTrash(string(k[len(prefix):]), v)
		if err != nil {
			return 0, err
		}
		items = append(items, item)
	}
	// Hidden once the cursor is done with the bucket they leave.
	for _, item := range items {
		if _, err := t.hideTrashItem(spaceID, item); err != nil {
			return 0, fmt.Errorf("hide trash item %s: %w", item.Key, err)
		}
	}
	return len(items), nil
}

// hideTrashUpTo hides the items of the trash of space spaceID keyed up
// to last, emptyHidePerTxn a transaction.
func (s *Store) hideTrashUpTo(ctx context.Context, spaceID, last string) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var hid int
		err := s.update(func(t *txn) (err error) {
			hid, err = t.hideTrashBatch(spaceID, last, emptyHidePerTxn)
			return err
		})
		if err != nil || hid < emptyHidePerTxn {
			return err
		}
	}
}

// purgeHiddenUpTo purges, each in parts, the items of space spaceID
// hidden for a purge and keyed up to last: those an emptying hid, and
// any a stop left hidden before. One another purge finishes meanwhile
// is skipped.
func (s *Store) purgeHiddenUpTo(ctx context.Context, spaceID, last string) error {
	from, to := trashItemKey(spaceID, ""), trashItemKey(spaceID, last)
	for {
		var hidden []trashPurge
		err := s.view(func(t *txn) (err error) {
			hidden, err = t.hiddenItemsIn(from, to, expireBatch)
			return err
		})
		if err != nil {
			return fmt.Errorf("hidden trash items: %w", err)
		}
		if len(hidden) == 0 {
			return nil
		}
		for _, p := range hidden {
			err := s.purgeInParts(ctx, p, purgeNodesPerTxn)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return fmt.Errorf("purge trash item %s: %w", p.key, err)
			}
		}
		// Past the last one read, whatever became of it.
		from = append(trashItemKey(spaceID, hidden[len(hidden)-1].key), 0)
	}
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
