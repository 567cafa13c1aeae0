package boltstore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/davspaces/davspaces/storage"
)

// Node returns a node of the space.
func (s *Store) Node(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	r, err := inTxn(ctx, s.view, func(t *txn) (rec, error) { return t.nodeIn(spaceID, nodeID) })
	if err != nil {
		return storage.Node{}, err
	}
	return r.Node, nil
}

// Child returns the child called name of folder parentID.
func (s *Store) Child(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	if err := storage.ValidName(name, nil); err != nil {
		return storage.Node{}, fmt.Errorf("child: %w", err)
	}
	r, err := inTxn(ctx, s.view, func(t *txn) (rec, error) {
		r, ok, err := t.child(parentID, name)
		if err != nil {
			return rec{}, err
		}
		// A child is in the space exactly when its parent is.
		if !ok || r.SpaceID != spaceID {
			return rec{}, storage.ChildNotFound(parentID, name)
		}
		return r, nil
	})
	if err != nil {
		return storage.Node{}, err
	}
	return r.Node, nil
}

// ReadDir returns up to limit children of a folder ordered by name bytes,
// starting strictly after the name after ("" starts at the beginning). A
// limit of 0 or less returns all remaining children.
func (s *Store) ReadDir(ctx context.Context, spaceID, folderID, after string, limit int) ([]storage.Node, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]storage.Node, 0, pageCapacity(limit))
	err := s.view(func(t *txn) error {
		return t.readDir(spaceID, folderID, after, limit, func(r rec) error {
			out = append(out, r.Node)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadDirProps is ReadDir with each child's dead properties, read in the
// same transaction as the page.
func (s *Store) ReadDirProps(ctx context.Context, spaceID, folderID, user, after string, limit int) ([]storage.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := storage.ValidPropUser(user); err != nil {
		return nil, fmt.Errorf("read dir %s: %w", folderID, err)
	}
	out := make([]storage.Entry, 0, pageCapacity(limit))
	err := s.view(func(t *txn) error {
		props := t.newPropReader()
		return t.readDir(spaceID, folderID, after, limit, func(r rec) error {
			p, err := props.read(r.ID, user)
			out = append(out, storage.Entry{Node: r.Node, Props: p})
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// pageCapacity is the room a page of up to limit children starts with: the
// whole page, up to a size beyond which growing costs less than reserving
// what a page of all remaining children might not use.
func pageCapacity(limit int) int {
	const most = 1024
	if limit > 0 && limit < most {
		return limit
	}
	return most
}

// readDir calls fn for up to limit children of a folder, in name order,
// starting after the name after.
func (t *txn) readDir(spaceID, folderID, after string, limit int, fn func(rec) error) error {
	f, err := t.nodeIn(spaceID, folderID)
	if err != nil {
		return err
	}
	if !f.IsFolder() {
		return storage.NotAFolder(folderID)
	}
	return t.scanChildren(folderID, after, limit, fn)
}

// scanChildren calls fn for up to limit children of folder folderID, in
// name order, starting after the name after.
func (t *txn) scanChildren(folderID, after string, limit int, fn func(rec) error) error {
	space, err := t.spaceBelow(folderID)
	if err != nil {
		return err
	}
	prefix := childKey(folderID, "")
	start := childKey(folderID, after)
	c := t.children().Cursor()
	k, v := c.Seek(start)
	if after != "" && bytes.Equal(k, start) {
		k, v = c.Next()
	}
	for n := 0; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if limit > 0 && n >= limit {
			break
		}
		t.countScan(len(k) + len(v))
		r, err := decodeNode(v)
		if err != nil {
			return err
		}
		r.SpaceID = space
		if err := fn(r); err != nil {
			return err
		}
		n++
	}
	return nil
}

// Walk resolves a path below a node in one snapshot, where a lookup per
// segment would take a read transaction each. It returns the node nodeID
// of the space, then the child called names[0] of it, the child called
// names[1] of that, and so on: it stops, without an error, before the
// first name that does not exist or whose parent is a file. A missing
// node nodeID is ErrNotFound, an invalid name looked up ErrInvalid.
func (s *Store) Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error) {
	return inTxn(ctx, s.view, func(t *txn) ([]storage.Node, error) {
		r, err := t.nodeIn(spaceID, nodeID)
		if err != nil {
			return nil, err
		}
		nodes := make([]storage.Node, 0, len(names)+1)
		nodes = append(nodes, r.Node)
		for _, name := range names {
			if !r.IsFolder() {
				return nodes, nil
			}
			if err := storage.ValidName(name, nil); err != nil {
				return nil, fmt.Errorf("walk: %w", err)
			}
			child, ok, err := t.child(r.ID, name)
			if err != nil || !ok {
				return nodes, err
			}
			r = child
			nodes = append(nodes, r.Node)
		}
		return nodes, nil
	})
}

// node returns the node with id, in the space its ancestry leads to, and
// whether it exists.
func (t *txn) node(id string) (rec, bool, error) {
	r, ok, err := t.record(id)
	if err != nil || !ok {
		return r, ok, err
	}
	space, err := t.nodeSpace(&r)
	if err != nil {
		return rec{}, false, err
	}
	t.inSpace(&r, space)
	return r, true, nil
}

// record returns the record of node id as stored, without its space, and
// whether it exists.
func (t *txn) record(id string) (rec, bool, error) {
	k := t.look.get(&t.look.nodes, t.nodes, []byte(id))
	if k == nil {
		return rec{}, false, nil
	}
	v := t.look.get(&t.look.children, t.children, k)
	if v == nil {
		return rec{}, false, fmt.Errorf("node %s: dangling index entry: %w", id, errCorrupt)
	}
	r, err := decodeNode(v)
	return r, err == nil, err
}

// nodeIn returns node id of the space, or a wrapped ErrNotFound.
func (t *txn) nodeIn(spaceID, id string) (rec, error) {
	r, ok, err := t.node(id)
	if err != nil {
		return rec{}, err
	}
	if !ok || r.SpaceID != spaceID {
		return rec{}, storage.NodeNotFound(spaceID, id)
	}
	return r, nil
}

// folderIn returns the folder id of the space to put something in; a
// missing parent or a file is a wrapped ErrConflict, a node of another space
// a wrapped otherSpace.
func (t *txn) folderIn(spaceID, id string, otherSpace error) (rec, error) {
	r, ok, err := t.node(id)
	if err != nil {
		return rec{}, err
	}
	if err := storage.CheckParent(spaceID, id, r.Node, ok, otherSpace); err != nil {
		return rec{}, err
	}
	return r, nil
}

// putNode rewrites the record of r, which stays where it is: its parent
// and name are those it was stored with (placeNode puts it elsewhere).
func (t *txn) putNode(r *rec) error {
	return t.children().Put(recordKey(r), encodeNode(r))
}

func childKey(parentID, name string) []byte {
	k := make([]byte, 0, len(parentID)+1+len(name))
	k = append(k, parentID...)
	k = append(k, '/')
	return append(k, name...)
}

// child returns the child called name of parentID, and whether it exists.
func (t *txn) child(parentID, name string) (rec, bool, error) {
	v := t.look.get(&t.look.children, t.children, childKey(parentID, name))
	if v == nil {
		return rec{}, false, nil
	}
	return t.decodeChild(parentID, v)
}

// decodeChild decodes v, the record of a child of folder parentID, with
// the folder's space.
func (t *txn) decodeChild(parentID string, v []byte) (rec, bool, error) {
	r, err := decodeNode(v)
	if err != nil {
		return rec{}, false, err
	}
	space, err := t.spaceBelow(parentID)
	if err != nil {
		return rec{}, false, err
	}
	t.inSpace(&r, space)
	return r, true, nil
}
