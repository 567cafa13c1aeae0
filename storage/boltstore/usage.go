package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// What a space holds besides its files, and what each user has open, are
// running counters in the bucket
//
//	usage  "s\0" space id → dead property bytes, reserved bytes, trash
//	                        bytes, version bytes, nodes (varints; a record
//	                        from before the trash has the first two only,
//	                        one from before the nodes the first four)
//	       "u\0" user id  → unfinished uploads (uvarint)
//	       "reserved"     → reserved bytes of the whole store (varint)
//	       "nodes"        → present once the nodes are counted
//
// changed in the transaction that changes what they count. A database from
// before the bucket has its counters recounted once when it opens, one from
// before the node counters its nodes.
var (
	bucketUsage       = []byte("usage")
	keyReservedTotal  = []byte("reserved")
	keyNodesCounted   = []byte("nodes")
	spaceUsagePrefix  = []byte("s\x00")
	userUploadsPrefix = []byte("u\x00")
)

var _ storage.UsageReader = (*Store)(nil)

// spaceCounters are the counters of one space.
type spaceCounters struct {
	props, reserved int64
	trash, versions int64
	// nodes are the space's nodes but its root, live or in the trash,
	// and the versions of its files (storage.Usage.Nodes).
	nodes int64
}

func (t *txn) usageBucket() countedBucket { return t.counted(t.tx.Bucket(bucketUsage)) }

func spaceUsageKey(spaceID string) []byte {
	return append(bytes.Clone(spaceUsagePrefix), spaceID...)
}

func userUploadsKey(user string) []byte {
	return append(bytes.Clone(userUploadsPrefix), user...)
}

func (t *txn) spaceCounters(spaceID string) spaceCounters {
	v := t.usageBucket().Get(spaceUsageKey(spaceID))
	d := decoder{b: v, s: string(v)}
	var c spaceCounters
	if d.more() {
		c.props, c.reserved = d.varint(), d.varint()
	}
	if d.more() {
		c.trash, c.versions = d.varint(), d.varint()
	}
	if d.more() {
		c.nodes = d.varint()
	}
	return c
}

func (t *txn) putSpaceCounters(spaceID string, c spaceCounters) error {
	k := spaceUsageKey(spaceID)
	if c == (spaceCounters{}) {
		return t.usageBucket().Delete(k)
	}
	b := binary.AppendVarint(nil, c.props)
	b = binary.AppendVarint(b, c.reserved)
	if c.trash != 0 || c.versions != 0 || c.nodes != 0 {
		b = binary.AppendVarint(b, c.trash)
		b = binary.AppendVarint(b, c.versions)
	}
	if c.nodes != 0 {
		b = binary.AppendVarint(b, c.nodes)
	}
	return t.usageBucket().Put(k, b)
}

// addUndo counts trash and versions bytes into space spaceID. Keeping
// them never fails on the quota: what an upload needs evicts them
// (makeRoom, trimUndo).
func (t *txn) addUndo(spaceID string, trash, versions int64) error {
	if trash == 0 && versions == 0 {
		return nil
	}
	c := t.spaceCounters(spaceID)
	c.trash = max(c.trash+trash, 0)
	c.versions = max(c.versions+versions, 0)
	return t.putSpaceCounters(spaceID, c)
}

// addNodes counts delta nodes into space spaceID, checking its node cap
// when they grow.
func (t *txn) addNodes(spaceID string, delta int64) error {
	if delta > 0 {
		limit, err := t.nodeCap(spaceID)
		if err != nil {
			return err
		}
		if err := storage.CheckNodes(t.spaceCounters(spaceID).nodes, limit, delta); err != nil {
			return err
		}
	}
	return t.countNodes(spaceID, delta)
}

// countNodes counts delta nodes into space spaceID without a check: for
// what takes nodes away, or adds one in place of one it took.
func (t *txn) countNodes(spaceID string, delta int64) error {
	if delta == 0 {
		return nil
	}
	c := t.spaceCounters(spaceID)
	c.nodes = max(c.nodes+delta, 0)
	return t.putSpaceCounters(spaceID, c)
}

