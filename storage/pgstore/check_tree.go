package pgstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/storage"
)

// The tree steps: each finds a sound space so in short reads (check_walk.go)
// and reads a space that is not in one statement or snapshot, to name
// what is wrong.

// checkSpaces checks, space by space, that each folder's size is what the
// files below it hold (its trash's root included), and that its counters
// of properties and versions are what a recount gives.
func (c *checker) checkSpaces(ctx context.Context) error {
	ids, err := queryRows(ctx, c.s, pgx.RowTo[string], `SELECT id FROM spaces ORDER BY id`)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if isTrashSpace(id) {
			continue // checked with its space
		}
		if err := c.checkFolderSizes(ctx, id); err != nil {
			return fmt.Errorf("space %s: %w", id, err)
		}
		if err := c.checkCounters(ctx, id); err != nil {
			return fmt.Errorf("space %s: %w", id, err)
		}
	}
	return nil
}

// folderTotals selects ($1: a space's id, $2: KindFile, $3: KindFolder)
// each folder of the space or its trash whose size is not the sum of the
// files below it, with that sum: every file adds its size to each of its
// ancestors. A wrong folder is found alone, not with its ancestors, as
// comparing a folder with its children's recorded sizes would. The walk
// up stops after maxCheckDepth folders, where only a cycle leads.
const folderTotals = `
	WITH RECURSIVE up AS (
		SELECT parent_id AS folder, size, 1 AS depth FROM nodes
		WHERE space_id = $1 AND kind = $2 AND parent_id IS NOT NULL
		UNION ALL
		SELECT n.parent_id, up.size, up.depth + 1 FROM up JOIN nodes n ON n.id = up.folder
		WHERE n.parent_id IS NOT NULL AND up.depth < ` + maxCheckDepth + `
	), totals AS (
		SELECT folder, sum(size)::bigint AS total FROM up GROUP BY folder
	), wrong AS (
		SELECT f.id, f.size, coalesce(t.total, 0)::bigint AS total
		FROM nodes f LEFT JOIN totals t ON t.folder = f.id
		WHERE f.space_id IN ($1, $1::text || '` + trashSuffix + `') AND f.kind = $3 AND f.size <> coalesce(t.total, 0)
	)`

// maxCheckDepth bounds the walks of the check up a node's ancestors: no
// path of a client's is this deep, a cycle is.
const maxCheckDepth = "10000"

// checkFolderSizes reports each folder of space id or its trash whose
// size is wrong; a repair sets them all under the space's lock, with fresh
// etags, deciding again there. A space whose walk found every folder's
// size the sum of its children's, and every node, is sound.
func (c *checker) checkFolderSizes(ctx context.Context, id string) error {
	w, err := c.walkOf(ctx, id)
	if err != nil || (w.sizesAdd && w.reached == c.tallied(id).nodes) {
		return err
	}
	type wrongSize struct {
		ID          string
		Size, Total int64
	}
	wrong, err := readRows(ctx, c.s, pgx.RowToStructByPos[wrongSize],
		folderTotals+`SELECT id, size, total FROM wrong ORDER BY id`, id, storage.KindFile, storage.KindFolder)
	if err != nil || len(wrong) == 0 {
		return err
	}
	repaired := false
	repair := func(ctx context.Context) error {
		if repaired {
			return nil
		}
		repaired = true
		return c.repairFolderSizes(ctx, id)
	}
	for _, w := range wrong {
		err := c.foundAt(ctx, w.ID, storage.ProblemFolderSize, repair,
			"folder %s records %d bytes; the files below it hold %d", w.ID, w.Size, w.Total)
		if err != nil {
			return err
		}
	}
	return nil
}

// repairFolderSizes sets the size of every folder of space id and its
// trash to what the files below it hold.
func (c *checker) repairFolderSizes(ctx context.Context, id string) error {
	return c.s.inSpace(ctx, id, func(tx pgx.Tx) error {
		ch := c.s.changeIn(tx)
		_, err := tx.Exec(ctx, folderTotals+`
			UPDATE nodes SET size = wrong.total, etag = md5(nodes.id || ':' || $4::text)
			FROM wrong WHERE nodes.id = wrong.id`, id, storage.KindFile, storage.KindFolder, ch.tag)
		return err
	})
}

