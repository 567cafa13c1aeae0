package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// nodeColumns are the columns nodeRow scans, in a form every query of
// nodes can select.
const nodeColumns = `id, space_id, coalesce(parent_id, '') AS parent_id, name, kind, size, mtime, etag,
	content_type, sha1, md5, adler32, content`

// listColumns are nodeColumns but content, which listings do not need
// and which would cost a JSON decoding per child.
const listColumns = `id, space_id, coalesce(parent_id, '') AS parent_id, name, kind, size, mtime, etag,
	content_type, sha1, md5, adler32`

// nodeRow is a row of nodes.
type nodeRow struct {
	ID       string `db:"id"`
	SpaceID  string `db:"space_id"`
	ParentID string `db:"parent_id"`
	Name     string `db:"name"`
	Kind     int16  `db:"kind"`
	contentColumns
}

// contentColumns are the columns of a file's content and what describes
// it, which nodes and versions both have.
type contentColumns struct {
	Size        int64               `db:"size"`
	ModTime     time.Time           `db:"mtime"`
	ETag        string              `db:"etag"`
	ContentType string              `db:"content_type"`
	SHA1        string              `db:"sha1"`
	MD5         string              `db:"md5"`
	Adler32     string              `db:"adler32"`
	Content     []s3content.Segment `db:"content"`
}

func (r nodeRow) isFolder() bool { return storage.Kind(r.Kind) == storage.KindFolder }

// node is the storage.Node the row describes.
func (r nodeRow) node() storage.Node {
	n := storage.Node{
		ID:       r.ID,
		SpaceID:  r.SpaceID,
		ParentID: r.ParentID,
		Name:     r.Name,
		Kind:     storage.Kind(r.Kind),
		Size:     r.Size,
		ModTime:  r.ModTime.UTC(),
		ETag:     r.ETag,
	}
	if !r.isFolder() {
		n.ContentType = r.ContentType
		n.Checksums = checksum.Sums{SHA1: r.SHA1, MD5: r.MD5, Adler32: r.Adler32}
	}
	return n
}

// querier runs statements: a transaction, or the pool for a lookup that
// is one statement, and so one snapshot, on its own.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// queryNode returns the one node the query selects (with nodeColumns), and
// whether there is one.
func queryNode(ctx context.Context, q querier, sql string, args ...any) (nodeRow, bool, error) {
	rows, _ := q.Query(ctx, sql, args...)
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[nodeRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return nodeRow{}, false, nil
	}
	return r, err == nil, err
}

// listNodes returns the nodes the query selects (with listColumns),
// without their content.
func listNodes(ctx context.Context, tx pgx.Tx, sql string, args ...any) ([]nodeRow, error) {
	rows, _ := tx.Query(ctx, sql, args...)
	return pgx.CollectRows(rows, pgx.RowToStructByNameLax[nodeRow])
}

// nodeByID returns the node with id, and whether it exists.
func nodeByID(ctx context.Context, q querier, id string) (nodeRow, bool, error) {
	return queryNode(ctx, q, `SELECT `+nodeColumns+` FROM nodes WHERE id = $1`, id)
}

// nodeIn returns node id of the space, or a wrapped ErrNotFound: a node
// of another space or in the space's trash is not one (layout.go).
func nodeIn(ctx context.Context, q querier, spaceID, id string) (nodeRow, error) {
	r, ok, err := rootedNode(ctx, q, id)
	if err != nil {
		return nodeRow{}, err
	}
	if !ok || !r.live(spaceID) {
		return nodeRow{}, storage.NodeNotFound(spaceID, id)
	}
	return r.nodeRow, nil
}

// folderIn returns the folder id of the space to put something in; a
// missing parent or a file is a wrapped ErrConflict, a node of another
// space a wrapped otherSpace.
func folderIn(ctx context.Context, q querier, spaceID, id string, otherSpace error) (nodeRow, error) {
	r, ok, err := rootedNode(ctx, q, id)
	if err != nil {
		return nodeRow{}, err
	}
	// A folder in the space's trash is as missing as a deleted one, and
	// so is one whose parents lead to no root.
	ok = ok && r.Root != "" && !r.trashed(spaceID)
	if err := storage.CheckParent(spaceID, id, r.node(), ok, otherSpace); err != nil {
		return nodeRow{}, err
	}
	return r.nodeRow, nil
}

