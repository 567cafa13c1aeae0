package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.Retainer = (*Store)(nil)

// expireBatch bounds what one ExpireUndo pass removes, so that a pass
// never holds the write lock for long.
const expireBatch = 256

// versionScanBudget bounds the version records one ExpireUndo pass reads:
// versions are keyed by file, not by age, so finding the expired ones
// reads them all, and a pass every minute over a store of a million
// versions would read every one each time. A pass goes on where the last
// one stopped (versionSweep), and the expiry goes round the store over
// several passes.
const versionScanBudget = 8192

// versionSweep is where the next expiry pass starts reading versions.
type versionSweep struct {
	mu     sync.Mutex
	next   []byte // the key prefix of a file's versions; nil: the first
	budget int    // versionScanBudget; tests lower it
}

// SetRetention applies p from now on; the next sweep applies it to what
// is kept already.
func (s *Store) SetRetention(p storage.RetentionPolicy) {
	p.Spaces = maps.Clone(p.Spaces)
	s.retention.Store(&p)
}

// undoRef is a thing a space keeps for undo, in a pass over the store.
type undoRef struct {
	spaceID string
	kept    storage.Kept
}

// ExpireUndo finishes the purges of up to expireBatch hidden trash items
// a stop or a failure left (finishHidden), and removes up to expireBatch
// trash items and versions the retention no longer keeps, among the
// versions of the files it reads next (versionScanBudget): it finds them
// in a snapshot, then removes each trash item in parts (expireTrashItem)
// and the versions, file by file, in one transaction.
func (s *Store) ExpireUndo(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// A hidden item that cannot be purged holds up no expiry.
	finished, hiddenErr := s.finishHidden(ctx, expireBatch)
	removed, err := s.expireUndo(ctx)
	return finished + removed, errors.Join(hiddenErr, err)
}

// expireUndo is ExpireUndo's expiry of what the retention no longer keeps.
func (s *Store) expireUndo(ctx context.Context) (int, error) {
	s.versionSweep.mu.Lock()
	defer s.versionSweep.mu.Unlock()
	var expired []undoRef
	err := s.view(func(t *txn) error {
		t.now = s.now()
		var err error
		expired, err = t.expiredTrash(expireBatch)
		if err != nil {
			return err
		}
		expired, s.versionSweep.next, err = t.expiredVersions(expired, expireBatch, s.versionSweep.next, s.versionScanBudget())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("expire trash and versions: %w", err)
	}
	removed := 0
	files := map[[2]string]bool{}
	for _, ref := range expired {
		if ref.kept.TrashKey == "" {
			files[[2]string{ref.spaceID, ref.kept.FileID}] = true
			continue
		}
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		expired, err := s.expireTrashItem(ctx, ref)
		if expired {
			removed++
		}
		if err != nil {
			return removed, fmt.Errorf("expire trash item %s: %w", ref.kept.TrashKey, err)
		}
	}
	if len(files) == 0 {
		return removed, nil
	}
	pruned := 0
	err = s.update(func(t *txn) error {
		pruned = 0
		for f := range files {
			n, err := t.pruneVersions(f[0], f[1])
			if err != nil {
				return err
			}
			pruned += n
		}
		return nil
	})
	if err != nil {
		return removed, fmt.Errorf("expire versions: %w", err)
	}
	return removed + pruned, nil
}

// expireTrashItem removes trash item ref if the retention still does not
// keep it, in parts, and reports whether it did. The transaction that
// decides it hides the item (hideTrashItem), a few writes whatever it
// holds, and the parts destroy it after: a restore of the item is
// decided against the expiry in that one transaction, and brings the
// item back whole or finds nothing, never a part left between two parts.
// An item a stop leaves hidden is the next pass's (finishHidden).
func (s *Store) expireTrashItem(ctx context.Context, ref undoRef) (bool, error) {
	var (
		p       trashPurge
		expired bool
	)
	err := s.update(func(t *txn) error {
		item, err := t.trashItem(ref.spaceID, ref.kept.TrashKey)
		if errors.Is(err, storage.ErrNotFound) || err == nil && !t.retentionOf(ref.spaceID).TrashExpired(item.Deleted, t.now) {
			return nil // restored or purged meanwhile, or kept longer now
		}
		if err != nil {
			return err
		}
		p, err = t.hideTrashItem(ref.spaceID, item)
		expired = err == nil
		return err
	})
	if err != nil || !expired {
		return false, err
	}
	err = s.purgeInParts(ctx, p, purgeNodesPerTxn)
	if errors.Is(err, storage.ErrNotFound) {
		err = nil // another pass finished it (finishHidden)
	}
	return true, err
}

// expiredTrash returns up to limit trash items of the whole store that
// the retention no longer keeps at t.now. An item's key starts with the
// time it was deleted (storage.TrashKey: 19 digits from 2001 to 2286), so
// a space's items come in the order they were deleted: the pass reads a
// space's expired items and the first one kept, then seeks to the next
// space, rather than reading every item of the store each minute.
func (t *txn) expiredTrash(limit int) ([]undoRef, error) {
	var out []undoRef
	c := t.trash().Cursor()
	for k, v := c.First(); k != nil && len(out) < limit; {
		spaceID, key, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return nil, fmt.Errorf("trash key %q: %w", k, errCorrupt)
		}
		item, err := decodeTrash(string(key), v)
		if err != nil {
			return nil, err
		}
		if !t.retentionOf(string(spaceID)).TrashExpired(item.Deleted, t.now) {
			// The rest of the space's trash was deleted later.
			k, v = c.Seek(append(bytes.Clone(spaceID), 1))
			continue
		}
		out = append(out, undoRef{spaceID: string(spaceID), kept: storage.Kept{TrashKey: item.Key}})
		k, v = c.Next()
	}
	return out, nil
}

