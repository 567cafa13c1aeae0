package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// A sound tree is found so in short reads: one pass over every node and
// every version, a range of the table's pages at a time (tally), counts
// what each space holds, and a walk down from each space's roots (walk) adds up
// folder sizes and counts what hangs from them. Only a space where a
// figure differs (damage, or a change while the check ran) is read again
// in one snapshot, by the statements that name what is wrong: one of
// those, at a million nodes, holds a transaction for seconds.

// rangeRows bounds the rows one read of the walk covers.
const rangeRows = 5000

// rangePages is how many of a table's pages one read of inPages covers:
// a few thousand rows of nodes.
const rangePages = 128

// inHeapPages is the condition that the rows of table (a name or an
// alias of the query's) sit in its pages [from, to), $1 and $2: a TID
// range scan reads those pages and no others, however many of their rows
// are dead. A range of an index walks every dead entry it meets instead,
// and right after a big trash is emptied, before the vacuum, one read of
// a range of ids held a transaction past the bound.
func inHeapPages(table string) string {
	return table + `.ctid >= ('(' || $1::bigint || ',0)')::tid AND ` + table + `.ctid < ('(' || $2::bigint || ',0)')::tid`
}

// spaceTally is what the tally counts of a space, live or in its trash:
// its nodes, roots aside, and versions, whose sum is recountNodes; the
// bytes of recountProps and recountVersions.
type spaceTally struct {
	nodes, versions, propBytes, versionBytes int64
}

// inPages calls fn with the successive ranges [from, to) of table's
// pages, each of at most pages pages, up to the table's size as the pass
// begins: rows a change writes meanwhile, there or beyond, may be seen
// or not, as in any pass that holds no snapshot. table is the check's
// own name, never a client's.
func (c *checker) inPages(ctx context.Context, table string, pages int64, fn func(from, to int64) error) error {
	size, err := queryRows(ctx, c.s, pgx.RowTo[int64],
		`SELECT pg_relation_size($1::regclass) / current_setting('block_size')::bigint`, table)
	if err != nil || len(size) != 1 {
		return err
	}
	for from := int64(0); from < size[0]; from += pages {
		if err := fn(from, from+pages); err != nil {
			return err
		}
	}
	return nil
}