// checkCounters compares the running counters of space id with a recount;
// a repair recounts them under the space's lock. Counters that are what
// the tally counted are right; others are recounted in one snapshot.
func (c *checker) checkCounters(ctx context.Context, id string) error {
	var props, propsCount, versions, versionsCount, nodes, nodesCount int64
	t := c.tallied(id)
	err := c.s.read(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT props_bytes, versions_bytes, nodes FROM spaces WHERE id = $1`, id).
			Scan(&props, &versions, &nodes)
	})
	if err != nil || (props == t.propBytes && versions == t.versionBytes && nodes == t.nodes+t.versions) {
		return err
	}
	err = c.s.read(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT s.props_bytes, `+recountProps+`, s.versions_bytes, `+recountVersions+`,
			s.nodes, `+recountNodes+` FROM spaces s WHERE s.id = $1`, id, trashSuffix).
			Scan(&props, &propsCount, &versions, &versionsCount, &nodes, &nodesCount)
	})
	if err != nil {
		return err
	}
	repair := func(ctx context.Context) error {
		return c.s.inSpace(ctx, id, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE spaces s SET props_bytes = `+recountProps+`,
				versions_bytes = `+recountVersions+`, nodes = `+recountNodes+` WHERE s.id = $1`, id, trashSuffix)
			return err
		})
	}
	root := place{spaceID: id}
	if props != propsCount {
		p := root.problem(storage.ProblemUsage, true, "the space counts %d bytes of properties; they hold %d", props, propsCount)
		if err := c.found(ctx, p, repair); err != nil {
			return err
		}
	}
	if versions != versionsCount {
		p := root.problem(storage.ProblemUsage, true, "the space counts %d bytes of versions; they hold %d", versions, versionsCount)
		if err := c.found(ctx, p, repair); err != nil {
			return err
		}
	}
	if nodes != nodesCount {
		p := root.problem(storage.ProblemUsage, true, "the space counts %d nodes and versions; it keeps %d", nodes, nodesCount)
		if err := c.found(ctx, p, repair); err != nil {
			return err
		}
	}
	return nil
}

// The recounts of a space s's counters ($2: trashSuffix): the dead
// properties of its nodes, live or in its trash, as storage.PropBytes
// counts them, the sizes of the versions it counts, and its nodes, live
// or in its trash, roots aside, with its versions (storage.Usage.Nodes).
const (
	recountProps = `(SELECT coalesce(sum(octet_length(p.ns) + octet_length(p.local) + octet_length(p.value)), 0)
		FROM props p JOIN nodes n ON n.id = p.node_id WHERE n.space_id IN (s.id, s.id || $2))::bigint`
	recountVersions = `(SELECT coalesce(sum(v.size), 0) FROM versions v WHERE v.space_id = s.id)::bigint`
	recountNodes    = `((SELECT count(*) FROM nodes n WHERE n.space_id IN (s.id, s.id || $2) AND n.parent_id IS NOT NULL)
		+ (SELECT count(*) FROM versions v WHERE v.space_id = s.id))::bigint`
)

// misplaced is a record the foreign keys let through but the store's rules
// do not: the node it is about, and what is wrong.
type misplaced struct {
	NodeID string
	Detail string
}

// checkTree reports nodes whose parent is a file or in another space
// (the root of a space's trash is in the space: layout.go), spaces
// without a root, and versions of folders or counted in another space
// than their file's; then, space by space, nodes whose parents lead to
// no root of theirs. None is repaired: which side is right cannot be
// told. The joins over every node and every version read a range of pages
// at a time (inPages).
func (c *checker) checkTree(ctx context.Context) error {
	err := c.inPages(ctx, "nodes", rangePages, func(from, to int64) error {
		return c.reportMisplaced(ctx, `SELECT c.id, CASE WHEN p.kind <> $3 THEN 'its parent ' || p.id || ' is a file'
				ELSE 'its parent ' || p.id || ' is in ' || p.space_id || ', it in ' || c.space_id END
			FROM nodes c JOIN nodes p ON p.id = c.parent_id
			WHERE `+inHeapPages("c")+` AND (p.kind <> $3 OR split_part(p.space_id, '/', 1) <> c.space_id)
			ORDER BY c.id`, from, to, storage.KindFolder)
	})
	if err != nil {
		return err
	}
	err = c.reportMisplaced(ctx, `SELECT n.id, 'node ' || n.id || ' has no parent and is not its space''s root'
		FROM nodes n WHERE n.parent_id IS NULL AND n.id <> n.space_id`)
	if err != nil {
		return err
	}
	err = c.inPages(ctx, "versions", rangePages, func(from, to int64) error {
		return c.reportMisplaced(ctx, `SELECT v.file_id, 'version ' || v.key || ' of ' || v.file_id ||
				CASE WHEN n.kind = $3 THEN ', a folder' ELSE ' counts in space ' || v.space_id || ', not its file''s' END
			FROM versions v JOIN nodes n ON n.id = v.file_id
			WHERE `+inHeapPages("v")+` AND (n.kind = $3 OR v.space_id <> split_part(n.space_id, '/', 1))
			ORDER BY v.file_id, v.key`, from, to, storage.KindFolder)
	})
	if err != nil {
		return err
	}
	rootless, err := readRows(ctx, c.s, pgx.RowTo[string],
		`SELECT id FROM spaces s WHERE NOT EXISTS (SELECT 1 FROM nodes WHERE id = s.id) ORDER BY id`)
	if err != nil {
		return err
	}
	for _, id := range rootless {
		p := place{spaceID: strings.TrimSuffix(id, trashSuffix)}.problem(storage.ProblemDangling, false, "space %s has no root folder", id)
		if err := c.found(ctx, p, nil); err != nil {
			return err
		}
	}
	return c.checkAncestry(ctx)
}

// unrooted selects ($1: a space's id) the nodes of the space that no walk
// down from its root or its trash's reaches: those whose parents go round
// in a cycle, or lead to a root of another space. The walk down cannot go
// round: a cycle hangs from no root.
const unrooted = `
	WITH RECURSIVE down (id) AS (
		SELECT id FROM nodes WHERE id IN ($1, $1::text || '` + trashSuffix + `')
		UNION ALL
		SELECT n.id FROM nodes n JOIN down d ON n.parent_id = d.id
	)
	SELECT n.id FROM nodes n
	WHERE n.space_id = $1 AND n.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM down WHERE down.id = n.id)
	ORDER BY n.id`

// checkAncestry reports, space by space, each node whose ancestry ends at
// no root of its space: such a node is neither live nor in the trash,
// and lookups answer it as missing. It is named by id: it has no path.
func (c *checker) checkAncestry(ctx context.Context) error {
	ids, err := queryRows(ctx, c.s, pgx.RowTo[string], `SELECT id FROM spaces WHERE type <> 'trash' ORDER BY id`)
	if err != nil {
		return err
	}
	for _, spaceID := range ids {
		w, err := c.walkOf(ctx, spaceID)
		if err != nil {
			return fmt.Errorf("space %s: %w", spaceID, err)
		}
		if w.reached == c.tallied(spaceID).nodes {
			continue
		}
		lost, err := readRows(ctx, c.s, pgx.RowTo[string], unrooted, spaceID)
		if err != nil {
			return fmt.Errorf("space %s: %w", spaceID, err)
		}
		for _, id := range lost {
			p := place{spaceID: spaceID}.problem(storage.ProblemDangling, false,
				"node %s is on no path from the root of its space or of its trash: its parents go round in a cycle or lead elsewhere", id)
			if err := c.found(ctx, p, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// reportMisplaced reports, unrepaired, each (node, detail) that query
// selects.
func (c *checker) reportMisplaced(ctx context.Context, query string, args ...any) error {
	found, err := readRows(ctx, c.s, pgx.RowToStructByPos[misplaced], query, args...)
	if err != nil {
		return err
	}
	for _, m := range found {
		if err := c.foundAt(ctx, m.NodeID, storage.ProblemDangling, nil, "%s", m.Detail); err != nil {
			return err
		}
	}
	return nil
}

// checkTrash reports trash items whose node is not at the root of their
// trash, and nodes at a trash's root that are no item (counted in the
// trash's size, seen by no one). Neither is repaired: where the node
// belongs cannot be told.
func (c *checker) checkTrash(ctx context.Context) error {
	type item struct {
		SpaceID, Key, Location, NodeID string
	}
	var items []item
	var strays []misplaced
	err := c.s.read(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT t.space_id, t.key, t.location, t.node_id FROM trash_items t
			JOIN nodes n ON n.id = t.node_id WHERE n.parent_id IS DISTINCT FROM t.space_id || $1 ORDER BY t.space_id, t.key`, trashSuffix)
		var err error
		if items, err = pgx.CollectRows(rows, pgx.RowToStructByPos[item]); err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, `SELECT n.id, n.name FROM nodes n JOIN spaces s ON s.id = n.parent_id AND s.type = 'trash'
			WHERE NOT EXISTS (SELECT 1 FROM trash_items t WHERE t.node_id = n.id) ORDER BY n.id`)
		strays, err = pgx.CollectRows(rows, pgx.RowToStructByPos[misplaced])
		return err
	})
	if err != nil {
		return err
	}
	for _, it := range items {
		p := place{spaceID: it.SpaceID, path: trashPath + "/" + it.Key}.
			problem(storage.ProblemDangling, false, "node %s of trash item %s (deleted from %q) is not at the trash's root", it.NodeID, it.Key, it.Location)
		if err := c.found(ctx, p, nil); err != nil {
			return err
		}
	}
	for _, n := range strays {
		if err := c.foundAt(ctx, n.NodeID, storage.ProblemDangling, nil,
			"node %s is at the trash's root but is no trash item", n.NodeID); err != nil {
			return err
		}
	}
	return nil
}