// versionScanBudget returns how many version records a pass reads.
func (s *Store) versionScanBudget() int {
	if s.versionSweep.budget > 0 {
		return s.versionSweep.budget
	}
	return versionScanBudget
}

// expiredVersions appends to out, up to limit in all, the versions the
// retention no longer keeps, a file's versions at a time, starting at the
// versions of the file whose key prefix is from (nil: the first file).
// It reads the versions of files until it has read budget records, and
// returns where the next pass starts: the prefix of the first file it did
// not read, or nil once it read the last.
func (t *txn) expiredVersions(out []undoRef, limit int, from []byte, budget int) ([]undoRef, []byte, error) {
	var (
		group     []storage.Version
		groupOf   []byte // space id \0 file id \0
		spaceID   string
		fileID    string
		read      int
		flushFile = func() {
			if len(group) == 0 {
				return
			}
			storage.SortVersions(group)
			for _, v := range t.retentionOf(spaceID).VersionsToPrune(group, t.now) {
				out = append(out, undoRef{spaceID: spaceID, kept: storage.Kept{FileID: fileID, VersionKey: v.Key}})
			}
			group = group[:0]
		}
	)
	c := t.versions().Cursor()
	k, v := c.First()
	if from != nil {
		k, v = c.Seek(from)
	}
	for ; k != nil; k, v = c.Next() {
		sp, rest, ok1 := bytes.Cut(k, []byte{0})
		file, key, ok2 := bytes.Cut(rest, []byte{0})
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("version key %q: %w", k, errCorrupt)
		}
		prefix := k[:len(k)-len(key)]
		if !bytes.Equal(prefix, groupOf) {
			flushFile()
			if len(out) >= limit || read >= budget {
				return out, bytes.Clone(prefix), nil
			}
			groupOf, spaceID, fileID = bytes.Clone(prefix), string(sp), string(file)
		}
		r, err := decodeVersion(string(key), v)
		if err != nil {
			return nil, nil, err
		}
		group = append(group, r.public(spaceID))
		read++
	}
	flushFile()
	return out, nil, nil
}

// evict removes k, a trash item or a version of space spaceID: a version
// goes at once, a trash item is hidden, its room free at once, and
// purged in parts once t commits (purging.go), so that an upload's
// transaction writes a few records whatever the item holds. A thing gone
// already (a version of a file in a trash item evicted before it) is
// skipped.
func (t *txn) evict(spaceID string, k storage.Kept) error {
	if k.TrashKey == "" {
		return t.dropVersion(spaceID, k.FileID, k.VersionKey)
	}
	item, err := t.trashItem(spaceID, k.TrashKey)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	p, err := t.hideTrashItem(spaceID, item)
	if err != nil {
		return err
	}
	t.purges = append(t.purges, p)
	return nil
}

// evictFor removes the oldest things space spaceID keeps for undo until
// need more bytes are free (storage.Evictions), reading them oldest first
// only as far as they make room (oldestKept).
func (t *txn) evictFor(spaceID string, need int64) error {
	if need <= 0 {
		return nil
	}
	kept, err := t.oldestKept(spaceID, need)
	if err != nil {
		return err
	}
	for _, k := range storage.Evictions(kept, need) {
		if err := t.evict(spaceID, k); err != nil {
			return err
		}
	}
	return nil
}

// makeRoom evicts what space spaceID keeps for undo, oldest first, when
// an upload or a copy growing it by delta bytes would not fit its quota
// otherwise (storage.Usage.Shortfall); the caller checks the quota then.
// Nothing goes when even all of it would not make room.
func (t *txn) makeRoom(spaceID string, delta int64) error {
	quota, u, ok, err := t.quotaFor(spaceID, delta)
	if !ok {
		return err
	}
	return t.evictFor(spaceID, u.Shortfall(quota, delta))
}

// checkRoom is checkQuota in a snapshot taken before a change that calls
// makeRoom: growth that evictions can make room for passes.
func (t *txn) checkRoom(spaceID string, delta int64) error {
	quota, u, ok, err := t.quotaFor(spaceID, delta)
	if !ok {
		return err
	}
	return u.CheckRoom(quota, delta)
}

// trimUndo evicts, oldest first, what space spaceID keeps for undo beyond
// its quota: a commit keeps the content it replaces as a version only
// where the quota has room for it, the files having passed the quota
// check as if nothing were kept.
func (t *txn) trimUndo(spaceID string) error {
	quota, u, ok, err := t.quotaUsage(spaceID)
	if !ok {
		return err
	}
	over := u.Used() + u.Reserved - quota
	return t.evictFor(spaceID, min(over, u.Undo()))
}
