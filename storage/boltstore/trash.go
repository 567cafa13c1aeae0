package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// A deleted node keeps its record, its id, its properties and its content;
// only where its record is changes. The top node of a trash item moves
// below the trash root of its space, under the item's key as its name;
// the records below it stay as they are, and their ancestry now leads to
// the trash root (layout.go), so that no lookup of the live space (nodeIn,
// Child) finds any of them. Deleting a folder and restoring it write the
// same few records whatever the folder holds. The trash root's id is the
// space id with a NUL, which no real id contains (storage.ValidID), so it
// never equals a space or node id, and its child keys never fall in the
// key range of a live folder; it is also the space id the nodes in the
// trash are looked up with.
//
// The item itself, where the node was deleted from, is a record in the
// trash bucket under space id \0 key; the trash_places bucket indexes the
// items by the place they were deleted from (parent id / name \0 key), so
// that a file created there again finds its history (Reviving) with one
// seek.

const trashSuffix = "\x00trash"

// trashSpaceID returns the space id of the nodes in the trash of space
// spaceID, which is also the id of the parent of its items' nodes.
func trashSpaceID(spaceID string) string { return spaceID + trashSuffix }

// isTrashRoot reports whether id is the trash root of a space: no real id
// holds a NUL.
func isTrashRoot(id string) bool { return strings.IndexByte(id, 0) >= 0 }

func trashItemKey(spaceID, key string) []byte {
	return append(append([]byte(spaceID), 0), key...)
}

func trashPlacePrefix(parentID, name string) []byte {
	return append(childKey(parentID, name), 0)
}

// trashItem returns item key of the trash of space spaceID.
func (t *txn) trashItem(spaceID, key string) (trashRec, error) {
	v := t.trash().Get(trashItemKey(spaceID, key))
	if v == nil {
		return trashRec{}, storage.TrashItemNotFound(key)
	}
	return decodeTrash(key, v)
}

func (t *txn) putTrashItem(spaceID string, item *trashRec) error {
	if err := t.trash().Put(trashItemKey(spaceID, item.Key), encodeTrash(item)); err != nil {
		return err
	}
	place := append(trashPlacePrefix(item.ParentID, item.Name), item.Key...)
	return t.trashPlaces().Put(place, []byte(spaceID))
}

// deleteTrashItem deletes the record of item, of the trash or hidden.
func (t *txn) deleteTrashItem(spaceID string, item trashRec) error {
	if item.hidden {
		return t.purging().Delete(trashItemKey(spaceID, item.Key))
	}
	if err := t.trash().Delete(trashItemKey(spaceID, item.Key)); err != nil {
		return err
	}
	return t.trashPlaces().Delete(append(trashPlacePrefix(item.ParentID, item.Name), item.Key...))
}

// trashItems returns the items of the trash of space spaceID, in key order.
func (t *txn) trashItems(spaceID string) ([]trashRec, error) {
	return decodeUnder(t.trash(), trashItemKey(spaceID, ""), decodeTrash)
}

// itemNode returns the record of the top node of item.
func (t *txn) itemNode(item trashRec) (rec, error) {
	r, ok, err := t.node(item.NodeID)
	if err != nil {
		return rec{}, err
	}
	if !ok {
		return rec{}, fmt.Errorf("node %s of trash item %s missing: %w", item.NodeID, item.Key, errCorrupt)
	}
	return r, nil
}

// public returns the item as the contract shows it, top its node's record.
func (item trashRec) public(spaceID string, top rec) storage.TrashItem {
	return storage.TrashItem{
		Key:      item.Key,
		Node:     item.present(spaceID, top),
		Location: item.Location,
		Deleted:  item.Deleted,
	}
}

// present returns r, a node of item, as the contract shows it: in its
// space, and the item's own node where it was deleted from.
func (item trashRec) present(spaceID string, r rec) storage.Node {
	n := r.Node
	n.SpaceID = spaceID
	if r.ID == item.NodeID {
		n.ParentID, n.Name = item.ParentID, item.Name
	}
	return n
}

