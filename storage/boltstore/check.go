package boltstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.Checker = (*Store)(nil)

// checkBatch bounds the records one read transaction of a check looks at.
// A check reads in many short snapshots rather than one long one: a bbolt
// reader does not block writers, but it pins the pages of its snapshot,
// so a reader held for minutes makes the file grow by everything written
// meanwhile.
const checkBatch = 1000

// trashPath is the first segment of the path a problem in a space's trash
// is reported with: trashPath/<item key>/<names below the item>.
const trashPath = "trash-bin"

// Check verifies the store against itself: the tree of every space and of
// its trash (folder sizes, index entries, content), the versions, every
// bucket that refers to nodes, spaces or content, the content files on
// disk and the usage counters. See storage.Checker.
//
// Each step reads in bounded snapshots (checkBatch records), and a folder
// whose etag changed while its subtree was walked is not judged, so a
// check of a serving store reports what is wrong, not what changed. A
// repair runs in a write transaction of its own that first makes sure the
// problem is still there. Recounting the usage counters reads the
// counted buckets in one snapshot, and its repair in one write
// transaction: the counters must agree with one state of the store.
func (s *Store) Check(ctx context.Context, opts storage.CheckOptions, report func(storage.Problem)) (storage.CheckSummary, error) {
	return s.check(ctx, opts, report, checkBatch)
}

// check is Check reading batch records per snapshot.
func (s *Store) check(ctx context.Context, opts storage.CheckOptions, report func(storage.Problem), batch int) (storage.CheckSummary, error) {
	c := &checkRun{s: s, ctx: ctx, opts: opts, report: report, batch: batch}
	steps := []struct {
		what string
		run  func() error
	}{
		{"spaces", c.checkSpaces},
		// Index entries first: the steps after look nodes up by id, and
		// must not take a node whose entry a repair puts back for gone.
		{"node records", c.checkRecords},
		{"node index", c.checkNodeIndex},
		{"trees", c.checkTrees},
		{"versions", c.checkVersions},
		{"version age index", c.checkVersionAges},
		{"content references", c.checkBlobRefs},
		{"properties", c.checkProps},
		{"locks", c.checkLocks},
		{"lock tokens", c.checkLockTokens},
		{"upload sessions", c.checkSessions},
		{"chunked uploads", c.checkChunkedUploads},
		{"trash items", c.checkTrashItems},
		{"hidden trash items", c.checkHiddenItems},
		{"trash places", c.checkTrashPlaces},
		// Shares before their indexes: a share's repair drops its entries.
		{"shares", c.checkShares},
		{"share indexes", c.checkShareIndexes},
		{"content files", c.checkContentFiles},
		{"inline content", c.checkInlineOrphans},
		{"usage counters", c.checkUsage},
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return c.sum, err
		}
		if err := step.run(); err != nil {
			return c.sum, fmt.Errorf("check %s: %w", step.what, err)
		}
	}
	return c.sum, nil
}

// checkRun is one run of Check.
type checkRun struct {
	s      *Store
	ctx    context.Context
	opts   storage.CheckOptions
	report func(storage.Problem)
	batch  int // records per snapshot
	sum    storage.CheckSummary
	spaces []string // the ids of the spaces, in order
	done   int64    // nodes, versions and contents checked, for Progress
}

// finding is a problem found, and for a repairable one the repair. A
// repair makes sure the problem is still there before it changes
// anything, and reports false when it was not.
type finding struct {
	storage.Problem
	repair func() (bool, error)
	// confirm, when set, looks again once the snapshot that found the
	// problem has ended, for a problem that a change made after it began
	// could make appear (a file removed after its record): false, and
	// it is not reported.
	confirm func() (bool, error)
}

// found repairs f when asked to and reports it. A problem that is gone by
// the time the repair looks again is not reported: it was a change seen
// half-way.
func (c *checkRun) found(f finding) error {
	if f.confirm != nil {
		still, err := f.confirm()
		if err != nil || !still {
			return err
		}
	}
	f.Repairable = f.repair != nil
	if c.opts.Repair && f.repair != nil {
		fixed, err := f.repair()
		if err != nil {
			return fmt.Errorf("repair %s: %w", f.Problem, err)
		}
		if !fixed {
			return nil
		}
		f.Repaired = true
		c.sum.Repaired++
	}
	c.sum.Problems++
	c.report(f.Problem)
	return nil
}

// foundAll hands every finding to found.
func (c *checkRun) foundAll(fs []finding) error {
	for _, f := range fs {
		if err := c.found(f); err != nil {
			return err
		}
	}
	return nil
}

