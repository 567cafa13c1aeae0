package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.LockStore = (*Store)(nil)

// Lock records live in two buckets:
//
//	locks       space id + "/" + token → encoded lock
//	lock_tokens token → space id
//
// The first keeps a space's locks together, so the locks of a space are
// one cursor seek away and a space without locks costs a single seek; the
// second makes tokens unique across the store. Space ids contain no "/",
// so a space's prefix never matches another space's keys.
var (
	bucketLocks      = []byte("locks")
	bucketLockTokens = []byte("lock_tokens")
)

// The lock formats: 2 adds the locker's groups; a lock of format 1 has
// none recorded.
const (
	lockFormatV1 = 1
	lockFormat   = 2
)

func lockKey(spaceID, token string) []byte {
	return childKey(spaceID, token)
}

// isLive reports whether l has not expired at now.
func isLive(l storage.Lock, now time.Time) bool {
	return l.Expires.IsZero() || now.Before(l.Expires)
}

// CreateLock adds l unless it conflicts with a live lock, checked in the
// same write transaction. An empty token gets a fresh "urn:uuid:" one; a
// token already held by a live lock anywhere in the store is ErrExists.
func (s *Store) CreateLock(ctx context.Context, l storage.Lock, lim storage.LockLimits) (storage.Lock, error) {
	if err := ctx.Err(); err != nil {
		return storage.Lock{}, err
	}
	if err := validLock(l); err != nil {
		return storage.Lock{}, fmt.Errorf("create lock: %w", err)
	}
	if l.Token == "" {
		l.Token = "urn:uuid:" + uuid.NewString()
	}
	err := s.update(func(t *txn) error {
		node, err := t.nodeIn(l.SpaceID, l.NodeID)
		if err != nil {
			return err
		}
		if err := t.claimToken(l.Token, t.now); err != nil {
			return err
		}
		locks, err := t.liveLocks(l.SpaceID, t.now, true)
		if err != nil {
			return err
		}
		below := coversBelow(l, node)
		if err := t.checkLockConflicts(l, locks, below); err != nil {
			return err
		}
		if err := t.checkLockLimits(l, locks, lim, below); err != nil {
			return err
		}
		l.Created = t.now.Round(0).UTC() // as it reads back
		l.Expires = storage.LockExpiry(l.Created, l.Timeout)
		return t.putLock(l)
	})
	if err != nil {
		return storage.Lock{}, fmt.Errorf("create lock on %s: %w", l.NodeID, err)
	}
	return l, nil
}

// coversBelow reports whether l, on node, covers nodes below it: a Deep
// lock of a folder. Nothing lies below a file, so the walks that look for
// locks below one are skipped: davfs2 locks every file it creates with
// Depth infinity, and a copied folder holds a lock per file.
func coversBelow(l storage.Lock, node rec) bool { return l.Deep && node.IsFolder() }

// validLock checks what a caller gives CreateLock.
func validLock(l storage.Lock) error {
	if err := storage.ValidID("space id", l.SpaceID); err != nil {
		return err
	}
	return storage.ValidLockRequest(l)
}

// claimToken fails with ErrExists when a live lock holds token, and drops
// an expired one that does.
func (t *txn) claimToken(token string, now time.Time) error {
	spaceID := t.lockTokens().Get([]byte(token))
	if spaceID == nil {
		return nil
	}
	l, ok, err := t.lock(string(spaceID), token)
	if err != nil {
		return err
	}
	if ok && isLive(l, now) {
		return storage.LockTokenTaken(token)
	}
	return t.deleteLock(string(spaceID), token)
}

// checkLockConflicts fails with ErrLocked when one of the live locks of the
// space conflicts with l; below says whether l covers nodes below its own
// (coversBelow).
func (t *txn) checkLockConflicts(l storage.Lock, locks []storage.Lock, below bool) error {
	if len(locks) == 0 {
		return nil
	}
	above, err := t.ancestors(l.NodeID)
	if err != nil {
		return err
	}
	under := t.subtree(l.NodeID)
	for _, o := range locks {
		if l.Scope == storage.LockShared && o.Scope == storage.LockShared {
			continue
		}
		overlap := o.NodeID == l.NodeID || (o.Deep && above[o.NodeID])
		if !overlap && below {
			if overlap, err = under.contains(o.NodeID); err != nil {
				return err
			}
		}
		if overlap {
			return storage.LockConflict(o.Root)
		}
	}
	return nil
}