// checkLocks reports locks on a node that is not a live node of their
// space (of another space, or in the trash: a lock the space's checks
// never consult, or one a remove should have dropped); a repair drops
// them, as a remove of the node would have.
func (c *checker) checkLocks(ctx context.Context) error {
	return c.checkStrays(ctx, `SELECT l.token, l.space_id, l.node_id, l.user_id FROM locks l
		JOIN nodes n ON n.id = l.node_id
		WHERE n.space_id <> l.space_id OR node_root(n.id) IS DISTINCT FROM l.space_id
		ORDER BY l.space_id, l.node_id`,
		`DELETE FROM locks WHERE token = $1`,
		func(l stray) string {
			// The token is a capability: named by its user, never shown.
			return fmt.Sprintf("a lock of user %s of space %s is on node %s of another space", l.Owner, l.SpaceID, l.NodeID)
		})
}

// checkShares reports shares whose item is not a live node of their space
// (one the change that took the item out did not delete): no listing
// shows them, but they count against their creator's limit. A repair
// deletes them, as that change would have.
func (c *checker) checkShares(ctx context.Context) error {
	return c.checkStrays(ctx, `SELECT s.id, s.space_id, s.node_id, s.creator FROM shares s
		LEFT JOIN nodes n ON n.id = s.node_id AND n.space_id = s.space_id
		WHERE n.id IS NULL OR node_root(n.id) IS DISTINCT FROM s.space_id
		ORDER BY s.space_id, s.node_id, s.id`,
		`DELETE FROM shares s WHERE s.id = $1 AND NOT EXISTS (
			SELECT 1 FROM nodes n WHERE n.id = s.node_id AND n.space_id = s.space_id
			AND node_root(n.id) = s.space_id)`,
		func(sh stray) string {
			return fmt.Sprintf("share %s of user %s is on node %s, which is not a live node of space %s", sh.Key, sh.Owner, sh.NodeID, sh.SpaceID)
		})
}

// stray is a record of a space (a lock, a share) on a node that is not a
// live node of the space: its key, space, node and user.
type stray struct {
	Key, SpaceID, NodeID, Owner string
}

// checkStrays reports each stray that query selects, at its node's path
// while the node has one (the space's root otherwise), with detail. A
// repair runs remove ($1: the stray's key) under the space's lock.
func (c *checker) checkStrays(ctx context.Context, query, remove string, detail func(stray) string) error {
	strays, err := readRows(ctx, c.s, pgx.RowToStructByPos[stray], query)
	if err != nil {
		return err
	}
	for _, r := range strays {
		repair := func(ctx context.Context) error {
			return c.s.inSpace(ctx, r.SpaceID, func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, remove, r.Key)
				return err
			})
		}
		p := place{spaceID: r.SpaceID}.problem(storage.ProblemDangling, true, "%s", detail(r))
		loc, ok, err := c.locate(ctx, r.NodeID)
		if err != nil {
			return err
		}
		if ok {
			p.Path = loc.path
		}
		if err := c.found(ctx, p, repair); err != nil {
			return err
		}
	}
	return nil
}