// discard takes n, a live node of space spaceID other than its root, with
// everything below it out of the live tree: into the space's trash when
// its retention keeps one, else destroyed, in parts once t commits, the
// tree a trash item until then. The caller propagates -n.Size
// from n's parent. The shares of the subtree go with it: restoring it
// from the trash revives none.
func (t *txn) discard(spaceID string, n rec) error {
	if err := t.deleteSharesBelow(spaceID, n); err != nil {
		return err
	}
	if err := t.moveToTrash(spaceID, n); err != nil {
		return err
	}
	if !t.retentionOf(spaceID).KeepsTrash() {
		// Destroyed in parts once t commits: t writes as little as a
		// move to the trash, whatever the tree holds.
		t.purges = append(t.purges, trashPurge{spaceID: spaceID, key: storage.TrashKey(t.now, n.ID)})
	}
	return nil
}

// trashPurge is a trash item a committed transaction left to purge;
// hidden, one an eviction or the expiry took out of the trash
// (purging.go).
type trashPurge struct {
	spaceID, key string
	hidden       bool
}

// purgeAll purges the trash items a committed transaction left, each in
// parts (purgeInParts). The change is done whatever happens to them: an
// item left, by a failure or a stop, is the expiry's next pass's, as the
// space keeps no trash or the item is hidden (finishHidden).
func (s *Store) purgeAll(purges []trashPurge) {
	for _, p := range purges {
		err := s.purgeInParts(context.Background(), p, purgeNodesPerTxn)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			s.log.Warn("purging in parts: the expiry finishes it", zap.String("space", p.spaceID),
				zap.String("item", p.key), zap.Bool("hidden", p.hidden), zap.Error(err))
		}
	}
}

// moveToTrash makes n and its subtree a new item of the trash of space
// spaceID. Locks on them are dropped, as a remove drops them.
func (t *txn) moveToTrash(spaceID string, n rec) error {
	location, err := t.location(n)
	if err != nil {
		return err
	}
	if err := t.dropLocksBelow(n); err != nil {
		return err
	}
	item := trashRec{
		Key:      storage.TrashKey(t.now, n.ID),
		NodeID:   n.ID,
		ParentID: n.ParentID,
		Name:     n.Name,
		Location: location,
		Deleted:  t.now,
	}
	if err := t.removeNode(&n); err != nil {
		return err
	}
	n.SpaceID = trashSpaceID(spaceID)
	n.ParentID, n.Name = n.SpaceID, item.Key
	if err := t.placeNode(&n); err != nil {
		return err
	}
	t.forgetSpaces() // n's subtree went to the trash with it
	if err := t.putTrashItem(spaceID, &item); err != nil {
		return err
	}
	return t.addUndo(spaceID, n.Size, 0)
}

// location returns the path of the live node n from its space's root.
func (t *txn) location(n rec) (string, error) {
	var names []string
	for r := n; r.ParentID != ""; {
		names = append(names, r.Name)
		p, ok, err := t.node(r.ParentID)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", fmt.Errorf("ancestor %s missing: %w", r.ParentID, errCorrupt)
		}
		r = p
	}
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	return storage.TrashLocation(names), nil
}

// trashedNode returns node nodeID of item, the item's own node or one
// below it ("" is the item's own node).
func (t *txn) trashedNode(spaceID string, item trashRec, nodeID string) (rec, error) {
	if nodeID == "" {
		nodeID = item.NodeID
	}
	r, ok, err := t.node(nodeID)
	if err != nil {
		return rec{}, err
	}
	if !ok || r.SpaceID != trashSpaceID(spaceID) {
		return rec{}, storage.NodeNotFound(spaceID, nodeID)
	}
	for up := r; up.ID != item.NodeID; {
		if isTrashRoot(up.ParentID) {
			return rec{}, storage.NodeNotFound(spaceID, nodeID)
		}
		var ok bool
		if up, ok, err = t.node(up.ParentID); err != nil {
			return rec{}, err
		} else if !ok {
			return rec{}, fmt.Errorf("ancestor of %s missing: %w", nodeID, errCorrupt)
		}
	}
	return r, nil
}