// checkLockLimits applies lim to l against the counting live locks of its
// space (storage.CheckLockLimits); below is coversBelow.
func (t *txn) checkLockLimits(l storage.Lock, locks []storage.Lock, lim storage.LockLimits, below bool) error {
	places := storage.LockPlaces{}
	var err error
	if places.Above, err = t.ancestors(l.NodeID); err != nil {
		return err
	}
	if below && lim.NeedsInside(l) {
		if places.Inside, err = t.lockPathsInside(l.NodeID, locks); err != nil {
			return err
		}
	}
	return storage.CheckLockLimits(l, locks, lim, places)
}

// lockPathsInside maps each node of locks strictly below top to its path
// up to top (top excluded), as storage.LockPlaces.Inside wants it.
func (t *txn) lockPathsInside(top string, locks []storage.Lock) (map[string][]string, error) {
	under := t.subtree(top)
	paths := map[string][]string{}
	for _, l := range locks {
		if _, done := paths[l.NodeID]; done || l.NodeID == top {
			continue
		}
		inside, err := under.contains(l.NodeID)
		if err != nil {
			return nil, err
		}
		if !inside {
			continue
		}
		var path []string
		for id := l.NodeID; id != top; {
			path = append(path, id)
			parent, err := t.parentOf(id)
			if err != nil {
				return nil, err
			}
			id = parent
		}
		paths[l.NodeID] = path
	}
	return paths, nil
}

// subtree tells which nodes lie in the subtree of top (top included). It
// remembers the answer for every node on the way up, so that many locks in
// one folder cost one walk up the tree.
type subtree struct {
	t     *txn
	known map[string]bool // node id → inside
}

func (t *txn) subtree(top string) *subtree {
	return &subtree{t: t, known: map[string]bool{top: true}}
}

// contains reports whether id is in the subtree. A node that is gone, as
// the node of a lock could be after damage, is in no subtree.
func (s *subtree) contains(id string) (bool, error) {
	var path []string
	inside := false
	for id != "" {
		if v, ok := s.known[id]; ok {
			inside = v
			break
		}
		path = append(path, id)
		r, ok, err := s.t.node(id)
		if err != nil {
			return false, err
		}
		if !ok {
			break
		}
		id = r.ParentID
	}
	for _, p := range path {
		s.known[p] = inside
	}
	return inside, nil
}

// ancestors returns the set of id and its ancestors.
func (t *txn) ancestors(id string) (map[string]bool, error) {
	set := map[string]bool{}
	for id != "" {
		set[id] = true
		parent, err := t.parentOf(id)
		if err != nil {
			return nil, err
		}
		id = parent
	}
	return set, nil
}

// parentOf returns the parent of ancestor id; a missing ancestor means the
// tree is corrupt, for a lock's path or ancestry can only name live nodes.
func (t *txn) parentOf(id string) (string, error) {
	r, ok, err := t.node(id)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("ancestor %s missing: %w", id, errCorrupt)
	}
	return r.ParentID, nil
}

// RefreshLock restarts the timeout of the live lock with token.
func (s *Store) RefreshLock(ctx context.Context, spaceID, token string, timeout time.Duration) (storage.Lock, error) {
	if err := storage.ValidLockTimeout(timeout); err != nil {
		return storage.Lock{}, err
	}
	l, err := inTxn(ctx, s.update, func(t *txn) (storage.Lock, error) {
		l, err := t.liveLock(spaceID, token, t.now)
		if err != nil {
			return storage.Lock{}, err
		}
		l.Timeout = timeout
		l.Expires = storage.LockExpiry(t.now.Round(0).UTC(), timeout)
		return l, t.putLock(l)
	})
	if err != nil {
		return storage.Lock{}, fmt.Errorf("refresh lock %q: %w", token, err)
	}
	return l, nil
}

