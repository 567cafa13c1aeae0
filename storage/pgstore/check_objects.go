package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// The orphan step lists the bucket under the store's prefixes a page at a
// time and asks the database, in one statement per page, which of the
// page's objects no row names: no file, version, session or chunk, and no
// row of object_sweep (an object being written is noted there before its
// first byte, and one released stays there until the sweep removes it).
//
// An object listed before a statement may be removed before it by the
// sweep or by a failed write, which both remove the object before their
// row goes: an orphan found is asked for again, and one gone is none. An
// object younger than ObjectGrace is not judged at all.

// unnamedObjects selects, of the keys $1, those no row names.
const unnamedObjects = `
	SELECT k FROM unnest($1::text[]) AS k
	WHERE NOT EXISTS (SELECT 1 FROM object_sweep WHERE key = k)
		AND NOT EXISTS (SELECT 1 FROM nodes WHERE content @> jsonb_build_array(jsonb_build_object('k', k)))
		AND NOT EXISTS (SELECT 1 FROM versions WHERE content @> jsonb_build_array(jsonb_build_object('k', k)))
		AND NOT EXISTS (SELECT 1 FROM upload_sessions WHERE parts @> jsonb_build_array(jsonb_build_object('k', k)))
		AND NOT EXISTS (SELECT 1 FROM chunks WHERE object = k)
	ORDER BY k`

// checkOrphans reports the objects under the store's prefixes that
// nothing names; a repair hands them to the sweep, due at once, which
// removes them unless something names them by then.
func (c *checker) checkOrphans(ctx context.Context) error {
	for _, prefix := range []string{prefixFile, prefixSession, prefixChunk} {
		if err := c.checkOrphansUnder(ctx, prefix); err != nil {
			return fmt.Errorf("objects under %s: %w", prefix, err)
		}
	}
	return nil
}

func (c *checker) checkOrphansUnder(ctx context.Context, prefix string) error {
	after := ""
	for {
		page, err := c.s.objects.List(ctx, prefix, after, checkPage)
		if err != nil || len(page) == 0 {
			return err
		}
		c.done += int64(len(page))
		c.total += int64(len(page))
		if err := c.checkObjectPage(ctx, page); err != nil {
			return err
		}
		after = page[len(page)-1].Key
		c.progress()
	}
}

// checkObjectPage reports the orphans among one page of a listing.
func (c *checker) checkObjectPage(ctx context.Context, page []s3content.Object) error {
	cutoff := c.s.now().Add(-c.s.objectGrace)
	keys := make([]string, 0, len(page))
	for _, o := range page {
		if o.Modified.Before(cutoff) {
			keys = append(keys, o.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	pool, err := c.s.db()
	if err != nil {
		return err
	}
	rows, _ := pool.Query(ctx, unnamedObjects, keys)
	unnamed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, key := range unnamed {
		if err := c.checkOrphan(ctx, key); err != nil {
			return err
		}
	}
	return nil
}

// checkOrphan reports object key, which no row named, unless it is gone
// since it was listed.
func (c *checker) checkOrphan(ctx context.Context, key string) error {
	obj, err := c.s.objects.Stat(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	p := storage.Problem{Kind: storage.ProblemOrphanContent, Repairable: true,
		Detail: fmt.Sprintf("object %s (%d bytes, written %s) is named by nothing",
			key, obj.Size, obj.Modified.UTC().Format("2006-01-02T15:04:05Z"))}
	return c.found(ctx, p, func(ctx context.Context) error { return c.sweepOrphan(ctx, key) })
}

// sweepOrphan hands object key to the sweep, due now; the sweep asks
// again whether a node or version names it before removing it.
func (c *checker) sweepOrphan(ctx context.Context, key string) error {
	return c.s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO object_sweep (key, sweep_after) VALUES ($1, $2)
			ON CONFLICT (key) DO NOTHING`, key, c.s.now())
		return err
	})
}
