package boltstore

import (
	"encoding/binary"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

// inlineRefs is the set of inline keys the records of a snapshot
// reference: a bit per key the inline bucket's sequence has given out,
// so that it takes an eighth of a byte per small file ever written.
type inlineRefs []uint64

func newInlineRefs(seq uint64) inlineRefs { return make(inlineRefs, seq/64+1) }

func (r inlineRefs) add(k uint64) {
	if k/64 < uint64(len(r)) {
		r[k/64] |= 1 << (k % 64)
	}
}

func (r inlineRefs) has(k uint64) bool {
	return k/64 < uint64(len(r)) && r[k/64]&(1<<(k%64)) != 0
}

// unreferencedInline returns the keys of the inline values no node or
// version of the snapshot t references, and whether every record could be
// read: an unreadable one may reference any of them. It reads the node records and
// versions through in the one snapshot: only what one state of the store
// references proves a value an orphan (a file moved during a batched walk
// could be missed).
func (t *txn) unreferencedInline() (orphans []uint64, complete bool, err error) {
	refs := newInlineRefs(t.inline().Sequence())
	complete = true
	err = t.children().ForEach(func(k, v []byte) error {
		t.countScan(len(k) + len(v))
		r, err := decodeNode(v)
		complete = complete && err == nil
		if err == nil && r.inlined() {
			refs.add(r.Inline)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	err = t.versions().ForEach(func(k, v []byte) error {
		t.countScan(len(k) + len(v))
		r, err := decodeVersion("", v)
		complete = complete && err == nil
		if err == nil && r.File.inlined() {
			refs.add(r.File.Inline)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	err = t.inline().ForEach(func(k, _ []byte) error {
		t.countScan(len(k))
		if len(k) != 8 {
			return nil
		}
		if key := binary.BigEndian.Uint64(k); !refs.has(key) {
			orphans = append(orphans, key)
		}
		return nil
	})
	return orphans, complete, err
}

// checkInlineOrphans reports the inline values nothing references. Their
// repair, offered only when every record could be read, removes, in one write transaction that finds them again, every
// value still unreferenced: a finding whose value that removed is
// repaired.
func (c *checkRun) checkInlineOrphans() error {
	var (
		orphans  []uint64
		complete bool
	)
	err := c.s.viewWalk(func(t *txn) (err error) {
		orphans, complete, err = t.unreferencedInline()
		return err
	})
	if err != nil {
		return err
	}
	removed := map[uint64]bool{}
	removeAll := func() (bool, error) {
		return c.update(func(t *txn) (bool, error) {
			still, complete, err := t.unreferencedInline()
			if !complete {
				return false, err
			}
			for _, k := range still {
				if err == nil {
					err = t.inline().Delete(inlineKey(k))
				}
			}
			if err != nil {
				return false, err
			}
			for _, k := range still {
				removed[k] = true
			}
			return true, nil
		})
	}
	for _, k := range orphans {
		key := k
		f := problem(storage.ProblemOrphanContent, "", "", "inline content %d is referenced by nothing", key)
		if !complete {
			// An unreadable record, reported on its own, may be its owner.
			f.Detail += " that can be read"
			if err := c.found(f); err != nil {
				return err
			}
			continue
		}
		f.repair = func() (bool, error) {
			if len(removed) == 0 {
				if _, err := removeAll(); err != nil {
					return false, fmt.Errorf("remove unreferenced inline content: %w", err)
				}
			}
			return removed[key], nil
		}
		if err := c.found(f); err != nil {
			return err
		}
	}
	return nil
}
