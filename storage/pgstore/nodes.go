package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// nodeColumns are the columns nodeRow scans, in a form every query of
// nodes can select.
const nodeColumns = `id, space_id, coalesce(parent_id, '') AS parent_id, name, kind, size, mtime, etag,
	content_type, sha1, md5, adler32, content`

// nodeRow is a row of nodes.
type nodeRow struct {
	ID          string              `db:"id"`
	SpaceID     string              `db:"space_id"`
	ParentID    string              `db:"parent_id"`
	Name        string              `db:"name"`
	Kind        int16               `db:"kind"`
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

// queryNode returns the one node the query selects (with nodeColumns), and
// whether there is one.
func queryNode(ctx context.Context, tx pgx.Tx, sql string, args ...any) (nodeRow, bool, error) {
	rows, _ := tx.Query(ctx, sql, args...)
	r, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[nodeRow])
	if errors.Is(err, pgx.ErrNoRows) {
		return nodeRow{}, false, nil
	}
	return r, err == nil, err
}

// queryNodes returns the nodes the query selects (with nodeColumns).
func queryNodes(ctx context.Context, tx pgx.Tx, sql string, args ...any) ([]nodeRow, error) {
	rows, _ := tx.Query(ctx, sql, args...)
	return pgx.CollectRows(rows, pgx.RowToStructByName[nodeRow])
}

// nodeByID returns the node with id, and whether it exists.
func nodeByID(ctx context.Context, tx pgx.Tx, id string) (nodeRow, bool, error) {
	return queryNode(ctx, tx, `SELECT `+nodeColumns+` FROM nodes WHERE id = $1`, id)
}

// nodeIn returns node id of the space, or a wrapped ErrNotFound.
func nodeIn(ctx context.Context, tx pgx.Tx, spaceID, id string) (nodeRow, error) {
	r, ok, err := nodeByID(ctx, tx, id)
	if err != nil {
		return nodeRow{}, err
	}
	if !ok || r.SpaceID != spaceID {
		return nodeRow{}, fmt.Errorf("node %s in space %s: %w", id, spaceID, storage.ErrNotFound)
	}
	return r, nil
}

// folderIn returns the folder id of the space to put something in; a
// missing parent or a file is a wrapped ErrConflict, a node of another
// space a wrapped otherSpace.
func folderIn(ctx context.Context, tx pgx.Tx, spaceID, id string, otherSpace error) (nodeRow, error) {
	r, ok, err := nodeByID(ctx, tx, id)
	switch {
	case err != nil:
		return nodeRow{}, err
	case !ok:
		return nodeRow{}, fmt.Errorf("parent %s does not exist: %w", id, storage.ErrConflict)
	case r.SpaceID != spaceID:
		return nodeRow{}, fmt.Errorf("parent %s is in another space: %w", id, otherSpace)
	case !r.isFolder():
		return nodeRow{}, fmt.Errorf("parent %s is not a folder: %w", id, storage.ErrConflict)
	}
	return r, nil
}

// child returns the child called name of parentID, and whether it exists.
func child(ctx context.Context, tx pgx.Tx, parentID, name string) (nodeRow, bool, error) {
	return queryNode(ctx, tx, `SELECT `+nodeColumns+` FROM nodes WHERE parent_id = $1 AND name = $2`, parentID, name)
}

// Node returns a node of the space.
func (s *Store) Node(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	var r nodeRow
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		r, err = nodeIn(ctx, tx, spaceID, nodeID)
		return err
	})
	if err != nil {
		return storage.Node{}, err
	}
	return r.node(), nil
}

// Child returns the child called name of folder parentID.
func (s *Store) Child(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	if err := validName(name); err != nil {
		return storage.Node{}, fmt.Errorf("child: %w", err)
	}
	var r nodeRow
	err := s.read(ctx, func(tx pgx.Tx) error {
		var ok bool
		var err error
		r, ok, err = child(ctx, tx, parentID, name)
		if err != nil {
			return err
		}
		// A child is in the space exactly when its parent is.
		if !ok || r.SpaceID != spaceID {
			return fmt.Errorf("child %q of %s: %w", name, parentID, storage.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return storage.Node{}, err
	}
	return r.node(), nil
}

// maxNameLen caps node names and caller-chosen ids, as boltstore does.
const maxNameLen = 255

// validName checks a node name at the store boundary.
func validName(name string) error {
	switch {
	case name == "", name == ".", name == "..", len(name) > maxNameLen, strings.ContainsAny(name, "/\x00"):
		if len(name) > 64 {
			name = name[:64] + "…"
		}
		return fmt.Errorf("name %q: %w", name, storage.ErrInvalid)
	}
	return nil
}

// validID checks a caller-chosen id (a space id, which is also the id of
// the space's root node).
func validID(what, v string) error {
	if v == "" || len(v) > maxNameLen || strings.ContainsAny(v, "/\x00") {
		return fmt.Errorf("%s %q: %w", what, v, storage.ErrInvalid)
	}
	return nil
}
