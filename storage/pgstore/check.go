package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// A check reads the database in pages, each page one short statement or
// read-only transaction, and asks the bucket about what a page names
// between two of them: no transaction is ever open across a request to the
// bucket, so a check of a large store holds no snapshot for long and the
// store serves meanwhile. A repair takes the locks a request would (the
// space's row, the session's row) and decides again under them.
//
// The foreign keys of schema.sql keep props, locks, trash items and
// versions from outliving their node, chunks from outliving their chunked
// upload, and nodes from outliving their parent or space. What they cannot
// say, and the check does: that the objects named by nodes, versions,
// session parts and chunks exist with their sizes; that nothing in the
// bucket is left that no row names; that a folder's size is what its files
// hold and a space's counters what they count; that a session or chunked
// upload lands in a space that exists; that a lock is on a node of its own
// space; that a share is on a live node of its space; that a trash item's
// node sits under its trash's root, and every node there is an item; that
// a node's parent is a folder of its space, and its parents lead to the
// root of its space or of its trash (no cycle, nothing orphaned); and
// that a version belongs to a file and counts in that file's space.

var _ storage.Checker = (*Store)(nil)

// checkPage bounds the rows or objects one step of a check reads at once.
const checkPage = 500

// checker is one run of Check.
type checker struct {
	s      *Store
	opts   storage.CheckOptions
	report func(storage.Problem)
	sum    storage.CheckSummary
	// done and total feed opts.Progress: files and versions, then the
	// objects listed.
	done, total int64
	// contents and bytes count the objects asked for, from the requests
	// under way at once (checkRequests).
	contents, bytes atomic.Int64
	// tallies holds what the tally counted of each space, by its id;
	// walks what the walk down from its roots found.
	tallies map[string]*spaceTally
	walks   map[string]walked
}

// Check verifies the store's consistency (storage.Checker), reporting each
// problem as it finds it, and repairs what it can when opts.Repair.
func (s *Store) Check(ctx context.Context, opts storage.CheckOptions, report func(storage.Problem)) (storage.CheckSummary, error) {
	if _, err := s.db(); err != nil {
		return storage.CheckSummary{}, fmt.Errorf("check: %w", err)
	}
	c := &checker{s: s, opts: opts, report: report}
	steps := []struct {
		what string
		run  func(context.Context) error
	}{
		{"counting", c.count},
		{"files", c.checkFiles},
		{"versions", c.checkVersions},
		{"folder sizes and counters", c.checkSpaces},
		{"tree", c.checkTree},
		{"trash", c.checkTrash},
		{"locks", c.checkLocks},
		{"shares", c.checkShares},
		{"upload sessions", c.checkSessions},
		{"chunked uploads", c.checkChunkedUploads},
		{"orphan objects", c.checkOrphans},
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return c.summary(), fmt.Errorf("check: %w", err)
		}
		if err := step.run(ctx); err != nil {
			return c.summary(), fmt.Errorf("check: %s: %w", step.what, classify(err))
		}
	}
	return c.summary(), nil
}

// summary is what the check looked at so far.
func (c *checker) summary() storage.CheckSummary {
	sum := c.sum
	sum.Contents, sum.Bytes = c.contents.Load(), c.bytes.Load()
	return sum
}

// count reads how much there is to check, for the summary and progress,
// and tallies each space (tally).
func (c *checker) count(ctx context.Context) error {
	spaces, err := queryRows(ctx, c.s, pgx.RowTo[int64], `SELECT count(*) FROM spaces WHERE type <> 'trash'`)
	if err != nil {
		return err
	}
	c.sum.Spaces = spaces[0]
	if err := c.tally(ctx); err != nil {
		return err
	}
	c.progress()
	return nil
}

// progress tells opts.Progress how far the check is.
func (c *checker) progress() {
	if c.opts.Progress != nil {
		c.opts.Progress(c.done, c.total)
	}
}

// found reports p, repairing it first with repair when p is repairable and
// the check repairs. A repair that fails ends the check: what it found
// since is not reported.
func (c *checker) found(ctx context.Context, p storage.Problem, repair func(context.Context) error) error {
	c.sum.Problems++
	if p.Repairable && c.opts.Repair && repair != nil {
		if err := repair(ctx); err != nil {
			return fmt.Errorf("repairing %s: %w", p, err)
		}
		p.Repaired = true
		c.sum.Repaired++
	}
	c.report(p)
	return nil
}

// trashPath is the first name of the path of a problem in a space's
// trash: trashPath/<item key>/<names below the item>, as the embedded
// store reports it too, so that no trashed node is taken for a live one.
const trashPath = "trash-bin"

// place is where a node is, as a problem names it: its live space (also
// for a node in the space's trash) and its path from that space's root.
type place struct {
	spaceID string
	path    string
}

// problem is a problem of kind at p.
func (p place) problem(kind storage.ProblemKind, repairable bool, format string, args ...any) storage.Problem {
	return storage.Problem{Kind: kind, SpaceID: p.spaceID, Path: p.path, Detail: fmt.Sprintf(format, args...), Repairable: repairable}
}

// locate returns where node id is. ok is false when the node is gone (a
// change since the page was read: what was found about it no longer
// holds).
func (c *checker) locate(ctx context.Context, id string) (p place, ok bool, err error) {
	err = c.s.read(ctx, func(tx pgx.Tx) error {
		var spaceID, root string
		err := tx.QueryRow(ctx, `SELECT space_id, coalesce(node_root(id), '') FROM nodes WHERE id = $1`, id).Scan(&spaceID, &root)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		names, err := pathNames(ctx, tx, id)
		if err != nil {
			return err
		}
		if isTrashSpace(root) || isTrashSpace(spaceID) {
			names = append([]string{trashPath}, names...)
		}
		ok = true
		p = place{spaceID: strings.TrimSuffix(spaceID, trashSuffix), path: storage.TrashLocation(names)}
		return nil
	})
	if err != nil {
		return place{}, false, fmt.Errorf("locating node %s: %w", id, err)
	}
	return p, ok, nil
}

// foundAt reports a problem about node id, located first; a node gone
// meanwhile is no problem any more.
func (c *checker) foundAt(ctx context.Context, id string, kind storage.ProblemKind, repair func(context.Context) error, format string, args ...any) error {
	p, ok, err := c.locate(ctx, id)
	if err != nil || !ok {
		return err
	}
	return c.found(ctx, p.problem(kind, repair != nil, format, args...), repair)
}

// splitPath is the names of a path from a space's root.
func splitPath(path string) []string {
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}
