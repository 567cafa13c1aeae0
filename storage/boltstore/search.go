package boltstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// The name index (bucketNames) holds an entry for every node with a
// parent, keyed by its live space, its folded name and its id
// (nameKey), the value its parent's id. placeNode and removeNode keep it in
// the same transaction as the tree, so a search scans one space's key
// range, comparing folded names without decoding a record, and reads
// records only for the matches' folders and the page it answers.
//
// The key holds the live space even for a node moved to the trash below a
// trashed folder (only the folder's record moves, layout.go), so that
// removeNode finds the entry whichever space the node is in then. Such an
// entry is left out at search time: its folders lead up to the trash, not
// to the scope (searchWalk.below). The top node of a trash item, whose
// place is in the trash root, has no entry.
var (
	bucketNames  = []byte("names") // live space id \0 folded name \0 node id → parent id
	keyNameIndex = []byte("name_index")
)

// nameIndexed reports whether r has an entry in the name index: a node
// with a parent that is not a trash root.
func nameIndexed(r *rec) bool {
	return r.ParentID != "" && !isTrashRoot(r.ParentID)
}

// liveSpace is the live space of a space id or of its trash.
func liveSpace(spaceID string) string {
	return strings.TrimSuffix(spaceID, trashSuffix)
}

func nameKey(r *rec) []byte {
	space, folded := liveSpace(r.SpaceID), storage.SearchKey(r.Name)
	k := make([]byte, 0, len(space)+len(folded)+len(r.ID)+2)
	k = append(append(k, space...), 0)
	k = append(append(k, folded...), 0)
	return append(k, r.ID...)
}

// indexedSpace returns the live space the name index files r under, for
// a node whose ancestry leads to no root, so that a check reports it, and
// a recount counts it, in the space it was in: "" when no space does. It
// looks in every space, which only damage makes it do.
func (t *txn) indexedSpace(r *rec) (string, error) {
	if !nameIndexed(r) {
		return "", nil
	}
	folded := storage.SearchKey(r.Name)
	found := ""
	c := t.spaces().Cursor()
	for k, _ := c.First(); k != nil && found == ""; k, _ = c.Next() {
		key := make([]byte, 0, len(k)+len(folded)+len(r.ID)+2)
		key = append(append(key, k...), 0)
		key = append(append(key, folded...), 0)
		key = append(key, r.ID...)
		if t.names().Get(key) != nil {
			found = string(k)
		}
	}
	return found, nil
}

// indexName adds the entry of r, just placed, to the name index.
func (t *txn) indexName(r *rec) error {
	if !nameIndexed(r) {
		return nil
	}
	return t.names().Put(nameKey(r), []byte(r.ParentID))
}

// unindexName deletes the entry of r, being removed from its place.
func (t *txn) unindexName(r *rec) error {
	if r.ParentID == "" {
		return nil
	}
	return t.names().Delete(nameKey(r))
}

func (t *txn) names() countedBucket { return t.bucket(&t.open.names, bucketNames) }

// buildNameIndex fills the name index of a database from before it, once:
// the meta bucket records that it was built.
func buildNameIndex(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta.Get(keyNameIndex) != nil {
		return nil
	}
	names, err := tx.CreateBucketIfNotExists(bucketNames)
	if err != nil {
		return err
	}
	t := &txn{tx: tx}
	err = tx.Bucket(bucketChildren).ForEach(func(_, v []byte) error {
		r, err := decodeNode(v)
		if err != nil {
			return err
		}
		if !nameIndexed(&r) {
			return nil
		}
		if r.SpaceID, err = t.spaceBelow(r.ParentID); err != nil {
			return err
		}
		return names.Put(nameKey(&r), []byte(r.ParentID))
	})
	if err != nil {
		return fmt.Errorf("build the name index: %w", err)
	}
	return meta.Put(keyNameIndex, []byte("1"))
}

// SearchNames implements storage.Searcher.
func (s *Store) SearchNames(ctx context.Context, scope storage.SearchScope, pattern string) (storage.Found, error) {
	scope, err := scope.Normalize()
	if err != nil {
		return storage.Found{}, err
	}
	folded := []byte(storage.FoldName(pattern))
	var found storage.Found
	err = s.viewWalk(func(t *txn) error {
		w, err := t.newSearchWalk(scope)
		if err != nil {
			return err
		}
		prefix := append([]byte(scope.SpaceID), 0)
		c := t.names().Cursor()
		var page []string
		for k, parent := c.Seek(prefix); bytes.HasPrefix(k, prefix); k, parent = c.Next() {
			t.countScan(len(k) + len(parent))
			name, id, ok := bytes.Cut(k[len(prefix):], []byte{0})
			if !ok {
				return fmt.Errorf("name index key %q: %w", k, errCorrupt)
			}
			if !bytes.Contains(name, folded) {
				continue
			}
			if below, err := w.belowID(parent); err != nil || !below {
				if err == nil {
					err = ctx.Err()
				}
				if err != nil {
					return err
				}
				continue
			}
			if found.Total >= scope.Offset && len(page) < scope.Limit {
				page = append(page, string(id))
			}
			found.Total++
		}
		found.Nodes, err = t.pageNodes(scope.SpaceID, page)
		return err
	})
	if err != nil {
		return storage.Found{}, fmt.Errorf("search names in space %s: %w", scope.SpaceID, err)
	}
	return found, nil
}

