package boltstore

import (
	"bytes"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// checkVersions checks that every version belongs to a file of its space
// (live or in its trash) and has its content.
func (c *checkRun) checkVersions() error {
	var refs []contentRef
	err := c.scan(bucketVersions, func(t *txn, k, v []byte) ([]finding, error) {
		c.progress(1)
		sp, rest, ok1 := bytes.Cut(k, []byte{0})
		file, key, ok2 := bytes.Cut(rest, []byte{0})
		spaceID, fileID, vkey := string(sp), string(file), string(key)
		if !ok1 || !ok2 {
			return []finding{problem(storage.ProblemDangling, "", "", "unreadable version key %q", k)}, nil
		}
		r, err := decodeVersion(vkey, v)
		if err != nil {
			return []finding{problem(storage.ProblemDangling, spaceID, "", "version %s of file %s: %v", vkey, fileID, err)}, nil
		}
		n, ok, err := t.node(fileID)
		if err != nil {
			return nil, err
		}
		if !ok || n.IsFolder() || t.homeSpace(n) != spaceID {
			vk := bytes.Clone(k)
			still := func(t *txn) bool {
				n, ok, err := t.node(fileID)
				return err == nil && t.versions().Get(vk) != nil && (!ok || n.IsFolder() || t.homeSpace(n) != spaceID)
			}
			return []finding{problem(storage.ProblemDangling, spaceID, "", "version %s of file %s: the file is not in the space", vkey, fileID).
				withRepair(c.dropVersion(spaceID, fileID, vkey, still))}, nil
		}
		ref, fs := c.fileContent(t, spaceID, t.pathOf(n), r.File, vkey)
		if ref != nil {
			refs = append(refs, *ref)
		}
		return fs, nil
	}, func() error {
		batch := refs
		refs = nil
		return c.checkContents(batch)
	})
	return err
}

// checkNodeIndex checks that every index entry points at the record of
// its node.
func (c *checkRun) checkNodeIndex() error {
	return c.scan(bucketNodes, func(t *txn, k, v []byte) ([]finding, error) {
		id, key := string(k), bytes.Clone(v)
		rv := t.children().Get(key)
		if rv != nil {
			if r, err := decodeNode(rv); err == nil && r.ID == id {
				return nil, nil
			}
		}
		stale := func(t *txn) bool {
			if !bytes.Equal(t.nodes().Get([]byte(id)), key) {
				return false
			}
			rv := t.children().Get(key)
			if rv == nil {
				return true
			}
			r, err := decodeNode(rv)
			return err == nil && r.ID != id
		}
		f := problem(storage.ProblemDangling, "", "", "index entry of node %s points at no record of it", id)
		if stale(t) {
			f = f.withRepair(func() (bool, error) {
				return c.update(func(t *txn) (bool, error) {
					if !stale(t) {
						return false, nil
					}
					return true, t.nodes().Delete([]byte(id))
				})
			})
		}
		return []finding{f}, nil
	}, nil)
}

// checkRecords checks that every node record sits where its parent and
// name say, that its parent exists (a space's folder, or the trash root of
// an existing space holding the item the record is the node of) and that
// its parent chain ends at a root: the root says which space the node is
// in (layout.go). Records whose parent is gone, or whose chain loops,
// cannot be reached; they may hold content, so they are reported, never
// removed.
func (c *checkRun) checkRecords() error {
	var lastParent string
	var parentOK bool
	return c.scan(bucketChildren, func(t *txn, k, v []byte) ([]finding, error) {
		r, err := decodeNode(v)
		if err != nil {
			return []finding{problem(storage.ProblemDangling, "", "", "unreadable node record %q: %v", k, err)}, nil
		}
		if r.SpaceID, err = t.nodeSpace(&r); err != nil {
			return nil, err
		}
		rooted := r.SpaceID != ""
		if !rooted { // reported in the space it was in
			if r.SpaceID, err = t.indexedSpace(&r); err != nil {
				return nil, err
			}
		}
		spaceID := ownSpace(r.SpaceID)
		if !bytes.Equal(recordKey(&r), k) {
			return []finding{problem(storage.ProblemDangling, spaceID, "", "record of node %s is kept under %q, not where its parent and name say", r.ID, k)}, nil
		}
		var fs []finding
		if f := c.checkIndexEntry(t, r, k); f != nil {
			fs = append(fs, *f)
		}
		if r.ParentID == "" {
			if !t.spaceExists(r.ID) {
				fs = append(fs, problem(storage.ProblemDangling, r.ID, "", "root folder of a space that does not exist"))
			}
			return fs, nil
		}
		if r.ParentID != lastParent {
			lastParent = r.ParentID
			parentOK = t.parentExists(r.ParentID)
			if parentOK && !rooted {
				// Once for the nodes of a folder: their chain is its.
				fs = append(fs, problem(storage.ProblemDangling, spaceID, "", "the nodes below folder %s lead to no space root: its parent chain breaks or loops", r.ParentID))
			}
		}
		switch {
		case !parentOK:
			fs = append(fs, problem(storage.ProblemDangling, spaceID, r.Name, "node %s is below folder %s, which does not exist", r.ID, r.ParentID))
		case isTrashRoot(r.ParentID) && t.trash().Get(trashItemKey(spaceID, r.Name)) == nil && !t.isHidden(spaceID, r.Name):
			fs = append(fs, problem(storage.ProblemDangling, spaceID, trashPath+"/"+r.Name, "node %s is in the trash without a trash item", r.ID))
		}
		return fs, nil
	}, nil)
}

// checkIndexEntry checks that the index entry of r, kept under key,
// points at it. A missing one is put back: the record says where it is.
// Which of two records claiming one id is right is a guess.
func (c *checkRun) checkIndexEntry(t *txn, r rec, key []byte) *finding {
	idx := t.nodes().Get([]byte(r.ID))
	if bytes.Equal(idx, key) {
		return nil
	}
	spaceID, path := ownSpace(r.SpaceID), t.pathOf(r)
	if idx != nil {
		f := problem(storage.ProblemDangling, spaceID, path, "the index entry of node %s points at %q, not at its record", r.ID, idx)
		return &f
	}
	id, key := r.ID, bytes.Clone(key)
	f := problem(storage.ProblemDangling, spaceID, path, "node %s has no index entry", id).withRepair(func() (bool, error) {
		return c.update(func(t *txn) (bool, error) {
			if t.nodes().Get([]byte(id)) != nil || t.children().Get(key) == nil {
				return false, nil
			}
			return true, t.nodes().Put([]byte(id), key)
		})
	})
	return &f
}

// homeSpace returns the space node n belongs to, live or in its trash:
// the one its ancestry leads to or, for a node whose parent chain breaks
// (which checkRecords reports), the one the name index files it under,
// so that its versions and content are not taken for another space's;
// "" when it cannot tell.
func (t *txn) homeSpace(n rec) string {
	if n.SpaceID != "" {
		return ownSpace(n.SpaceID)
	}
	space, err := t.indexedSpace(&n)
	if err != nil {
		return ""
	}
	return space
}

// parentExists reports whether id is a folder or the trash root of an
// existing space.
func (t *txn) parentExists(id string) bool {
	if isTrashRoot(id) {
		return strings.HasSuffix(id, trashSuffix) && t.spaceExists(ownSpace(id))
	}
	p, ok, err := t.node(id)
	return err == nil && ok && p.IsFolder()
}

// checkBlobRefs checks that every reference of a content file names a
// node or a version that has that content file. A reference of nothing
// keeps the sweep from removing an orphan: it goes, with its file.
func (c *checkRun) checkBlobRefs() error {
	return c.scan(bucketBlobs, func(t *txn, k, v []byte) ([]finding, error) {
		blob, id := string(k), string(v)
		if c.blobReferenced(t, blob, id) {
			return nil, nil
		}
		return []finding{problem(storage.ProblemDangling, "", "", "content file %s is referenced for node %s, which does not have it", blob, id).
			withRepair(func() (bool, error) {
				return c.update(func(t *txn) (bool, error) {
					if !bytes.Equal(t.blobs().Get([]byte(blob)), []byte(id)) || c.blobReferenced(t, blob, id) {
						return false, nil
					}
					t.discardContent(blob)
					return true, t.blobs().Delete([]byte(blob))
				})
			})}, nil
	}, nil)
}

// blobReferenced reports whether node id or one of its versions has
// content file blob. The versions of a node that is gone are looked for
// in every space.
func (c *checkRun) blobReferenced(t *txn, blob, id string) bool {
	n, ok, err := t.node(id)
	if err != nil {
		return true // unreadable: not for a check of references to judge
	}
	spaces := c.spaces
	if ok {
		if n.Blob == blob {
			return true
		}
		if home := t.homeSpace(n); home != "" {
			spaces = []string{home}
		}
	}
	for _, sp := range spaces {
		prefix := versionPrefix(sp, id)
		cur := t.versions().Cursor()
		for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
			if r, err := decodeVersion(string(k[len(prefix):]), v); err == nil && r.File.Blob == blob {
				return true
			}
		}
	}
	return false
}