// tally counts, a range of pages at a time, every node and version: the
// check's totals, and each space's spaceTally.
func (c *checker) tally(ctx context.Context) error {
	c.tallies = map[string]*spaceTally{}
	of := func(spaceID string) *spaceTally {
		t := c.tallies[spaceID]
		if t == nil {
			t = &spaceTally{}
			c.tallies[spaceID] = t
		}
		return t
	}
	type nodeCount struct {
		SpaceID                   string
		All, Nodes, Files, PropsN int64
	}
	err := c.inPages(ctx, "nodes", rangePages, func(from, to int64) error {
		counts, err := queryRows(ctx, c.s, pgx.RowToStructByPos[nodeCount], `
			SELECT split_part(n.space_id, '/', 1), count(*), count(*) FILTER (WHERE n.parent_id IS NOT NULL),
				count(*) FILTER (WHERE n.kind = $3),
				coalesce(sum((SELECT sum(octet_length(p.ns) + octet_length(p.local) + octet_length(p.value))
					FROM props p WHERE p.node_id = n.id)), 0)::bigint
			FROM nodes n WHERE `+inHeapPages("n")+` GROUP BY 1`, from, to, storage.KindFile)
		for _, n := range counts {
			t := of(n.SpaceID)
			t.nodes += n.Nodes
			t.propBytes += n.PropsN
			c.sum.Nodes += n.All
			c.total += n.Files
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	type versionCount struct {
		SpaceID string
		N, Size int64
	}
	err = c.inPages(ctx, "versions", rangePages, func(from, to int64) error {
		counts, err := queryRows(ctx, c.s, pgx.RowToStructByPos[versionCount], `
			SELECT space_id, count(*), coalesce(sum(size), 0)::bigint FROM versions
			WHERE `+inHeapPages("versions")+` GROUP BY 1`, from, to)
		for _, v := range counts {
			t := of(v.SpaceID)
			t.versions += v.N
			t.versionBytes += v.Size
			c.total += v.N
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("versions: %w", err)
	}
	return nil
}

// walked is what a walk down from a space's roots found.
type walked struct {
	// reached counts the nodes below the roots.
	reached int64
	// sizesAdd: every folder reached records the sum of its children's
	// sizes; then, from the files up, each holds what the files below it
	// do.
	sizesAdd bool
}

// folderSize is a folder the walk has still to list, with its recorded size.
type folderSize struct {
	ID   string
	Size int64
}

// walkBatch is how many folders one read of the walk lists the children
// of together, when they have at most rangeRows children between them.
const walkBatch = 50

// walk goes down from the roots of space id and its trash, a batch of
// folders per read, a folder of many children in pages of its names. It
// stops once it has reached more than limit nodes: more than are there.
func (c *checker) walk(ctx context.Context, id string, limit int64) (walked, error) {
	w := walked{sizesAdd: true}
	frontier, err := queryRows(ctx, c.s, pgx.RowToStructByPos[folderSize],
		`SELECT id, size FROM nodes WHERE id IN ($1, $1::text || '`+trashSuffix+`') ORDER BY id`, id)
	if err != nil {
		return w, err
	}
	for len(frontier) > 0 && w.reached <= limit {
		batch := frontier[:min(walkBatch, len(frontier))]
		frontier = frontier[len(batch):]
		below, err := c.childrenOf(ctx, batch)
		if err != nil {
			return w, err
		}
		sums := map[string]int64{}
		for _, child := range below {
			w.reached++
			sums[child.ParentID] += child.Size
			if child.Kind == storage.KindFolder {
				frontier = append(frontier, folderSize{ID: child.ID, Size: child.Size})
			}
		}
		for _, f := range batch {
			if sums[f.ID] != f.Size {
				w.sizesAdd = false
			}
		}
	}
	return w, nil
}

// reachedNode is a node the walk reached.
type reachedNode struct {
	ParentID, ID string
	Kind         storage.Kind
	Size         int64
}

// childrenOf lists the children of the folders of batch: in one read
// when they have at most rangeRows between them, else folder by folder,
// a page of names per read.
func (c *checker) childrenOf(ctx context.Context, batch []folderSize) ([]reachedNode, error) {
	ids := make([]string, len(batch))
	for i, f := range batch {
		ids[i] = f.ID
	}
	all, err := queryRows(ctx, c.s, pgx.RowToStructByPos[reachedNode],
		`SELECT parent_id, id, kind, size FROM nodes WHERE parent_id = ANY($1) LIMIT $2`, ids, rangeRows+1)
	if err != nil || len(all) <= rangeRows {
		return all, err
	}
	all = all[:0]
	for _, id := range ids {
		for after := ""; ; {
			type named struct {
				reachedNode
				Name string
			}
			page, err := queryRows(ctx, c.s, func(row pgx.CollectableRow) (named, error) {
				var n named
				err := row.Scan(&n.ParentID, &n.ID, &n.Kind, &n.Size, &n.Name)
				return n, err
			}, `SELECT parent_id, id, kind, size, name FROM nodes WHERE parent_id = $1 AND name > $2
				ORDER BY name LIMIT $3`, id, after, rangeRows)
			if err != nil {
				return nil, err
			}
			for _, n := range page {
				all = append(all, n.reachedNode)
			}
			if len(page) < rangeRows {
				break
			}
			after = page[len(page)-1].Name
		}
	}
	return all, nil
}

// walkOf walks space id once, for the steps that ask.
func (c *checker) walkOf(ctx context.Context, id string) (walked, error) {
	if w, ok := c.walks[id]; ok {
		return w, nil
	}
	w, err := c.walk(ctx, id, c.tallied(id).nodes)
	if err != nil {
		return w, err
	}
	if c.walks == nil {
		c.walks = map[string]walked{}
	}
	c.walks[id] = w
	return w, nil
}

// tallied is space id's tally, zero when the tally saw nothing of it.
func (c *checker) tallied(id string) spaceTally {
	if t := c.tallies[strings.TrimSuffix(id, trashSuffix)]; t != nil {
		return *t
	}
	return spaceTally{}
}