// SearchFavorites implements storage.Searcher. Favourites are few and
// kept only as properties, which are keyed by node: it reads the
// properties of the whole store, where the name index spares SearchNames
// that.
func (s *Store) SearchFavorites(ctx context.Context, scope storage.SearchScope, user string) (storage.Found, error) {
	scope, err := scope.Normalize()
	if err != nil {
		return storage.Found{}, err
	}
	suffix := propSuffix(user, storage.FavoriteProp)
	var all []storage.Node
	err = s.viewWalk(func(t *txn) error {
		w, err := t.newSearchWalk(scope)
		if err != nil {
			return err
		}
		c := t.props().Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			t.countScan(len(k) + len(v))
			if !bytes.HasSuffix(k, suffix) || !storage.IsFavorite(string(v)) {
				continue
			}
			id := string(k[:len(k)-len(suffix)])
			if strings.IndexByte(id, 0) >= 0 {
				continue
			}
			r, ok, err := t.node(id)
			if err != nil {
				return err
			}
			if !ok || r.SpaceID != scope.SpaceID {
				continue
			}
			below, err := w.below(r.ParentID)
			if err != nil {
				return err
			}
			if below {
				all = append(all, r.Node)
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return storage.Found{}, fmt.Errorf("search favourites in space %s: %w", scope.SpaceID, err)
	}
	slices.SortFunc(all, func(a, b storage.Node) int {
		return cmpSearch(a, b)
	})
	return storage.PageOf(all, scope), nil
}

// cmpSearch orders search results as the name index does.
func cmpSearch(a, b storage.Node) int {
	if c := strings.Compare(storage.SearchKey(a.Name), storage.SearchKey(b.Name)); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// propSuffix is the end of the key of user's property name in
// bucketProps, after the node id.
func propSuffix(user string, name storage.PropName) []byte {
	var b []byte
	for _, s := range []string{user, name.Space, name.Local} {
		b = append(append(b, 0), s...)
	}
	return b
}

// pageNodes reads the nodes of a page of results.
func (t *txn) pageNodes(spaceID string, ids []string) ([]storage.Node, error) {
	nodes := make([]storage.Node, 0, len(ids))
	for _, id := range ids {
		r, err := t.nodeIn(spaceID, id)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, r.Node)
	}
	return nodes, nil
}

// searchWalk tells whether folders lie in a search's scope, walking up
// from each once: the verdicts are kept, so a search reads each folder
// holding a match and each folder above it at most once.
type searchWalk struct {
	t       *txn
	scope   storage.SearchScope
	verdict map[string]bool
}

// newSearchWalk checks that the scope's folder is a folder of its space.
func (t *txn) newSearchWalk(scope storage.SearchScope) (*searchWalk, error) {
	under, err := t.nodeIn(scope.SpaceID, scope.Under)
	if err != nil {
		return nil, err
	}
	if !under.IsFolder() {
		return nil, fmt.Errorf("search below file %s: %w", under.ID, storage.ErrConflict)
	}
	return &searchWalk{t: t, scope: scope, verdict: map[string]bool{scope.Under: true}}, nil
}

// belowID is below for an id read from the index: a folder seen before
// costs no allocation.
func (w *searchWalk) belowID(id []byte) (bool, error) {
	if v, ok := w.verdict[string(id)]; ok {
		return v, nil
	}
	return w.below(string(id))
}

// below reports whether folder id is the scope's folder or below it, in
// the live space.
func (w *searchWalk) below(id string) (bool, error) {
	var path []string
	verdict := false
	for depth := 0; ; depth++ {
		if v, ok := w.verdict[id]; ok {
			verdict = v
			break
		}
		if depth > storage.MaxNodeDepth {
			return false, fmt.Errorf("folder %s: deeper than %d folders: %w", id, storage.MaxNodeDepth, errCorrupt)
		}
		path = append(path, id)
		r, ok, err := w.t.node(id)
		if err != nil {
			return false, err
		}
		if !ok || r.SpaceID != w.scope.SpaceID || r.ParentID == "" {
			// Gone, in the trash, or the root above the scope.
			break
		}
		id = r.ParentID
	}
	for _, p := range path {
		w.verdict[p] = verdict
	}
	return verdict, nil
}