// RemoveLock deletes the live lock with token.
func (s *Store) RemoveLock(ctx context.Context, spaceID, token string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.update(func(t *txn) error {
		if _, err := t.liveLock(spaceID, token, t.now); err != nil {
			return err
		}
		return t.deleteLock(spaceID, token)
	})
	if err != nil {
		return fmt.Errorf("remove lock %q: %w", token, err)
	}
	return nil
}

// liveLock returns the live lock of the space with token, if it counts
// (storage.LockCounts), or ErrNotFound. It reads that lock alone: a space
// may hold thousands (a copy by davfs2 holds one per file, and unlocks
// each after its upload).
func (t *txn) liveLock(spaceID, token string, now time.Time) (storage.Lock, error) {
	l, ok, err := t.lock(spaceID, token)
	if err != nil {
		return storage.Lock{}, err
	}
	if ok && isLive(l, now) {
		sp, err := t.space(spaceID)
		if errors.Is(err, storage.ErrNotFound) {
			sp = storage.Space{ID: spaceID} // locks of no members
		} else if err != nil {
			return storage.Lock{}, err
		}
		if storage.LockCounts(sp, l) {
			return l, nil
		}
	}
	return storage.Lock{}, storage.LockNotFound(spaceID, token)
}

// LocksOn returns the live locks covering nodeID: its own and the Deep
// locks of its ancestors, and with below also the locks of its subtree.
func (s *Store) LocksOn(ctx context.Context, spaceID, nodeID string, below bool) ([]storage.Lock, error) {
	now := s.now()
	out, err := inTxn(ctx, s.view, func(t *txn) ([]storage.Lock, error) {
		node, err := t.nodeIn(spaceID, nodeID)
		if err != nil {
			return nil, err
		}
		below = below && node.IsFolder() // nothing lies below a file
		var filter func(node []byte, deep bool) bool
		if !below {
			above, err := t.ancestors(nodeID)
			if err != nil {
				return nil, err
			}
			// Only the node's own locks and the Deep ones above it can
			// cover it: the others need no decoding (a copy by davfs2
			// holds a lock per file, and each file's write asks).
			filter = func(node []byte, deep bool) bool { return string(node) == nodeID || (deep && above[string(node)]) }
		}
		locks, err := t.liveLocksOf(spaceID, now, filter)
		if err != nil || len(locks) == 0 {
			return nil, err
		}
		return t.locksCovering(nodeID, locks, below)
	})
	if err != nil {
		return nil, fmt.Errorf("locks on %s: %w", nodeID, err)
	}
	return out, nil
}

// locksCovering picks from locks those covering nodeID.
func (t *txn) locksCovering(nodeID string, locks []storage.Lock, below bool) ([]storage.Lock, error) {
	above, err := t.ancestors(nodeID)
	if err != nil {
		return nil, err
	}
	under := t.subtree(nodeID)
	var out []storage.Lock
	for _, l := range locks {
		covers := l.NodeID == nodeID || (l.Deep && above[l.NodeID])
		if !covers && below {
			if covers, err = under.contains(l.NodeID); err != nil {
				return nil, err
			}
		}
		if covers {
			out = append(out, l)
		}
	}
	return out, nil
}

