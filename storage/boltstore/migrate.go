package boltstore

import (
	"bytes"
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// layoutSpaceInRecords is layout 2, whose node records hold their space.
const layoutSpaceInRecords = 2

// layoutSpaceFromRoot is layout 3, without the version age index
// (versionages.go), which buildVersionAges adds to make layout 4.
const layoutSpaceFromRoot = 3

// The buckets of layout 1, which migrateLayout empties into those of the
// current layout and deletes.
var (
	bucketNodesByID = []byte("nodes")    // node id → encoded node of format 1
	bucketChildIDs  = []byte("children") // parent id + "/" + name → child id
)

// migrateLayout brings the database to layout 3 (or leaves it at
// layoutVersion), in tx, and records the version; buildVersionAges takes
// it on from there in transactions of its own. The buckets of the current
// layout must exist.
//
// Layout 2 becomes layout 3 without a record written: its node records
// (format 2) hold a space that the parent chains already agree with, and
// decodeNode skips it; each loses it when it is next written. The version
// goes up all the same, so that a binary of layout 2, which cannot read
// format 3, refuses the database rather than misreading it.
func migrateLayout(tx *bolt.Tx) error {
	n, err := layoutOf(tx)
	switch {
	case err != nil:
		return err
	case n == layoutVersion || n == layoutSpaceFromRoot:
		return nil
	case n == layoutSpaceInRecords:
		return setLayout(tx, layoutSpaceFromRoot)
	}
	if old := tx.Bucket(bucketNodesByID); old != nil {
		if err := migrateFromLayout1(tx, old); err != nil {
			return fmt.Errorf("migrate database to layout %d: %w", layoutSpaceFromRoot, err)
		}
	}
	return setLayout(tx, layoutSpaceFromRoot)
}

// layoutOf returns the layout of the database: 1 when it records none.
func layoutOf(tx *bolt.Tx) (int, error) {
	v := tx.Bucket(bucketMeta).Get(keyLayout)
	if v == nil {
		return 1, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < layoutSpaceInRecords || n > layoutVersion {
		return 0, fmt.Errorf("database layout %q, this version reads layouts %d to %d: %w", v, layoutSpaceInRecords, layoutVersion, errCorrupt)
	}
	return n, nil
}

func setLayout(tx *bolt.Tx, n int) error {
	return tx.Bucket(bucketMeta).Put(keyLayout, []byte(strconv.Itoa(n)))
}

// migrateFromLayout1 moves every node record from its id to its place in
// the tree, checks the old children index against the result and deletes
// the buckets of layout 1.
func migrateFromLayout1(tx *bolt.Tx, old *bolt.Bucket) error {
	index, tree := tx.Bucket(bucketNodes), tx.Bucket(bucketChildren)
	children := 0 // nodes with a parent
	err := old.ForEach(func(id, v []byte) error {
		r, err := decodeNodeByID(string(id), v)
		if err != nil {
			return err
		}
		if r.ParentID != "" {
			children++
		}
		k := recordKey(&r)
		if tree.Get(k) != nil {
			return fmt.Errorf("node %s: place %q taken twice: %w", r.ID, k, errCorrupt)
		}
		if err := tree.Put(k, encodeNode(&r)); err != nil {
			return err
		}
		return index.Put(id, k)
	})
	if err != nil {
		return err
	}
	// Etags hash the sequence, so it must go on from where it was.
	if err := index.SetSequence(old.Sequence()); err != nil {
		return err
	}
	if err := checkChildIDs(tx.Bucket(bucketChildIDs), index, children); err != nil {
		return err
	}
	if err := tx.DeleteBucket(bucketNodesByID); err != nil {
		return err
	}
	if tx.Bucket(bucketChildIDs) == nil {
		return nil
	}
	return tx.DeleteBucket(bucketChildIDs)
}

// checkChildIDs checks that the old children index has want entries and
// that each names the node now stored at its key: a listing would
// otherwise lose or gain children in the migration.
func checkChildIDs(children, index *bolt.Bucket, want int) error {
	n := 0
	if children != nil {
		err := children.ForEach(func(k, id []byte) error {
			if !bytes.Equal(index.Get(id), k) {
				return fmt.Errorf("children entry %q: node %s is not there: %w", k, id, errCorrupt)
			}
			n++
			return nil
		})
		if err != nil {
			return err
		}
	}
	if n != want {
		return fmt.Errorf("%d children entries for %d nodes with a parent: %w", n, want, errCorrupt)
	}
	return nil
}
