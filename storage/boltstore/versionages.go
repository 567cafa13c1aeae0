package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// The version age index (bucketVersionAges) holds an entry for every
// version, keyed by its space, the time it was replaced and its file and
// key, the value its size. The versions bucket is keyed by file, so that a
// file's versions are one key range; an eviction under quota pressure
// wants a space's versions oldest first instead, and with the index it
// reads them in that order and stops once they make enough room, where it
// would otherwise read every version of the space. The trash needs no such
// index: a space's trash items are keyed by the time they were deleted
// (storage.TrashKey: 19 digits from 2001 to 2286) already.
//
// Every change to the versions bucket changes the index in the same
// transaction (replaceContent, dropVersion, RestoreVersion); the check
// compares the two (check_versionages.go).
var bucketVersionAges = []byte("version_ages") // space id \0 replaced (8 bytes) file id \0 version key → size (8 bytes)

// versionAgeKey returns the index key of version key of file fileID of
// space spaceID, replaced at replaced. The time is the Unix nanoseconds
// with the sign bit flipped, big-endian, so that the keys sort by time.
func versionAgeKey(spaceID, fileID, key string, replaced time.Time) []byte {
	k := make([]byte, 0, len(spaceID)+1+8+len(fileID)+1+len(key))
	k = append(append(k, spaceID...), 0)
	k = binary.BigEndian.AppendUint64(k, uint64(replaced.UnixNano())^1<<63)
	k = append(append(k, fileID...), 0)
	return append(k, key...)
}

// versionAgePrefix is the prefix of every index key of space spaceID.
func versionAgePrefix(spaceID string) []byte {
	return append([]byte(spaceID), 0)
}

// parseVersionAge reads an index entry of a space whose keys start with
// prefix back into the version it stands for.
func parseVersionAge(prefix, k, v []byte) (storage.Kept, error) {
	rest := k[len(prefix):]
	if len(rest) < 8 || len(v) != 8 {
		return storage.Kept{}, fmt.Errorf("version age entry %q: %w", k, errCorrupt)
	}
	ns := int64(binary.BigEndian.Uint64(rest) ^ 1<<63)
	file, key, ok := bytes.Cut(rest[8:], []byte{0})
	if !ok {
		return storage.Kept{}, fmt.Errorf("version age entry %q: %w", k, errCorrupt)
	}
	return storage.Kept{
		FileID:     string(file),
		VersionKey: string(key),
		Size:       int64(binary.BigEndian.Uint64(v)),
		Since:      time.Unix(0, ns).UTC(),
	}, nil
}

func versionAgeValue(size int64) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(size))
}

func (t *txn) versionAges() countedBucket {
	return t.bucket(&t.open.versionAges, bucketVersionAges)
}

// indexVersionAge adds the index entry of v, a version of file fileID of
// space spaceID just written.
func (t *txn) indexVersionAge(spaceID, fileID string, v *versionRec) error {
	return t.versionAges().Put(versionAgeKey(spaceID, fileID, v.Key, v.Replaced), versionAgeValue(v.File.Size))
}

// unindexVersionAge deletes the index entry of v, a version being deleted.
func (t *txn) unindexVersionAge(spaceID, fileID string, v *versionRec) error {
	return t.versionAges().Delete(versionAgeKey(spaceID, fileID, v.Key, v.Replaced))
}

// oldestKept returns what space spaceID keeps for undo, its trash items
// and the versions of its files, oldest first, as far as the first whose
// sizes add up to need: storage.Evictions chooses from those what it
// would from all, and an eviction in a space that keeps a great many
// reads a few. Equal times are ordered trash items first, each kind in
// key order, as storage.Evictions would order keptOf's list.
func (t *txn) oldestKept(spaceID string, need int64) ([]storage.Kept, error) {
	trash := newTrashAges(t, spaceID)
	versions := newVersionAges(t, spaceID)
	var (
		kept  []storage.Kept
		freed int64
	)
	for freed < need {
		deleted, tok, err := trash.peek()
		if err != nil {
			return nil, err
		}
		vk, vok, err := versions.peek()
		if err != nil {
			return nil, err
		}
		var next storage.Kept
		switch {
		case tok && (!vok || !vk.Since.Before(deleted)):
			if next, err = trash.take(); err != nil {
				return nil, err
			}
		case vok:
			next = vk
			versions.next()
		default:
			return kept, nil // all of it is not enough
		}
		kept = append(kept, next)
		freed += next.Size
	}
	return kept, nil
}

// trashAges reads a space's trash items in the order they were deleted.
type trashAges struct {
	t      *txn
	prefix []byte
	c      *bolt.Cursor
	k, v   []byte
}