// progress counts n more things checked.
func (c *checkRun) progress(n int64) {
	c.done += n
	if c.opts.Progress != nil && n > 0 {
		c.opts.Progress(c.done, 0)
	}
}

// confirm makes the confirm of a finding: still says in a new snapshot
// whether the problem is there.
func (c *checkRun) confirm(still func(t *txn) bool) func() (bool, error) {
	return func() (bool, error) {
		var ok bool
		err := c.s.view(func(t *txn) error { ok = still(t); return nil })
		return ok, err
	}
}

// update runs a repair in a write transaction; fn says whether the
// problem was still there.
func (c *checkRun) update(fn func(t *txn) (bool, error)) (bool, error) {
	var fixed bool
	err := c.s.update(func(t *txn) (err error) {
		fixed, err = fn(t)
		return err
	})
	return fixed, err
}

// scan calls fn with every key and value of bucket in key order,
// checkBatch at a time, each batch in a read transaction of its own; the
// findings of a batch are handled once its transaction has ended (a
// repair needs the write lock, which must not wait for a read
// transaction of the same goroutine), and then afterBatch, when set, is
// called.
func (c *checkRun) scan(bucket []byte, fn func(t *txn, k, v []byte) ([]finding, error), afterBatch func() error) error {
	var after []byte
	for {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		var (
			batch []finding
			n     int
		)
		err := c.s.viewWalk(func(t *txn) error {
			cur := t.tx.Bucket(bucket).Cursor()
			k, v := cur.Seek(after)
			if after != nil && bytes.Equal(k, after) {
				k, v = cur.Next()
			}
			for ; k != nil && n < c.batch; k, v = cur.Next() {
				t.countScan(len(k) + len(v))
				fs, err := fn(t, k, v)
				if err != nil {
					return err
				}
				batch = append(batch, fs...)
				after = bytes.Clone(k)
				n++
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := c.foundAll(batch); err != nil {
			return err
		}
		if afterBatch != nil {
			if err := afterBatch(); err != nil {
				return err
			}
		}
		if n < c.batch {
			return nil
		}
	}
}

// problem makes a finding.
func problem(kind storage.ProblemKind, spaceID, path, format string, args ...any) finding {
	return finding{Problem: storage.Problem{Kind: kind, SpaceID: spaceID, Path: path, Detail: fmt.Sprintf(format, args...)}}
}

// withRepair sets the repair of f.
func (f finding) withRepair(repair func() (bool, error)) finding {
	f.repair = repair
	return f
}

// ownSpace returns the space a node with space id spaceID belongs to: its
// own, or the space whose trash it is in.
func ownSpace(spaceID string) string {
	id, _, _ := strings.Cut(spaceID, trashSuffix)
	return id
}

// pathOf returns the path of r from its space's root, or, for a node in
// the trash, trashPath/<item key>/...; "?" stands for an ancestor that is
// missing.
func (t *txn) pathOf(r rec) string {
	var names []string
	for i := 0; r.ParentID != "" && i < maxCheckDepth; i++ {
		names = append(names, r.Name)
		if isTrashRoot(r.ParentID) {
			names = append(names, trashPath)
			break
		}
		p, ok, err := t.node(r.ParentID)
		if err != nil || !ok {
			names = append(names, "?")
			break
		}
		r = p
	}
	slices.Reverse(names)
	return strings.Join(names, "/")
}

// maxCheckDepth bounds the walks up and down the tree, which a damaged
// parent chain could otherwise make endless.
const maxCheckDepth = 4096

// checkSpaces lists the spaces and checks that each has its root.
func (c *checkRun) checkSpaces() error {
	var fs []finding
	err := c.s.view(func(t *txn) error {
		return t.spaces().ForEach(func(k, v []byte) error {
			id := string(k)
			if _, err := decodeSpace(id, v); err != nil {
				fs = append(fs, problem(storage.ProblemDangling, id, "", "unreadable space record: %v", err))
				return nil
			}
			c.spaces = append(c.spaces, id)
			if _, ok, err := t.node(id); err != nil || !ok {
				fs = append(fs, problem(storage.ProblemDangling, id, "", "the space has no root folder"))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	c.sum.Spaces = int64(len(c.spaces))
	return c.foundAll(fs)
}

// spaceExists reports whether space id exists.
func (t *txn) spaceExists(id string) bool { return t.spaces().Get([]byte(id)) != nil }
