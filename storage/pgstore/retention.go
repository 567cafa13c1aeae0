package pgstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// expireBatch bounds what one ExpireUndo pass removes: each trash item
// and each file's versions go in a short change of their own, so that no
// pass holds a space's row lock for long.
const expireBatch = 256

// retentionGroup is the spaces one retention applies to: those listed,
// or, when others is set, every space but those listed.
type retentionGroup struct {
	retention storage.Retention
	spaces    []string
	others    bool
}

// retentionGroups splits a policy into groups whose due items one query
// each finds: each space it sets apart, then all the others.
func retentionGroups(p storage.RetentionPolicy) []retentionGroup {
	listed := slices.Sorted(maps.Keys(p.Spaces))
	if listed == nil {
		listed = []string{} // not NULL, which ANY would match nothing against
	}
	groups := make([]retentionGroup, 0, len(listed)+1)
	for _, id := range listed {
		groups = append(groups, retentionGroup{retention: p.Spaces[id], spaces: []string{id}})
	}
	return append(groups, retentionGroup{retention: p.Default, spaces: listed, others: true})
}

// spaceFilter is the SQL condition on space_id selecting the group's
// spaces, given $2 (others) and $3 (spaces).
const spaceFilter = `(($2 AND NOT space_id = ANY($3)) OR (NOT $2 AND space_id = ANY($3)))`

// cutoff is the Unix nanoseconds at or before which something kept for
// keep (0: nothing is kept) has expired at now.
func cutoff(now time.Time, keeps bool, keep time.Duration) int64 {
	if !keeps {
		return math.MaxInt64
	}
	return now.Add(-keep).UnixNano()
}

// ExpireUndo removes, in one bounded pass, the trash items and versions
// the policy no longer keeps: expired ones, and the versions beyond a
// file's maximum after the policy changed.
func (s *Store) ExpireUndo(ctx context.Context) (int, error) {
	if _, err := s.db(); err != nil {
		return 0, err
	}
	policy := *s.retention.Load()
	recount := s.recountVersions.Swap(false)
	now := s.now().UTC()
	steps := []func(context.Context, retentionGroup, time.Time, int) (int, error){s.expireTrash, s.expireVersions}
	if recount {
		steps = append(steps, s.pruneOverMax)
	}
	done, err := s.finishPurges(ctx, expireBatch)
	if err != nil {
		s.recountVersions.CompareAndSwap(false, recount)
		return done, fmt.Errorf("expire trash and versions: %w", err)
	}
	for _, g := range retentionGroups(policy) {
		for _, step := range steps {
			if done >= expireBatch {
				// The next pass goes on, the recount included.
				s.recountVersions.CompareAndSwap(false, recount)
				return done, nil
			}
			n, err := step(ctx, g, now, expireBatch-done)
			done += n
			if err != nil {
				s.recountVersions.CompareAndSwap(false, recount)
				return done, fmt.Errorf("expire trash and versions: %w", err)
			}
		}
	}
	return done, nil
}

// finishPurges finishes up to limit purges a node left half done
// (purgeParts), and counts them.
func (s *Store) finishPurges(ctx context.Context, limit int) (int, error) {
	type purge struct{ SpaceID, NodeID string }
	purges, err := queryRows(ctx, s, pgx.RowToStructByPos[purge],
		`SELECT space_id, node_id FROM trash_items WHERE purging LIMIT $1`, limit)
	if err != nil {
		return 0, err
	}
	for i, p := range purges {
		if err := s.purgeParts(ctx, p.SpaceID, p.NodeID, false); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return i, fmt.Errorf("finishing the purge of %s in space %s: %w", p.NodeID, p.SpaceID, err)
		}
	}
	return len(purges), nil
}

// expireTrash purges up to limit expired trash items of the group's
// spaces, oldest first.
func (s *Store) expireTrash(ctx context.Context, g retentionGroup, now time.Time, limit int) (int, error) {
	type due struct{ SpaceID, Key string }
	items, err := queryRows(ctx, s, pgx.RowToStructByPos[due], `SELECT space_id, key FROM trash_items
		WHERE deleted_ns <= $1 AND NOT purging AND `+spaceFilter+` ORDER BY deleted_ns LIMIT $4`,
		cutoff(now, g.retention.KeepsTrash(), g.retention.Trash), g.others, g.spaces, limit)
	if err != nil {
		return 0, err
	}
	for i, it := range items {
		err := s.purgeTrashKey(ctx, it.SpaceID, it.Key)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return i, fmt.Errorf("trash item %q of space %s: %w", it.Key, it.SpaceID, err)
		}
	}
	return len(items), nil
}

// dueFile is a file some of whose versions are due.
type dueFile struct{ SpaceID, FileID string }

// expireVersions prunes the files of the group's spaces that have
// expired versions, up to limit files. It reads the limit oldest expired
// versions only (versions_replaced, in time order), and prunes their
// files: a DISTINCT over all expired versions would read every one of
// them each pass, as many as a policy change makes due at once, to find
// a few files.
func (s *Store) expireVersions(ctx context.Context, g retentionGroup, now time.Time, limit int) (int, error) {
	r := g.retention
	return s.pruneFiles(ctx, g, now, `SELECT DISTINCT space_id, file_id FROM (
			SELECT space_id, file_id FROM versions
			WHERE replaced_ns <= $1 AND `+spaceFilter+` ORDER BY replaced_ns LIMIT $4) oldest`,
		cutoff(now, r.KeepsVersions(), r.VersionsFor), g.others, g.spaces, limit)
}

// pruneOverMax prunes the files of the group's spaces that have more
// versions than the retention keeps, up to limit files: a query over
// every version, which ExpireUndo runs only after SetRetention.
func (s *Store) pruneOverMax(ctx context.Context, g retentionGroup, now time.Time, limit int) (int, error) {
	max := int64(g.retention.VersionsMax)
	if !g.retention.KeepsVersions() {
		max = 0
	}
	return s.pruneFiles(ctx, g, now, `SELECT space_id, file_id FROM versions
		WHERE $1::bigint >= 0 AND `+spaceFilter+` GROUP BY space_id, file_id HAVING count(*) > $5 LIMIT $4`,
		int64(0), g.others, g.spaces, limit, max)
}

// pruneFiles prunes the versions of each file the query selects to the
// group's retention, each in a change of its own, and counts what went.
func (s *Store) pruneFiles(ctx context.Context, g retentionGroup, now time.Time, query string, args ...any) (int, error) {
	files, err := queryRows(ctx, s, pgx.RowToStructByPos[dueFile], query, args...)
	if err != nil {
		return 0, err
	}
	pruned := 0
	for _, f := range files {
		var n int
		err := s.change(ctx, f.SpaceID, func(c *change) (err error) {
			n, err = s.pruneVersions(ctx, c.tx, f.SpaceID, f.FileID, g.retention, now)
			return err
		})
		pruned += n
		if err != nil {
			return pruned, fmt.Errorf("versions of %s: %w", f.FileID, err)
		}
	}
	return pruned, nil
}