// SpaceLocks returns the live locks of a space, ordered by token. A space
// without locks (or unknown) has none; that costs one cursor seek.
func (s *Store) SpaceLocks(ctx context.Context, spaceID string) ([]storage.Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Every listing asks, most often of a space without locks: no inTxn
	// here, whose closures would allocate on this path.
	now := s.now()
	var out []storage.Lock
	err := s.view(func(t *txn) (err error) {
		out, err = t.liveLocks(spaceID, now, false)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("locks of space %s: %w", spaceID, err)
	}
	return out, nil
}

// liveLocks returns the live locks of a space that count
// (storage.LockCounts); with purge (in a write transaction) it deletes the
// expired ones and those that no longer count.
func (t *txn) liveLocks(spaceID string, now time.Time, purge bool) ([]storage.Lock, error) {
	if !purge {
		return t.liveLocksOf(spaceID, now, nil)
	}
	return t.countingLocks(spaceID, now, nil, true)
}

// liveLocksOf returns the live locks of a space that count and whose
// place (their node, whether Deep) filter accepts; a nil filter accepts
// every lock.
func (t *txn) liveLocksOf(spaceID string, now time.Time, filter func(node []byte, deep bool) bool) ([]storage.Lock, error) {
	return t.countingLocks(spaceID, now, filter, false)
}

// countingLocks is liveLocks of the locks filter accepts (nil: all).
func (t *txn) countingLocks(spaceID string, now time.Time, filter func(node []byte, deep bool) bool, purge bool) ([]storage.Lock, error) {
	out, expired, err := readSpaceLocks(t.locks().raw(), spaceID, now, filter)
	if err != nil || len(out)+len(expired) == 0 {
		return out, err
	}
	sp, err := t.space(spaceID)
	if errors.Is(err, storage.ErrNotFound) {
		sp = storage.Space{ID: spaceID} // locks of no members
	} else if err != nil {
		return nil, err
	}
	out, stale := storage.CountingLocks(sp, out)
	if !purge {
		return out, nil
	}
	for _, l := range stale {
		expired = append(expired, l.Token)
	}
	for _, token := range expired {
		if err := t.deleteLock(spaceID, token); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readSpaceLocks reads the locks of a space from the locks bucket that
// filter accepts (nil: all): the live ones, and the tokens of the expired
// ones.
func readSpaceLocks(b *bolt.Bucket, spaceID string, now time.Time, filter func(node []byte, deep bool) bool) (live []storage.Lock, expired []string, err error) {
	prefix := lockKey(spaceID, "")
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if node, deep, ok := lockPlace(v); ok && filter != nil && !filter(node, deep) {
			continue
		}
		l, err := decodeLock(spaceID, string(k[len(prefix):]), v)
		if err != nil {
			return nil, nil, err
		}
		if isLive(l, now) {
			live = append(live, l)
		} else {
			expired = append(expired, l.Token)
		}
	}
	return live, expired, nil
}

// dropLocksBelow deletes the locks of top and of every node below it, and
// purges the space's expired locks. Call it before the nodes are removed
// or moved: it finds a lock's place from its node's ancestors.
func (t *txn) dropLocksBelow(top rec) error {
	locks, err := t.liveLocks(top.SpaceID, t.now, true)
	if err != nil {
		return err
	}
	under := t.subtree(top.ID)
	for _, l := range locks {
		inside, err := under.contains(l.NodeID)
		if err != nil {
			return err
		}
		if inside {
			if err := t.deleteLock(l.SpaceID, l.Token); err != nil {
				return err
			}
		}
	}
	return nil
}

// purgeLocks deletes every expired lock of the store, and the records it
// cannot read: a lock is short-lived, and one damaged record must not make
// every listing of its space fail.
func (t *txn) purgeLocks(now time.Time, log *zap.Logger) error {
	var stale [][]byte
	damaged := 0
	c := t.locks().Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		spaceID, token, _ := strings.Cut(string(k), "/")
		l, err := decodeLock(spaceID, token, v)
		if err != nil {
			damaged++
		}
		if err != nil || !isLive(l, now) {
			stale = append(stale, bytes.Clone(k))
		}
	}
	for _, k := range stale {
		spaceID, token, _ := strings.Cut(string(k), "/")
		if err := t.deleteLock(spaceID, token); err != nil {
			return err
		}
	}
	if damaged > 0 {
		log.Warn("removed unreadable lock records", zap.Int("count", damaged))
	}
	return nil
}

// lock returns the lock of the space with token, live or not, and whether
// it exists.
func (t *txn) lock(spaceID, token string) (storage.Lock, bool, error) {
	v := t.locks().Get(lockKey(spaceID, token))
	if v == nil {
		return storage.Lock{}, false, nil
	}
	l, err := decodeLock(spaceID, token, v)
	return l, err == nil, err
}

func (t *txn) putLock(l storage.Lock) error {
	if err := t.locks().Put(lockKey(l.SpaceID, l.Token), encodeLock(l)); err != nil {
		return err
	}
	return t.lockTokens().Put([]byte(l.Token), []byte(l.SpaceID))
}

func (t *txn) deleteLock(spaceID, token string) error {
	if err := t.locks().Delete(lockKey(spaceID, token)); err != nil {
		return err
	}
	return t.lockTokens().Delete([]byte(token))
}

// encodeLock encodes l without its space and token (they are the key).
// Layout: format, scope, deep (bytes), node, root, owner, user, user name
// (uvarint length + bytes each), created and expires as Unix seconds
// (varint) and nanoseconds (uvarint), timeout in nanoseconds (varint),
// then the number of groups (uvarint) and each group (uvarint length +
// bytes).
func encodeLock(l storage.Lock) []byte {
	groups := 0
	for _, g := range l.Groups {
		groups += binary.MaxVarintLen64 + len(g)
	}
	b := make([]byte, 0, 3+5*binary.MaxVarintLen16+6*binary.MaxVarintLen64+
		len(l.NodeID)+len(l.Root)+len(l.Owner)+len(l.User)+len(l.UserName)+groups)
	deep := byte(0)
	if l.Deep {
		deep = 1
	}
	b = append(b, lockFormat, byte(l.Scope), deep)
	b = appendString(b, l.NodeID)
	b = appendString(b, l.Root)
	b = appendString(b, l.Owner)
	b = appendString(b, l.User)
	b = appendString(b, l.UserName)
	b = appendTime(b, l.Created)
	b = appendTime(b, l.Expires)
	b = binary.AppendVarint(b, int64(l.Timeout))
	b = binary.AppendUvarint(b, uint64(len(l.Groups)))
	for _, g := range l.Groups {
		b = appendString(b, g)
	}
	return b
}

// lockPlace reads the node and the Deep flag of an encoded lock, which
// lead every format, without decoding the rest; ok is false for a record
// too short for them (decodeLock then tells what is wrong).
func lockPlace(v []byte) (node []byte, deep, ok bool) {
	if len(v) < 4 {
		return nil, false, false
	}
	n, k := binary.Uvarint(v[3:])
	if k <= 0 || n > uint64(len(v)-3-k) {
		return nil, false, false
	}
	return v[3+k : 3+k+int(n)], v[2] == 1, true
}

func decodeLock(spaceID, token string, v []byte) (storage.Lock, error) {
	d := decoder{b: v, s: string(v)}
	format := d.byte()
	if format != lockFormat && format != lockFormatV1 {
		return storage.Lock{}, fmt.Errorf("lock %q: unknown format: %w", token, errCorrupt)
	}
	l := storage.Lock{Token: token, SpaceID: spaceID}
	l.Scope = storage.LockScope(d.byte())
	l.Deep = d.byte() == 1
	l.NodeID = d.str()
	l.Root = d.str()
	l.Owner = d.str()
	l.User = d.str()
	l.UserName = d.str()
	l.Created = d.time()
	l.Expires = d.time()
	l.Timeout = time.Duration(d.varint())
	if format >= lockFormat {
		l.Groups = d.groups()
	}
	if d.err != nil || (l.Scope != storage.LockExclusive && l.Scope != storage.LockShared) {
		return storage.Lock{}, fmt.Errorf("lock %q: %w", token, errCorrupt)
	}
	return l, nil
}

// appendTime appends t as Unix seconds and nanoseconds; the zero time
// round-trips as zero.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

func (d *decoder) time() time.Time {
	if d.byte() == 0 {
		return time.Time{}
	}
	sec := d.varint()
	nsec := d.uvarint()
	if nsec >= 1e9 {
		d.fail()
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// groups reads the groups of a lock: a count, then each group. The count
// is checked against the bytes left, so a damaged record cannot make it
// allocate much.
func (d *decoder) groups() []string {
	n := d.uvarint()
	if n > uint64(len(d.b)-d.off) {
		d.fail()
		return nil
	}
	var groups []string
	for range n {
		groups = append(groups, d.str())
	}
	return groups
}