// restoreFromTrash puts n, a node of item, back into the live tree of
// space spaceID as child name of folder parentID, which the caller has
// checked: it keeps its id, its subtree, their properties and versions,
// and gets a new etag. The item goes when its own node is restored, and
// is that much smaller otherwise.
func (t *txn) restoreFromTrash(spaceID string, item trashRec, n rec, parentID, name string) (rec, error) {
	if err := t.removeNode(&n); err != nil {
		return rec{}, err
	}
	live := n
	live.SpaceID, live.ParentID, live.Name, live.ETag = spaceID, parentID, name, t.etag(n.ID)
	if err := t.placeNode(&live); err != nil {
		return rec{}, err
	}
	t.forgetSpaces() // n's subtree came back with it
	if n.ID == item.NodeID {
		if err := t.deleteTrashItem(spaceID, item); err != nil {
			return rec{}, err
		}
	} else if err := t.propagate(n.ParentID, -n.Size); err != nil {
		return rec{}, err
	}
	if err := t.addUndo(spaceID, -n.Size, 0); err != nil {
		return rec{}, err
	}
	return live, t.propagate(parentID, n.Size)
}

// purgeNodesPerTxn is how many nodes a transaction of a purge destroys
// at most: a transaction holds what it changes in memory until it
// commits, and emptying a trash item of 100,000 files in one took some
// 160 MB of heap. The trash item left between two is whole, only smaller.
const purgeNodesPerTxn = 4096

// purgeTrashItemPart destroys up to limit nodes (0: all) of item of the
// trash of space spaceID, with their versions, and the item itself once
// nothing is left of it; it returns whether the item is gone. A hidden
// item's bytes left the trash counter when it was hidden.
func (t *txn) purgeTrashItemPart(spaceID string, item trashRec, limit int) (bool, error) {
	top, err := t.itemNode(item)
	if err != nil {
		return false, err
	}
	gone, freed, err := t.destroyTreePart(spaceID, top, limit)
	if err != nil {
		return false, err
	}
	if gone {
		if err := t.deleteTrashItem(spaceID, item); err != nil {
			return false, err
		}
	}
	if item.hidden {
		return gone, nil
	}
	return gone, t.addUndo(spaceID, -freed, 0)
}

// purgeDirtyPerTxn is how many of bbolt's nodes a transaction of a purge
// changes at most, as far as the pace of its parts keeps it (purgePace):
// each changed node is a page the commit writes from a buffer of its own,
// so they bound the memory of the commit, where the number of records
// destroyed does not: the records of a node are in buckets ordered by id
// or checksum, so that once the database is big, each node destroyed
// changes pages of its own in several of them. They bound the file pages
// the commit maps too: it rereads every page it changes through the
// mapping, each fault mapping the page's neighbours (fault-around, 64 kB)
// faster than any trim follows, so that a part's 512 pages map 32 MB at
// most, where 2,048 could map 128 MB.
const purgeDirtyPerTxn = 512

// purgeFirstPart is how many nodes the first part of a purge destroys,
// before the pace knows how many pages a node changes: few enough for
// the most a node changes (its record, its entry in the children and in
// the names index, its content or inline record).
const purgeFirstPart = purgeDirtyPerTxn / 4

// purgePace sizes the parts of a purge so that each changes about
// purgeDirtyPerTxn of bbolt's nodes: it takes the next part's nodes from
// the nodes the last part destroyed and the pages it changed. The zero
// purgePace is at the start.
type purgePace struct {
	limit int // nodes of the next part
}

// next returns how many nodes the next part is to destroy, at most most.
func (p *purgePace) next(most int) int {
	if p.limit == 0 {
		p.limit = purgeFirstPart
	}
	return min(p.limit, most)
}