// nodeCap returns how many nodes space spaceID may hold.
func (t *txn) nodeCap(spaceID string) (int64, error) {
	quota, err := t.quota(spaceID)
	if err != nil {
		return 0, err
	}
	return storage.NodeCap(quota, t.maxNodes), nil
}

// Usage returns what space spaceID holds against its quota.
func (s *Store) Usage(ctx context.Context, spaceID string) (storage.Usage, error) {
	u, err := inTxn(ctx, s.view, func(t *txn) (storage.Usage, error) { return t.usage(spaceID) })
	if err != nil {
		return storage.Usage{}, fmt.Errorf("usage of space %s: %w", spaceID, err)
	}
	return u, nil
}

// usage reads what space spaceID holds: its files from the root's size,
// the rest from its counters.
func (t *txn) usage(spaceID string) (storage.Usage, error) {
	if _, err := t.space(spaceID); err != nil {
		return storage.Usage{}, err
	}
	root, ok, err := t.node(spaceID)
	if err != nil {
		return storage.Usage{}, err
	}
	if !ok {
		return storage.Usage{}, fmt.Errorf("root of space %s missing: %w", spaceID, errCorrupt)
	}
	c := t.spaceCounters(spaceID)
	return storage.Usage{Files: root.Size, Props: c.props, Reserved: c.reserved, Trash: c.trash, Versions: c.versions, Nodes: c.nodes}, nil
}

// quota returns the quota that applies to space spaceID.
func (t *txn) quota(spaceID string) (int64, error) {
	sp, err := t.space(spaceID)
	if err != nil {
		return 0, err
	}
	return storage.EffectiveQuota(sp, t.personalQuota).Quota, nil
}

// checkQuota fails with ErrInsufficientStorage when growing the space by
// delta bytes would exceed its quota. Shrinking always succeeds.
func (t *txn) checkQuota(spaceID string, delta int64) error {
	quota, u, ok, err := t.quotaFor(spaceID, delta)
	if !ok {
		return err
	}
	return u.Check(quota, delta)
}

// quotaFor reads the quota and usage a growth of space spaceID by delta
// bytes is checked against; ok is false when there is nothing to check
// (no growth, no quota) or the read failed.
func (t *txn) quotaFor(spaceID string, delta int64) (quota int64, u storage.Usage, ok bool, err error) {
	if delta <= 0 {
		return 0, u, false, nil
	}
	return t.quotaUsage(spaceID)
}

// quotaUsage reads the quota of space spaceID and what it holds; ok is
// false when the space has no quota or the read failed.
func (t *txn) quotaUsage(spaceID string) (quota int64, u storage.Usage, ok bool, err error) {
	if quota, err = t.quota(spaceID); err != nil || quota < 0 {
		return 0, u, false, err
	}
	if u, err = t.usage(spaceID); err != nil {
		return 0, u, false, err
	}
	return quota, u, true, nil
}

// checkGrowthWithinQuota fails with ErrInsufficientStorage when the space
// has grown since before and now holds more than its quota: a copy, whose
// files were checked before it began, also copies dead properties.
func (t *txn) checkGrowthWithinQuota(spaceID string, before storage.Usage) error {
	quota, u, ok, err := t.quotaUsage(spaceID)
	if !ok || u.Used() <= before.Used() {
		return err
	}
	return u.CheckWithin(quota)
}

// addProps counts delta bytes of dead properties into the space, checking
// the quota when they grow.
func (t *txn) addProps(spaceID string, delta int64) error {
	if delta == 0 {
		return nil
	}
	if err := t.checkQuota(spaceID, delta); err != nil {
		return err
	}
	c := t.spaceCounters(spaceID)
	c.props = max(c.props+delta, 0)
	return t.putSpaceCounters(spaceID, c)
}