// checkProps checks that every dead property belongs to a node; those of
// a node that is gone are removed, once per node.
func (c *checkRun) checkProps() error {
	var lastNode string
	return c.scan(bucketProps, func(t *txn, k, v []byte) ([]finding, error) {
		id, _, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return []finding{problem(storage.ProblemDangling, "", "", "unreadable property key %q", k)}, nil
		}
		if string(id) == lastNode {
			return nil, nil
		}
		nodeID := string(id)
		lastNode = nodeID
		if _, found, err := t.node(nodeID); err != nil || found {
			return nil, err
		}
		return []finding{problem(storage.ProblemDangling, "", "", "dead properties of node %s, which does not exist", nodeID).
			withRepair(func() (bool, error) {
				return c.update(func(t *txn) (bool, error) {
					if _, found, err := t.node(nodeID); err != nil || found {
						return false, err
					}
					// Counted in no space: the usage step recounts.
					return true, deletePrefix(t.props(), propPrefix(nodeID))
				})
			})}, nil
	}, nil)
}

// checkLocks checks that every lock is readable, on a node of its space,
// and known by its token.
func (c *checkRun) checkLocks() error {
	return c.scan(bucketLocks, func(t *txn, k, v []byte) ([]finding, error) {
		spaceID, token, _ := strings.Cut(string(k), "/")
		drop := func(why func(t *txn) bool) func() (bool, error) {
			return func() (bool, error) {
				return c.update(func(t *txn) (bool, error) {
					if t.locks().Get(lockKey(spaceID, token)) == nil || !why(t) {
						return false, nil
					}
					return true, t.deleteLock(spaceID, token)
				})
			}
		}
		l, err := decodeLock(spaceID, token, v)
		if err != nil {
			return []finding{problem(storage.ProblemDangling, spaceID, "", "unreadable lock %q", token).
				withRepair(drop(func(*txn) bool { return true }))}, nil
		}
		nodeGone := func(t *txn) bool { _, err := t.nodeIn(spaceID, l.NodeID); return err != nil }
		if nodeGone(t) {
			return []finding{problem(storage.ProblemDangling, spaceID, l.Root, "lock %q is on node %s, which is not in the space", token, l.NodeID).
				withRepair(drop(nodeGone))}, nil
		}
		if string(t.lockTokens().Get([]byte(token))) != spaceID {
			n, _, _ := t.node(l.NodeID)
			return []finding{problem(storage.ProblemDangling, spaceID, t.pathOf(n), "lock %q is missing from the token index", token).
				withRepair(func() (bool, error) {
					return c.update(func(t *txn) (bool, error) {
						if t.lockTokens().Get([]byte(token)) != nil || t.locks().Get(lockKey(spaceID, token)) == nil {
							return false, nil
						}
						return true, t.lockTokens().Put([]byte(token), []byte(spaceID))
					})
				})}, nil
		}
		return nil, nil
	}, nil)
}

