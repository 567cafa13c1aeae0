package boltstore

import (
	"bytes"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// The node records live in the children bucket under their place in the
// tree, parent id + "/" + name, and the nodes bucket maps a node id to that
// key. A listing is then one cursor scan over the folder's key range: the
// records come in name order next to each other, where a children index of
// ids would cost a random lookup per child (ids are random UUIDs, so the
// lookups have no locality). The whole record sits there, rather than a
// copy of the fields a listing shows, so that every change still writes one
// record: a folder's size, etag and modification time change with every
// write below it. A lookup by id costs two gets; a move rewrites the moved
// node's record and index entry only, since the keys of its descendants
// hold its id, not its path.
//
// A space root has no parent: its record is under "\x00" + its id, which
// no child key equals (keys of children contain "/", ids do not) and no
// folder's key range holds.
//
// A record does not say which space its node is in: the root its parents
// lead to does, a space root (whose id is the space's) or the trash root
// of a space (trash.go). Moving a subtree between a space and its trash
// then rewrites the record of its top only, whatever lies below. A lookup
// by id walks up the parent chain to find the space, and the txn keeps
// what it found for every folder on the way (spaceOf), so that the
// lookups of one transaction walk each branch once; a child read from a
// folder is in the folder's space, which the txn has found already.

// layoutVersion is the layout this code reads and writes. Layout 1 kept
// the records in the nodes bucket keyed by id and the children bucket as
// an index of ids; Open migrates it (migrate.go). Layout 2 wrote the
// space into every record (format 2), which layout 3 reads and ignores.
// Layout 4 adds the version age index (versionages.go), built at the
// first open. The version is recorded under keyLayout in the meta bucket;
// a database without it is of layout 1.
const layoutVersion = 4

var keyLayout = []byte("layout")

// recordKey returns the key of r's record in the children bucket.
func recordKey(r *rec) []byte {
	if r.ParentID == "" {
		return rootKey(r.ID)
	}
	return childKey(r.ParentID, r.Name)
}

func rootKey(id string) []byte {
	return append([]byte{0}, id...)
}

// placeNode writes the record of r, new or moved, at the place its parent
// and name give, points its id there and enters its name in the name index
// (search.go). A moved node's old record must have been removed with
// removeNode.
func (t *txn) placeNode(r *rec) error {
	k := recordKey(r)
	if err := t.children().Put(k, encodeNode(r)); err != nil {
		return err
	}
	if err := t.indexName(r); err != nil {
		return err
	}
	return t.nodes().Put([]byte(r.ID), k)
}

// removeNode deletes the record of r and its index entries.
func (t *txn) removeNode(r *rec) error {
	if err := t.children().Delete(recordKey(r)); err != nil {
		return err
	}
	if err := t.unindexName(r); err != nil {
		return err
	}
	return t.nodes().Delete([]byte(r.ID))
}

// lookups are the cursors a txn looks records up with, one per bucket,
// kept for the transaction: a bolt Get makes a cursor each time, whose
// stack costs an allocation per level of the tree, and a lookup by id takes
// two of them.
type lookups struct{ nodes, children, versions *bolt.Cursor }

// get returns the value of key in the bucket open returns, or nil, seeking
// with the cursor *c (made on first use). A seek starts from the bucket's
// root, so the cursor stays usable across changes to the bucket.
func (l *lookups) get(c **bolt.Cursor, open func() countedBucket, key []byte) []byte {
	k, v := l.cursor(c, open).Seek(key)
	if !bytes.Equal(k, key) {
		return nil
	}
	return v
}

// cursor returns the cursor *c, made on first use. Whoever uses it seeks
// first: the last user left it anywhere.
func (l *lookups) cursor(c **bolt.Cursor, open func() countedBucket) *bolt.Cursor {
	if *c == nil {
		*c = open().Cursor()
	}
	return *c
}

// nodeSpace returns the space id of the node with record r: the id of a
// space, or of a space's trash for a node in it (trashSpaceID). A node
// whose parent chain breaks or loops is in none: "".
func (t *txn) nodeSpace(r *rec) (string, error) {
	if r.ParentID == "" {
		return r.ID, nil // a space root
	}
	return t.spaceBelow(r.ParentID)
}

// spaceBelow returns the space id of the children of folder id, walking
// up from it to a root the first time and remembering the answer for
// every folder on the way. A chain that breaks or is longer than any tree
// may be deep (a loop) ends in no space, "". The walk reads the index
// only: a node's index entry is its record's key, which starts with its
// parent's id (or marks a space root).
func (t *txn) spaceBelow(id string) (string, error) {
	if isTrashRoot(id) {
		return id, nil
	}
	if sp, ok := t.spaceOf[id]; ok {
		return sp, nil
	}
	var walked []string
	space := ""
	key := []byte(id)
	for up := id; ; {
		if sp, ok := t.spaceOf[up]; ok {
			space = sp
			break
		}
		if len(walked) > storage.MaxNodeDepth {
			break // a loop, or damage as bad
		}
		walked = append(walked, up)
		k := t.look.get(&t.look.nodes, t.nodes, key)
		if len(k) == 0 {
			break
		}
		if k[0] == 0 { // rootKey
			space = up
			break
		}
		parent, _, ok := bytes.Cut(k, []byte{'/'}) // ids hold no "/"
		if !ok {
			break
		}
		if bytes.IndexByte(parent, 0) >= 0 { // isTrashRoot
			space = string(parent)
			break
		}
		key, up = parent, string(parent)
	}
	if t.spaceOf == nil {
		t.spaceOf = make(map[string]string, len(walked))
	}
	for _, w := range walked {
		t.spaceOf[w] = space
	}
	return space, nil
}

// inSpace sets the space of r, a record read from a folder whose
// children are in space, and remembers it if r is a folder.
func (t *txn) inSpace(r *rec, space string) {
	r.SpaceID = space
	if r.IsFolder() {
		if t.spaceOf == nil {
			t.spaceOf = map[string]string{}
		}
		t.spaceOf[r.ID] = space
	}
}

// forgetSpaces forgets the spaces the txn found: a subtree changed
// spaces (into the trash or out of it).
func (t *txn) forgetSpaces() { t.spaceOf = nil }
