package boltstore

import (
	"bytes"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// checkShares checks that every share is readable, on a live node of its
// space, and in each index it belongs to. A share whose item is gone is
// one a store deleting shares with their items would have deleted: the
// repair deletes it.
func (c *checkRun) checkShares() error {
	return c.scan(bucketShares, func(t *txn, k, v []byte) ([]finding, error) {
		id := string(k)
		sh, err := decodeShare(id, v)
		if err != nil {
			return []finding{problem(storage.ProblemDangling, "", "", "unreadable share %q: %v", id, err).
				withRepair(func() (bool, error) {
					return c.update(func(t *txn) (bool, error) {
						v := t.shares().Get([]byte(id))
						if v == nil {
							return false, nil
						}
						if _, err := decodeShare(id, v); err == nil {
							return false, nil
						}
						return true, t.shares().Delete([]byte(id))
					})
				})}, nil
		}
		itemGone := func(t *txn) bool { _, err := t.nodeIn(sh.SpaceID, sh.NodeID); return err != nil }
		if itemGone(t) {
			return []finding{problem(storage.ProblemDangling, sh.SpaceID, "", "share %s by %q is of node %s, which is not in the space", id, sh.Creator, sh.NodeID).
				withRepair(func() (bool, error) {
					return c.update(func(t *txn) (bool, error) {
						sh, err := t.share(id)
						if err != nil || !itemGone(t) {
							return false, nil
						}
						return true, t.deleteShare(&sh)
					})
				})}, nil
		}
		if t.shareIndexed(sh) {
			return nil, nil
		}
		n, _, _ := t.node(sh.NodeID)
		return []finding{problem(storage.ProblemDangling, sh.SpaceID, t.pathOf(n), "share %s is missing from an index", id).
			withRepair(func() (bool, error) {
				return c.update(func(t *txn) (bool, error) {
					sh, err := t.share(id)
					if err != nil || t.shareIndexed(sh) {
						return false, nil
					}
					return true, t.putShare(&sh)
				})
			})}, nil
	}, nil)
}

// shareIndexed reports whether every index holds its entry of sh.
func (t *txn) shareIndexed(sh storage.Share) bool {
	item, creator, grantee := indexKeys(&sh)
	if !hasKey(t.shareItems().raw(), item) || !hasKey(t.shareCreators().raw(), creator) {
		return false
	}
	if grantee != nil && !hasKey(t.shareGrantees().raw(), grantee) {
		return false
	}
	return sh.Token == "" || string(t.shareTokens().Get([]byte(sh.Token))) == sh.ID
}

// checkShareIndexes checks that every entry of the share indexes names a
// share that it indexes.
func (c *checkRun) checkShareIndexes() error {
	indexes := []struct {
		bucket []byte
		// entryOf says whether k (value v) is an entry of sh.
		entryOf func(sh storage.Share, k, v []byte) bool
		// idOf returns the share id entry k (value v) names.
		idOf func(k, v []byte) string
	}{
		{bucketShareTokens, func(sh storage.Share, k, v []byte) bool { return sh.Token == string(k) },
			func(k, v []byte) string { return string(v) }},
		{bucketShareItems, func(sh storage.Share, k, _ []byte) bool { item, _, _ := indexKeys(&sh); return bytes.Equal(item, k) },
			shareIDOfEntry},
		{bucketShareCreators, func(sh storage.Share, k, _ []byte) bool {
			_, creator, _ := indexKeys(&sh)
			return bytes.Equal(creator, k)
		},
			shareIDOfEntry},
		{bucketShareGrantees, func(sh storage.Share, k, _ []byte) bool {
			_, _, grantee := indexKeys(&sh)
			return bytes.Equal(grantee, k)
		},
			shareIDOfEntry},
	}
	for _, index := range indexes {
		stale := func(t *txn, k, v []byte) bool {
			sh, err := t.share(index.idOf(k, v))
			return err != nil || !index.entryOf(sh, k, v)
		}
		err := c.scan(index.bucket, func(t *txn, k, v []byte) ([]finding, error) {
			if !stale(t, k, v) {
				return nil, nil
			}
			entry := bytes.Clone(k)
			return []finding{problem(storage.ProblemDangling, "", "", "share index %s entry %q names no share it indexes", index.bucket, k).
				withRepair(func() (bool, error) {
					return c.update(func(t *txn) (bool, error) {
						b := t.tx.Bucket(index.bucket)
						if !hasKey(b, entry) || !stale(t, entry, b.Get(entry)) {
							return false, nil
						}
						return true, b.Delete(entry)
					})
				})}, nil
		}, nil)
		if err != nil {
			return err
		}
	}
	return nil
}

// shareIDOfEntry returns the share id that ends an index key.
func shareIDOfEntry(k, _ []byte) string { return string(k[bytes.LastIndexByte(k, 0)+1:]) }

// hasKey reports whether b holds key k. The index entries have empty
// values, which Get does not tell from a missing key.
func hasKey(b *bolt.Bucket, k []byte) bool {
	got, _ := b.Cursor().Seek(k)
	return bytes.Equal(got, k)
}