// checkLockTokens checks that every token of the index has its lock.
func (c *checkRun) checkLockTokens() error {
	return c.scan(bucketLockTokens, func(t *txn, k, v []byte) ([]finding, error) {
		token, spaceID := string(k), string(v)
		gone := func(t *txn) bool {
			return string(t.lockTokens().Get([]byte(token))) == spaceID && t.locks().Get(lockKey(spaceID, token)) == nil
		}
		if !gone(t) {
			return nil, nil
		}
		return []finding{problem(storage.ProblemDangling, spaceID, "", "lock token %q has no lock", token).
			withRepair(func() (bool, error) {
				return c.update(func(t *txn) (bool, error) {
					if !gone(t) {
						return false, nil
					}
					return true, t.lockTokens().Delete([]byte(token))
				})
			})}, nil
	}, nil)
}

// checkTrashItems checks that every trash item has its node, at the top
// of the space's trash under the item's key.
func (c *checkRun) checkTrashItems() error { return c.checkItemsIn(bucketTrash, false) }

// checkHiddenItems checks the trash items hidden for a purge as
// checkTrashItems does those of the trash: a hidden item without its
// node would stop its purge.
func (c *checkRun) checkHiddenItems() error { return c.checkItemsIn(bucketPurging, true) }

// checkItemsIn checks the trash items of bucket, hidden ones or not.
func (c *checkRun) checkItemsIn(bucket []byte, hidden bool) error {
	return c.scan(bucket, func(t *txn, k, v []byte) ([]finding, error) {
		sp, key, ok := bytes.Cut(k, []byte{0})
		spaceID, itemKey := string(sp), string(key)
		if !ok {
			return []finding{problem(storage.ProblemDangling, "", "", "unreadable trash key %q", k)}, nil
		}
		path := trashPath + "/" + itemKey
		item, err := decodeTrash(itemKey, v)
		if err != nil {
			return []finding{problem(storage.ProblemDangling, spaceID, path, "%v", err)}, nil
		}
		n, found, err := t.node(item.NodeID)
		if err != nil {
			return nil, err
		}
		if found && n.ParentID == trashSpaceID(spaceID) && n.Name == itemKey {
			return nil, nil
		}
		f := problem(storage.ProblemDangling, spaceID, path, "trash item %s (%s) points at node %s, which is not there", itemKey, item.Location, item.NodeID)
		if found {
			// The node lives elsewhere: which of the two is right is a guess.
			return []finding{f}, nil
		}
		return []finding{f.withRepair(func() (bool, error) {
			return c.update(func(t *txn) (bool, error) {
				item, err := t.itemToPurge(trashPurge{spaceID: spaceID, key: itemKey, hidden: hidden})
				if err != nil {
					return false, nil
				}
				if _, found, err := t.node(item.NodeID); err != nil || found {
					return false, err
				}
				return true, t.deleteTrashItem(spaceID, item)
			})
		})}, nil
	}, nil)
}