// done records a part that destroyed destroyed nodes and changed dirty of
// bbolt's nodes, and sets the next part's from them.
func (p *purgePace) done(destroyed int, dirty int64) {
	if destroyed <= 0 {
		return
	}
	if dirty <= 0 {
		dirty = 1
	}
	p.limit = max(1, int(int64(destroyed)*purgeDirtyPerTxn/dirty))
}

// dirtyNodes returns how many of bbolt's nodes the write txn t changed so
// far.
func (t *txn) dirtyNodes() int64 {
	st := t.tx.Stats()
	return st.GetNodeCount()
}

// purgeInParts destroys trash item p with everything in it, versions
// included, at most limit nodes per transaction, fewer where they change
// many pages (purgePace). An item restored or purged meanwhile ends it;
// one that is not there at the start is ErrNotFound.
func (s *Store) purgeInParts(ctx context.Context, p trashPurge, limit int) error {
	var pace purgePace
	for part := 0; ; part++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		gone := false
		nodes := pace.next(limit)
		var dirty int64
		// The watcher covers the commit too, where bbolt rereads
		// every page the part changed and merges.
		stop := s.watchMapping()
		err := s.update(func(t *txn) error {
			item, err := t.itemToPurge(p)
			if errors.Is(err, storage.ErrNotFound) && part > 0 {
				gone = true // restored or purged meanwhile
				return nil
			}
			if err != nil {
				return err
			}
			gone, err = t.purgeTrashItemPart(p.spaceID, item, nodes)
			dirty = t.dirtyNodes()
			return err
		})
		stop()
		releaseAfterPart()
		if err != nil || gone {
			return err
		}
		pace.done(nodes, dirty)
	}
}

// revive restores the file that was deleted as name from folder parentID
// of space spaceID, when the trash still keeps one (storage.Reviving), so
// that a file created there again takes its id and history. ok is false
// when there is none.
func (t *txn) revive(spaceID, parentID, name string) (rec, bool, error) {
	retention := t.retentionOf(spaceID)
	var candidates []storage.TrashItem
	prefix := trashPlacePrefix(parentID, name)
	c := t.trashPlaces().Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if string(v) != spaceID {
			continue
		}
		item, err := t.trashItem(spaceID, string(k[len(prefix):]))
		if err != nil {
			return rec{}, false, err
		}
		if retention.TrashExpired(item.Deleted, t.now) {
			continue // the sweep has not come by yet
		}
		top, err := t.itemNode(item)
		if err != nil {
			return rec{}, false, err
		}
		candidates = append(candidates, item.public(spaceID, top))
	}
	found, ok := storage.Reviving(candidates, parentID, name)
	if !ok {
		return rec{}, false, nil
	}
	item, err := t.trashItem(spaceID, found.Key)
	if err != nil {
		return rec{}, false, err
	}
	top, err := t.itemNode(item)
	if err != nil {
		return rec{}, false, err
	}
	r, err := t.restoreFromTrash(spaceID, item, top, parentID, name)
	return r, err == nil, err
}