// reserve counts delta reserved bytes into the space, checking the quota
// when they grow, and into the store's total.
func (t *txn) reserve(spaceID string, delta int64) error {
	if delta == 0 || spaceID == "" {
		return nil
	}
	if err := t.makeRoom(spaceID, delta); err != nil {
		return err
	}
	if err := t.checkQuota(spaceID, delta); err != nil {
		return err
	}
	c := t.spaceCounters(spaceID)
	c.reserved = max(c.reserved+delta, 0)
	if err := t.putSpaceCounters(spaceID, c); err != nil {
		return err
	}
	return t.putReservedTotal(max(t.reservedTotal()+delta, 0))
}

// release gives back reserved bytes; it never fails on the quota, and a
// space removed meanwhile has nothing to give back to.
func (t *txn) release(spaceID string, bytes int64) error {
	if bytes <= 0 || spaceID == "" {
		return nil
	}
	c := t.spaceCounters(spaceID)
	c.reserved = max(c.reserved-bytes, 0)
	if err := t.putSpaceCounters(spaceID, c); err != nil {
		return err
	}
	return t.putReservedTotal(max(t.reservedTotal()-bytes, 0))
}

func (t *txn) reservedTotal() int64 {
	v := t.usageBucket().Get(keyReservedTotal)
	d := decoder{b: v, s: string(v)}
	if !d.more() {
		return 0
	}
	return d.varint()
}

func (t *txn) putReservedTotal(n int64) error {
	return t.usageBucket().Put(keyReservedTotal, binary.AppendVarint(nil, n))
}

func (t *txn) openUploads(user string) int {
	v := t.usageBucket().Get(userUploadsKey(user))
	d := decoder{b: v, s: string(v)}
	if !d.more() {
		return 0
	}
	return int(d.uvarint())
}

// openUpload counts a new unfinished upload of user, within limit (0: no
// limit).
func (t *txn) openUpload(user string, limit int) error {
	n := t.openUploads(user)
	if err := storage.CheckOpenUploads(n, limit); err != nil {
		return err
	}
	return t.usageBucket().Put(userUploadsKey(user), binary.AppendUvarint(nil, uint64(n+1)))
}

// closeUpload counts an unfinished upload of user out.
func (t *txn) closeUpload(user string) error {
	n := t.openUploads(user) - 1
	if n <= 0 {
		return t.usageBucket().Delete(userUploadsKey(user))
	}
	return t.usageBucket().Put(userUploadsKey(user), binary.AppendUvarint(nil, uint64(n)))
}

// checkDisk refuses an upload announcing length bytes that the data
// directory's disk cannot hold besides what is reserved already.
func (s *Store) checkDisk(t *txn, length int64) error {
	if length <= 0 {
		return nil
	}
	free, ok := diskFree(s.dir)
	if !ok {
		return nil
	}
	return storage.CheckDiskFree(free, t.reservedTotal(), length)
}

// initUsage creates the usage bucket, recounting every counter when the
// database has none yet (a store from before the counters), and the nodes
// of every space when it has no node counters yet.
func (t *txn) initUsage() error {
	if t.tx.Bucket(bucketUsage) == nil {
		if _, err := t.tx.CreateBucket(bucketUsage); err != nil {
			return err
		}
		if err := t.recountUsage(); err != nil {
			return err
		}
	}
	if t.usageBucket().Get(keyNodesCounted) != nil {
		return nil
	}
	if err := t.recountNodes(); err != nil {
		return fmt.Errorf("counting the nodes of every space: %w", err)
	}
	return t.usageBucket().Put(keyNodesCounted, []byte{1})
}

// recountNodes sets the node counter of every space from what the
// database holds.
func (t *txn) recountNodes() error {
	counted := map[string]spaceCounters{}
	if err := t.countAllNodes(counted); err != nil {
		return err
	}
	return t.spaces().ForEach(func(k, _ []byte) error {
		c := t.spaceCounters(string(k))
		c.nodes = counted[string(k)].nodes
		return t.putSpaceCounters(string(k), c)
	})
}