// child returns the child called name of parentID, and whether it exists.
func child(ctx context.Context, q querier, parentID, name string) (nodeRow, bool, error) {
	return queryNode(ctx, q, `SELECT `+nodeColumns+` FROM nodes WHERE parent_id = $1 AND name = $2`, parentID, name)
}

// Node returns a node of the space.
func (s *Store) Node(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	pool, err := s.db()
	if err != nil {
		return storage.Node{}, err
	}
	r, err := nodeIn(ctx, pool, spaceID, nodeID)
	if err != nil {
		return storage.Node{}, classify(err)
	}
	return r.node(), nil
}

// Child returns the child called name of folder parentID.
func (s *Store) Child(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	if err := validName(name); err != nil {
		return storage.Node{}, fmt.Errorf("child: %w", err)
	}
	pool, err := s.db()
	if err != nil {
		return storage.Node{}, err
	}
	// A child is in the space exactly when its parent is: one statement
	// reads both, so they agree.
	rows, _ := pool.Query(ctx, `SELECT `+nodeColumns+`, coalesce(node_root(parent_id), '') AS root
		FROM nodes WHERE parent_id = $1 AND name = $2`, parentID, name)
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[rootedRow])
	if errors.Is(err, pgx.ErrNoRows) || err == nil && !r.live(spaceID) {
		return storage.Node{}, storage.ChildNotFound(parentID, name)
	}
	if err != nil {
		return storage.Node{}, classify(err)
	}
	return r.node(), nil
}

// validName checks a node name at the store boundary; PostgreSQL text
// cannot hold invalid UTF-8.
func validName(name string) error {
	return storage.ValidName(name, utf8.ValidString)
}

// ReadDir returns up to limit children of a folder ordered by name bytes,
// starting strictly after the name after ("" starts at the beginning). A
// limit of 0 or less returns all remaining children.
func (s *Store) ReadDir(ctx context.Context, spaceID, folderID, after string, limit int) ([]storage.Node, error) {
	var rows []nodeRow
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		rows, err = readDir(ctx, tx, spaceID, folderID, after, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return mapRows(rows, nodeRow.node), nil
}

// ReadDirProps is ReadDir with each child's dead properties, read in the
// same snapshot as the page.
func (s *Store) ReadDirProps(ctx context.Context, spaceID, folderID, user, after string, limit int) ([]storage.Entry, error) {
	if err := storage.ValidPropUser(user); err != nil {
		return nil, fmt.Errorf("read dir %s: %w", folderID, err)
	}
	out := []storage.Entry{}
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, err := readDir(ctx, tx, spaceID, folderID, after, limit)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		props, err := childProps(ctx, tx, folderID, after, rows[len(rows)-1].Name, user)
		if err != nil {
			return err
		}
		out = mapRows(rows, func(r nodeRow) storage.Entry { return storage.Entry{Node: r.node(), Props: props[r.ID]} })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readDir returns up to limit children of a folder, in name order,
// starting after the name after.
func readDir(ctx context.Context, tx pgx.Tx, spaceID, folderID, after string, limit int) ([]nodeRow, error) {
	f, err := nodeIn(ctx, tx, spaceID, folderID)
	if err != nil {
		return nil, err
	}
	if !f.isFolder() {
		return nil, storage.NotAFolder(folderID)
	}
	var max *int // NULL: LIMIT ALL
	if limit > 0 {
		max = &limit
	}
	return listNodes(ctx, tx, `SELECT `+listColumns+` FROM nodes
		WHERE parent_id = $1 AND name > $2 ORDER BY name LIMIT $3`, folderID, after, max)
}

// Walk resolves a path below a node in one snapshot. It returns the node
// nodeID of the space, then the child called names[0] of it, the child
// called names[1] of that, and so on: it stops, without an error, before
// the first name that does not exist or whose parent is a file. A missing
// node nodeID is ErrNotFound, an invalid name looked up ErrInvalid.
func (s *Store) Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error) {
	var nodes []storage.Node
	err := s.read(ctx, func(tx pgx.Tx) error {
		r, err := nodeIn(ctx, tx, spaceID, nodeID)
		if err != nil {
			return err
		}
		nodes = make([]storage.Node, 0, len(names)+1)
		nodes = append(nodes, r.node())
		for _, name := range names {
			if !r.isFolder() {
				return nil
			}
			if err := validName(name); err != nil {
				return fmt.Errorf("walk: %w", err)
			}
			c, ok, err := child(ctx, tx, r.ID, name)
			if err != nil || !ok {
				return err
			}
			r = c
			nodes = append(nodes, r.node())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return nodes, nil
}
