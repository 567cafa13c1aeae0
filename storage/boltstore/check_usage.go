package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/davspaces/davspaces/storage"
)

// usageCount is every usage counter as a recount finds it.
type usageCount struct {
	spaces  map[string]spaceCounters
	uploads map[string]int // open uploads by user
	total   int64          // reserved bytes of the store
}

// recount counts every usage counter from what the snapshot t holds:
// dead properties, reservations and open uploads as recountUsage does,
// and the trash (the sizes of the items' nodes), versions and nodes of
// every space.
func (t *txn) recount() (usageCount, error) {
	u := usageCount{spaces: map[string]spaceCounters{}, uploads: map[string]int{}}
	if err := t.countProps(u.spaces); err != nil {
		return u, err
	}
	if err := t.countSessions(u.spaces, u.uploads); err != nil {
		return u, err
	}
	if err := t.countChunkedUploads(u.spaces, u.uploads); err != nil {
		return u, err
	}
	if err := t.countVersions(u.spaces); err != nil {
		return u, err
	}
	if err := t.countTrash(u.spaces); err != nil {
		return u, err
	}
	if err := t.countAllNodes(u.spaces); err != nil {
		return u, err
	}
	for _, c := range u.spaces {
		u.total += c.reserved
	}
	return u, nil
}

func (t *txn) countVersions(counters map[string]spaceCounters) error {
	return t.versions().ForEach(func(k, v []byte) error {
		t.countScan(len(k) + len(v))
		sp, rest, _ := bytes.Cut(k, []byte{0})
		_, key, _ := bytes.Cut(rest, []byte{0})
		r, err := decodeVersion(string(key), v)
		if err != nil {
			return nil // reported by the versions step
		}
		c := counters[string(sp)]
		c.versions += r.File.Size
		counters[string(sp)] = c
		return nil
	})
}

// countTrash adds up the nodes at the top of each space's trash, but
// those of the items hidden for a purge (purging.go).
func (t *txn) countTrash(counters map[string]spaceCounters) error {
	return t.spaces().ForEach(func(k, _ []byte) error {
		spaceID := string(k)
		var size int64
		err := t.scanChildren(trashSpaceID(spaceID), "", 0, func(r rec) error {
			if !t.isHidden(spaceID, r.Name) {
				size += r.Size
			}
			return nil
		})
		if err != nil {
			return err
		}
		if size != 0 {
			c := counters[spaceID]
			c.trash = size
			counters[spaceID] = c
		}
		return nil
	})
}

// stored reads the counters as the usage bucket keeps them.
func (t *txn) storedUsage() usageCount {
	u := usageCount{spaces: map[string]spaceCounters{}, uploads: map[string]int{}, total: t.reservedTotal()}
	c := t.usageBucket().Cursor()
	for k, _ := c.Seek(spaceUsagePrefix); k != nil && bytes.HasPrefix(k, spaceUsagePrefix); k, _ = c.Next() {
		id := string(k[len(spaceUsagePrefix):])
		u.spaces[id] = t.spaceCounters(id)
	}
	for k, _ := c.Seek(userUploadsPrefix); k != nil && bytes.HasPrefix(k, userUploadsPrefix); k, _ = c.Next() {
		user := string(k[len(userUploadsPrefix):])
		u.uploads[user] = t.openUploads(user)
	}
	return u
}

// checkUsage compares the usage counters with a recount. Both are read in
// one snapshot: the counters agree with one state of the store or with
// none. That snapshot reads the counted buckets through, which takes a
// while for a big store but only pins pages; the repair recounts again,
// holding the write lock as long.
func (c *checkRun) checkUsage() error {
	var stored, counted usageCount
	err := c.s.viewWalk(func(t *txn) (err error) {
		stored = t.storedUsage()
		counted, err = t.recount()
		return err
	})
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(unionKeys(stored.spaces, counted.spaces))) {
		have, want := stored.spaces[id], counted.spaces[id]
		if have == want {
			continue
		}
		f := problem(storage.ProblemUsage, id, "", "counters say %s, a recount %s", describeCounters(have), describeCounters(want))
		if err := c.found(f.withRepair(c.repairSpaceCounters(id))); err != nil {
			return err
		}
	}
	for _, user := range slices.Sorted(maps.Keys(unionKeys(stored.uploads, counted.uploads))) {
		have, want := stored.uploads[user], counted.uploads[user]
		if have == want {
			continue
		}
		f := problem(storage.ProblemUsage, "", "", "user %q has %d open uploads counted, a recount finds %d", user, have, want)
		if err := c.found(f.withRepair(c.repairUserUploads(user))); err != nil {
			return err
		}
	}
	if stored.total != counted.total {
		f := problem(storage.ProblemUsage, "", "", "the store counts %d reserved bytes, a recount %d", stored.total, counted.total)
		return c.found(f.withRepair(c.repairReservedTotal()))
	}
	return nil
}

func unionKeys[V any](a, b map[string]V) map[string]bool {
	keys := make(map[string]bool, len(a)+len(b))
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return keys
}

func describeCounters(c spaceCounters) string {
	return fmt.Sprintf("properties %d, reserved %d, trash %d, versions %d bytes, %d nodes", c.props, c.reserved, c.trash, c.versions, c.nodes)
}

// repairSpaceCounters sets the counters of space id from a recount made
// in the repair's transaction.
func (c *checkRun) repairSpaceCounters(id string) func() (bool, error) {
	return func() (bool, error) {
		return c.update(func(t *txn) (bool, error) {
			counted, err := t.recount()
			if err != nil || t.spaceCounters(id) == counted.spaces[id] {
				return false, err
			}
			return true, t.putSpaceCounters(id, counted.spaces[id])
		})
	}
}

func (c *checkRun) repairUserUploads(user string) func() (bool, error) {
	return func() (bool, error) {
		return c.update(func(t *txn) (bool, error) {
			counted, err := t.recount()
			if err != nil || t.openUploads(user) == counted.uploads[user] {
				return false, err
			}
			if counted.uploads[user] == 0 {
				return true, t.usageBucket().Delete(userUploadsKey(user))
			}
			return true, t.usageBucket().Put(userUploadsKey(user), appendUploads(counted.uploads[user]))
		})
	}
}

func (c *checkRun) repairReservedTotal() func() (bool, error) {
	return func() (bool, error) {
		return c.update(func(t *txn) (bool, error) {
			counted, err := t.recount()
			if err != nil || t.reservedTotal() == counted.total {
				return false, err
			}
			return true, t.putReservedTotal(counted.total)
		})
	}
}

// appendUploads encodes a count of open uploads as the usage bucket keeps it.
func appendUploads(n int) []byte { return binary.AppendUvarint(nil, uint64(n)) }