// countAllNodes adds the nodes of every space, live and in its trash,
// roots aside, and the versions of its files to its counters.
func (t *txn) countAllNodes(counters map[string]spaceCounters) error {
	err := t.children().ForEach(func(k, v []byte) error {
		t.countScan(len(k) + len(v))
		r, err := decodeNode(v)
		if err != nil || r.ParentID == "" {
			return nil // a root; a bad record is the tree step's
		}
		space, err := t.spaceBelow(r.ParentID)
		if err == nil && space == "" {
			space, err = t.indexedSpace(&r) // damage the check reports
		}
		if err != nil {
			return err
		}
		spaceID, _, _ := strings.Cut(space, trashSuffix)
		c := counters[spaceID]
		c.nodes++
		counters[spaceID] = c
		return nil
	})
	if err != nil {
		return err
	}
	return t.versions().ForEach(func(k, _ []byte) error {
		sp, _, _ := bytes.Cut(k, []byte{0})
		c := counters[string(sp)]
		c.nodes++
		counters[string(sp)] = c
		return nil
	})
}

// recountUsage sets every counter from what the database holds.
func (t *txn) recountUsage() error {
	counters := map[string]spaceCounters{}
	uploads := map[string]int{}
	if err := t.countProps(counters); err != nil {
		return err
	}
	if err := t.countSessions(counters, uploads); err != nil {
		return err
	}
	if err := t.countChunkedUploads(counters, uploads); err != nil {
		return err
	}
	var total int64
	for id, c := range counters {
		total += c.reserved
		if err := t.putSpaceCounters(id, c); err != nil {
			return err
		}
	}
	for user, n := range uploads {
		if err := t.usageBucket().Put(userUploadsKey(user), binary.AppendUvarint(nil, uint64(n))); err != nil {
			return err
		}
	}
	return t.putReservedTotal(total)
}

// countProps adds the dead properties of every node to its space. Keys
// start with the node id, so one lookup serves all properties of a node.
func (t *txn) countProps(counters map[string]spaceCounters) error {
	var nodeID, spaceID string
	return t.props().ForEach(func(k, v []byte) error {
		t.countScan(len(k) + len(v))
		id, rest, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("property key %q: %w", k, errCorrupt)
		}
		if string(id) != nodeID {
			nodeID, spaceID = string(id), ""
			if n, found, err := t.node(nodeID); err != nil {
				return err
			} else if found {
				// A node in the trash counts in its space.
				spaceID, _, _ = strings.Cut(n.SpaceID, trashSuffix)
				if spaceID == "" { // damage the check reports
					if spaceID, err = t.indexedSpace(&n); err != nil {
						return err
					}
				}
			}
		}
		if spaceID == "" {
			return nil // a node gone; nothing to count
		}
		_, name, _ := bytes.Cut(rest, []byte{0}) // past the user
		ns, local, _ := bytes.Cut(name, []byte{0})
		c := counters[spaceID]
		c.props += storage.PropBytes(storage.PropName{Space: string(ns), Local: string(local)}, string(v))
		counters[spaceID] = c
		return nil
	})
}

func (t *txn) countSessions(counters map[string]spaceCounters, uploads map[string]int) error {
	return t.sessions().ForEach(func(k, v []byte) error {
		// A record that does not decode is ended when the store opens.
		if r, err := decodeSession(string(k), v); err == nil {
			countUpload(counters, uploads, r.SpaceID, r.User, storage.UploadReservation(r.UploadSession))
		}
		return nil
	})
}

func (t *txn) countChunkedUploads(counters map[string]spaceCounters, uploads map[string]int) error {
	return t.chunkedUploads().ForEach(func(k, v []byte) error {
		if r, err := decodeChunkedUpload(string(k), v); err == nil {
			countUpload(counters, uploads, r.SpaceID, r.User, r.reservation())
		}
		return nil
	})
}

// countUpload counts an unfinished upload of user, and the bytes it
// reserves in space spaceID; one in no space (a chunked upload from
// before reservations) reserves nothing.
func countUpload(counters map[string]spaceCounters, uploads map[string]int, spaceID, user string, reserved int64) {
	if spaceID != "" {
		c := counters[spaceID]
		c.reserved += reserved
		counters[spaceID] = c
	}
	uploads[user]++
}