// checkTrashPlaces checks that every entry of the trash places index
// names a trash item deleted from that place.
func (c *checkRun) checkTrashPlaces() error {
	return c.scan(bucketTrashPlaces, func(t *txn, k, v []byte) ([]finding, error) {
		place, key, ok := bytes.Cut(k, []byte{0})
		spaceID, itemKey := string(v), string(key)
		if ok {
			if item, err := t.trashItem(spaceID, itemKey); err == nil && bytes.Equal(childKey(item.ParentID, item.Name), place) {
				return nil, nil
			}
		}
		entry := bytes.Clone(k)
		stale := func(t *txn) bool {
			if t.trashPlaces().Get(entry) == nil {
				return false
			}
			item, err := t.trashItem(spaceID, itemKey)
			return err != nil || !bytes.Equal(childKey(item.ParentID, item.Name), place)
		}
		return []finding{problem(storage.ProblemDangling, spaceID, trashPath+"/"+itemKey, "trash place entry %q names no trash item deleted from there", k).
			withRepair(func() (bool, error) {
				return c.update(func(t *txn) (bool, error) {
					if !stale(t) {
						return false, nil
					}
					return true, t.trashPlaces().Delete(entry)
				})
			})}, nil
	}, nil)
}

// deletePrefix deletes the keys of b that start with prefix.
func deletePrefix(b countedBucket, prefix []byte) error {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