// TrashItems returns up to limit items of the trash of a space, newest
// first, after the item keyed after. The page is read backwards from the
// cursor's deletion time: keys begin with that time in 19 digits (so
// from 2001 to 2286), and their bytes order them by it.
func (s *Store) TrashItems(ctx context.Context, spaceID, after string, limit int) ([]storage.TrashItem, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cur, err := storage.ValidTrashPage(after, limit)
	if err != nil {
		return nil, err
	}
	var out []storage.TrashItem
	// A walk: each item's node is a lookup at random in the nodes, which
	// maps its page and the neighbours (trim_walk.go).
	err = s.viewWalk(func(t *txn) error {
		if _, err := t.space(spaceID); err != nil {
			return err
		}
		prefix := trashItemKey(spaceID, "")
		c := t.trash().Cursor()
		end := append([]byte(spaceID), 1) // past every key of the space
		if cur.Key != "" {
			// '/' sorts after the '.' of every key deleted at cur.Deleted.
			end = append(trashItemKey(spaceID, strconv.FormatInt(cur.Deleted, 10)), '/')
		}
		k, v := c.Seek(end)
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
			item, err := decodeTrash(string(k[len(prefix):]), v)
			if err != nil {
				return err
			}
			deleted := item.Deleted.UnixNano()
			if len(out) >= limit && deleted < out[len(out)-1].Deleted.UnixNano() {
				break // the items deleted with the page's oldest are all in
			}
			if !cur.Admits(deleted, item.Key) {
				continue
			}
			top, err := t.itemNode(item)
			if err != nil {
				return err
			}
			t.countScan(len(k) + len(v))
			out = append(out, item.public(spaceID, top))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trash of space %s: %w", spaceID, err)
	}
	storage.SortTrash(out)
	return out[:min(len(out), limit)], nil
}

// TrashNode returns trash item key and the node names lead to below it.
func (s *Store) TrashNode(ctx context.Context, spaceID, key string, names []string) (storage.TrashItem, storage.Node, error) {
	if err := ctx.Err(); err != nil {
		return storage.TrashItem{}, storage.Node{}, err
	}
	if err := storage.ValidTrashKey(key); err != nil {
		return storage.TrashItem{}, storage.Node{}, err
	}
	var (
		out  storage.TrashItem
		node storage.Node
	)
	err := s.view(func(t *txn) error {
		item, err := t.trashItem(spaceID, key)
		if err != nil {
			return err
		}
		r, err := t.itemNode(item)
		if err != nil {
			return err
		}
		out = item.public(spaceID, r)
		for _, name := range names {
			if err := storage.ValidName(name, nil); err != nil {
				return fmt.Errorf("%w: %w", storage.ErrNotFound, err)
			}
			child, ok, err := t.child(r.ID, name)
			if err != nil {
				return err
			}
			if !r.IsFolder() || !ok {
				return storage.ChildNotFound(r.ID, name)
			}
			r = child
		}
		node = item.present(spaceID, r)
		return nil
	})
	if err != nil {
		return storage.TrashItem{}, storage.Node{}, fmt.Errorf("trash item %s: %w", key, err)
	}
	return out, node, nil
}

// ReadTrashDir returns up to limit children of folder folderID of trash
// item key, in name order, after the name after.
func (s *Store) ReadTrashDir(ctx context.Context, spaceID, key, folderID, after string, limit int) ([]storage.Node, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := storage.ValidTrashKey(key); err != nil {
		return nil, err
	}
	out := make([]storage.Node, 0, pageCapacity(limit))
	err := s.view(func(t *txn) error {
		item, err := t.trashItem(spaceID, key)
		if err != nil {
			return err
		}
		f, err := t.trashedNode(spaceID, item, folderID)
		if err != nil {
			return err
		}
		if !f.IsFolder() {
			return storage.NotAFolder(folderID)
		}
		return t.scanChildren(f.ID, after, limit, func(r rec) error {
			out = append(out, item.present(spaceID, r))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("trash item %s: %w", key, err)
	}
	return out, nil
}

// RestoreTrash moves node t.NodeID of trash item key back into the space.
// Its target follows the rules of Move's: an existing node is replaced
// only with Overwrite, and goes to the trash then; If-None-Match refuses
// an existing target; the locks checked are those of the target (the
// replaced node and everything below it, else the target's folder).
func (s *Store) RestoreTrash(ctx context.Context, spaceID, key string, tr storage.Transfer) (storage.Node, bool, error) {
	if err := ctx.Err(); err != nil {
		return storage.Node{}, false, err
	}
	if err := storage.ValidTrashKey(key); err != nil {
		return storage.Node{}, false, err
	}
	if err := storage.ValidName(tr.NewName, nil); err != nil {
		return storage.Node{}, false, fmt.Errorf("restore %s: %w", key, err)
	}
	var (
		out      rec
		replaced bool
	)
	err := s.update(func(t *txn) error {
		item, err := t.trashItem(spaceID, key)
		if err != nil {
			return err
		}
		n, err := t.trashedNode(spaceID, item, tr.NodeID)
		if err != nil {
			return err
		}
		dst, err := t.folderIn(spaceID, tr.NewParentID, storage.ErrConflict)
		if err != nil {
			return err
		}
		target, exists, err := t.child(dst.ID, tr.NewName)
		if err != nil {
			return err
		}
		if err := checkRestoreTarget(tr, exists); err != nil {
			return err
		}
		locked := lockedNode{id: dst.ID}
		if exists {
			locked = lockedNode{id: target.ID, below: target.IsFolder()}
		}
		if err := t.checkHeld(spaceID, tr.Locks, locked); err != nil {
			return err
		}
		if exists {
			if err := t.discard(spaceID, target); err != nil {
				return err
			}
			if err := t.propagate(dst.ID, -target.Size); err != nil {
				return err
			}
		}
		out, err = t.restoreFromTrash(spaceID, item, n, dst.ID, tr.NewName)
		replaced = exists
		return err
	})
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("restore %s to %q: %w", key, tr.NewName, err)
	}
	return out.Node, replaced, nil
}

// checkRestoreTarget applies tr to the target of a restore, which exists
// or not: If-None-Match and the lack of Overwrite refuse an existing one.
func checkRestoreTarget(tr storage.Transfer, exists bool) error {
	switch {
	case !exists:
		return nil
	case tr.IfNoneMatch:
		return storage.ErrTargetExists
	case !tr.Overwrite:
		return storage.TargetExists(tr.NewName)
	}
	return nil
}

// PurgeTrash destroys trash item key with its versions: one transaction
// hides it (hideTrashItem), which decides it against a restore racing
// it, and the parts destroy it after (purgeInParts). An item a stop
// leaves hidden is the next expiry pass's (finishHidden).
func (s *Store) PurgeTrash(ctx context.Context, spaceID, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := storage.ValidTrashKey(key); err != nil {
		return err
	}
	if err := s.purgeTrashItem(ctx, spaceID, key); err != nil {
		return fmt.Errorf("purge %s: %w", key, err)
	}
	return nil
}

// purgeTrashItem hides trash item key of space spaceID, then purges it in
// parts.
func (s *Store) purgeTrashItem(ctx context.Context, spaceID, key string) error {
	var p trashPurge
	err := s.update(func(t *txn) error {
		item, err := t.trashItem(spaceID, key)
		if err != nil {
			return err
		}
		p, err = t.hideTrashItem(spaceID, item)
		return err
	})
	if err != nil {
		return err
	}
	err = s.purgeInParts(ctx, p, purgeNodesPerTxn)
	if errors.Is(err, storage.ErrNotFound) {
		return nil // an expiry pass finished it (finishHidden)
	}
	return err
}

// EmptyTrash purges every item in the trash of a space as it starts: it
// hides them all first, a batch a transaction (hideTrashUpTo), so that a
// restore racing the emptying brings an item back whole or finds
// nothing, and the trash is empty to every reader after a few short
// transactions; then it purges the hidden items in parts, each in
// transactions of its own, so that a large trash does not hold up
// writers for long. Items a stop leaves hidden are the next expiry
// pass's (finishHidden).
func (s *Store) EmptyTrash(ctx context.Context, spaceID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.emptyTrash(ctx, spaceID); err != nil {
		return fmt.Errorf("empty trash of space %s: %w", spaceID, err)
	}
	return nil
}

func (s *Store) emptyTrash(ctx context.Context, spaceID string) error {
	var last string
	err := s.view(func(t *txn) (err error) {
		if _, err := t.space(spaceID); err != nil {
			return err
		}
		last, err = t.lastTrashKey(spaceID)
		return err
	})
	if err != nil || last == "" {
		return err
	}
	if err := s.hideTrashUpTo(ctx, spaceID, last); err != nil {
		return err
	}
	return s.purgeHiddenUpTo(ctx, spaceID, last)
}