func newTrashAges(t *txn, spaceID string) *trashAges {
	a := &trashAges{t: t, prefix: trashItemKey(spaceID, ""), c: t.trash().Cursor()}
	a.k, a.v = a.c.Seek(a.prefix)
	return a
}

// peek returns when the item at the cursor was deleted, false past the
// space's last. It reads the time from the key, so that the item is
// decoded only when it is taken.
func (a *trashAges) peek() (time.Time, bool, error) {
	if a.k == nil || !bytes.HasPrefix(a.k, a.prefix) {
		return time.Time{}, false, nil
	}
	key := a.k[len(a.prefix):]
	nanos, _, _ := bytes.Cut(key, []byte{'.'})
	ns, err := strconv.ParseInt(string(nanos), 10, 64)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("trash key %q: %w", key, errCorrupt)
	}
	return time.Unix(0, ns), true, nil
}

// take returns the item at the cursor and moves past it.
func (a *trashAges) take() (storage.Kept, error) {
	item, err := decodeTrash(string(a.k[len(a.prefix):]), a.v)
	if err != nil {
		return storage.Kept{}, err
	}
	top, err := a.t.itemNode(item)
	if err != nil {
		return storage.Kept{}, err
	}
	a.k, a.v = a.c.Next()
	return storage.Kept{TrashKey: item.Key, Size: top.Size, Since: item.Deleted}, nil
}

// versionAges reads a space's versions oldest first, from the index.
type versionAges struct {
	prefix []byte
	c      *bolt.Cursor
	k, v   []byte
}

func newVersionAges(t *txn, spaceID string) *versionAges {
	a := &versionAges{prefix: versionAgePrefix(spaceID), c: t.versionAges().Cursor()}
	a.k, a.v = a.c.Seek(a.prefix)
	return a
}

// peek returns the version at the cursor, false past the space's last.
func (a *versionAges) peek() (storage.Kept, bool, error) {
	if a.k == nil || !bytes.HasPrefix(a.k, a.prefix) {
		return storage.Kept{}, false, nil
	}
	k, err := parseVersionAge(a.prefix, a.k, a.v)
	return k, err == nil, err
}

func (a *versionAges) next() { a.k, a.v = a.c.Next() }

// buildVersionAges fills the version age index of a database from before
// it (layout 3), in transactions of batch versions each, so
// that the first open of a database with a great many versions holds a
// bounded part of the index in memory, and then records layout 4. Nothing
// else uses the database meanwhile (Open has not returned); an open
// interrupted half-way starts again, the layout being 3 still.
func buildVersionAges(db *bolt.DB, batch int) error {
	done := false
	err := db.Update(func(tx *bolt.Tx) error {
		v, err := layoutOf(tx)
		if err != nil || v == layoutVersion {
			done = true
			return err
		}
		if tx.Bucket(bucketVersionAges) != nil {
			if err := tx.DeleteBucket(bucketVersionAges); err != nil {
				return err
			}
		}
		_, err = tx.CreateBucket(bucketVersionAges)
		return err
	})
	if err != nil || done {
		return err
	}
	var after []byte
	for {
		err := db.Update(func(tx *bolt.Tx) error {
			after, err = indexVersionAges(tx, after, batch)
			return err
		})
		if err != nil {
			return fmt.Errorf("build the version age index: %w", err)
		}
		if after == nil {
			break
		}
	}
	return db.Update(func(tx *bolt.Tx) error { return setLayout(tx, layoutVersion) })
}

// versionAgeBatch is how many versions one transaction of
// buildVersionAges indexes at Open: a few megabytes of dirty pages.
const versionAgeBatch = 10_000

// indexVersionAges indexes up to n versions from the first after the key
// after (nil: the first), and returns the last one's key, or nil when it
// indexed the last.
func indexVersionAges(tx *bolt.Tx, after []byte, n int) ([]byte, error) {
	ages := tx.Bucket(bucketVersionAges)
	c := tx.Bucket(bucketVersions).Cursor()
	k, v := c.First()
	if after != nil {
		if k, v = c.Seek(after); bytes.Equal(k, after) {
			k, v = c.Next()
		}
	}
	for i := 0; k != nil; k, v = c.Next() {
		if i == n {
			return after, nil
		}
		sp, rest, ok1 := bytes.Cut(k, []byte{0})
		file, key, ok2 := bytes.Cut(rest, []byte{0})
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("version key %q: %w", k, errCorrupt)
		}
		r, err := decodeVersion(string(key), v)
		if err != nil {
			// The check reports it, and its repair drops it.
			after = bytes.Clone(k)
			continue
		}
		if err := ages.Put(versionAgeKey(string(sp), string(file), r.Key, r.Replaced), versionAgeValue(r.File.Size)); err != nil {
			return nil, err
		}
		after = bytes.Clone(k)
		i++
	}
	return nil, nil
}
