package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/davspaces/davspaces/storage"
	"github.com/google/uuid"
)

// Mkdir creates an empty folder.
func (s *Store) Mkdir(ctx context.Context, spaceID, parentID, name string) (storage.Node, error) {
	if err := ctx.Err(); err != nil {
		return storage.Node{}, err
	}
	if err := storage.ValidName(name, nil); err != nil {
		return storage.Node{}, fmt.Errorf("mkdir: %w", err)
	}
	var n rec
	err := s.update(func(t *txn) error {
		p, err := t.folderIn(spaceID, parentID, storage.ErrConflict)
		if err != nil {
			return err
		}
		if _, exists, err := t.child(p.ID, name); err != nil {
			return err
		} else if exists {
			return storage.ErrExists
		}
		if err := t.addNodes(spaceID, 1); err != nil {
			return err
		}
		id := uuid.NewString()
		n = rec{Node: storage.Node{
			ID:       id,
			SpaceID:  spaceID,
			ParentID: p.ID,
			Name:     name,
			Kind:     storage.KindFolder,
			ModTime:  t.now,
			ETag:     t.etag(id),
		}}
		if err := t.placeNode(&n); err != nil {
			return err
		}
		return t.propagate(p.ID, 0)
	})
	if err != nil {
		return storage.Node{}, fmt.Errorf("mkdir %q: %w", name, err)
	}
	return n.Node, nil
}

// Remove deletes a node and everything below it: into the space's trash,
// unless its retention keeps none (discard). The space root cannot be
// removed.
func (s *Store) Remove(ctx context.Context, spaceID, nodeID string, c storage.Conditions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.update(func(t *txn) error {
		n, err := t.nodeIn(spaceID, nodeID)
		if err != nil {
			return err
		}
		if n.ParentID == "" {
			return storage.ErrRootRemove
		}
		err = t.checkHeld(spaceID, c.Locks, lockedNode{id: n.ID, below: n.IsFolder()}, lockedNode{id: n.ParentID})
		if err != nil {
			return err
		}
		if err := c.Check(n.ETag); err != nil {
			return err
		}
		if err := t.discard(spaceID, n); err != nil {
			return err
		}
		return t.propagate(n.ParentID, -n.Size)
	})
	if err != nil {
		return fmt.Errorf("remove %s: %w", nodeID, err)
	}
	return nil
}

// destroyTreePart deletes r, a node of space spaceID or of its trash, its
// entry in its parent and everything below it, with their properties,
// locks and versions, but stops once it has destroyed limit nodes (0: no
// limit), for a tree that need not go in one transaction: it returns
// whether r is gone and how many bytes it destroyed. When it stops
// before, it takes what it destroyed off the sizes of the folders from
// the last one it was in up to r, so that the tree left is whole and its
// sizes add up: the same call in the next transaction goes on. Their
// content files are removed once the transaction has committed.
//
// It goes depth first, one child at a time, so that what it holds is
// bounded by the depth of the tree, not by the size of a folder. Each
// folder's children go in name order and each seek starts after the last
// one removed: from the folder's start, it would walk past the emptied
// pages, which bbolt keeps until the commit.
func (t *txn) destroyTreePart(spaceID string, r rec, limit int) (gone bool, destroyed int64, err error) {
	if err := t.dropLocksBelow(r); err != nil {
		return false, 0, err
	}
	stack := []destroyLevel{{node: r}}
	nodes := 0
	for len(stack) > 0 {
		if limit > 0 && nodes >= limit {
			freed, err := t.shrinkLevels(stack)
			return false, freed, err
		}
		l := &stack[len(stack)-1]
		var child rec
		ok := false
		if l.node.IsFolder() {
			var err error
			if child, ok, err = t.childAfter(l.node.ID, l.after); err != nil {
				return false, 0, err
			}
		}
		switch {
		case !ok: // l.node has no children left
			n := l.node
			stack = stack[:len(stack)-1]
			if err := t.destroyLeaf(spaceID, n); err != nil {
				return false, 0, err
			}
			if len(stack) > 0 {
				stack[len(stack)-1].freed += n.Size
			}
		case child.IsFolder():
			l.after = child.Name
			stack = append(stack, destroyLevel{node: child})
			continue
		default:
			l.after = child.Name
			if err := t.destroyLeaf(spaceID, child); err != nil {
				return false, 0, err
			}
			l.freed += child.Size
		}
		nodes++
		if nodes%purgeCheckNodes == 0 {
			t.trimWrite()
		}
	}
	return true, r.Size, nil
}

// destroyLevel is a folder destroyTreePart is in: the node being removed,
// the name of its last child removed and the bytes removed below it.
type destroyLevel struct {
	node  rec
	after string
	freed int64
}

// shrinkLevels takes what was removed below the folders of stack, from
// the innermost, off their sizes and those above, and returns the bytes
// removed below the outermost.
func (t *txn) shrinkLevels(stack []destroyLevel) (int64, error) {
	var freed int64
	for i := len(stack) - 1; i >= 0; i-- {
		freed += stack[i].freed
		if freed == 0 {
			continue
		}
		n := stack[i].node
		n.Size -= freed
		n.ETag = t.etag(n.ID)
		if err := t.putNode(&n); err != nil {
			return 0, err
		}
	}
	return freed, nil
}

// destroyLeaf deletes n, a file or an empty folder of space spaceID or of
// its trash, with its properties, its content and its versions.
func (t *txn) destroyLeaf(spaceID string, n rec) error {
	if !n.IsFolder() {
		blob, err := t.dropContent(n)
		if err != nil {
			return err
		}
		t.discardContent(blob)
		if err := t.dropVersions(spaceID, n.ID); err != nil {
			return err
		}
	}
	if err := t.deleteProps(spaceID, n.ID); err != nil {
		return err
	}
	if err := t.countNodes(spaceID, -1); err != nil {
		return err
	}
	return t.removeNode(&n)
}

// childAfter returns the child of folder id whose name comes next after
// after ("": the first), and whether there is one. It seeks afresh at each
// call, so the bucket may change between two calls.
func (t *txn) childAfter(id, after string) (rec, bool, error) {
	prefix := childKey(id, "")
	from := childKey(id, after)
	c := t.look.cursor(&t.look.children, t.children)
	k, v := c.Seek(from)
	if after != "" && bytes.Equal(k, from) {
		k, v = c.Next()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return rec{}, false, nil
	}
	t.countScan(len(k) + len(v))
	return t.decodeChild(id, v)
}

// transfer holds what Move and Copy check alike about their target.
type transfer struct {
	src      rec
	dst      rec  // the new parent
	noop     bool // onto itself
	target   rec  // the existing node at the target, if any
	replaced bool
}

// prepareTransfer resolves and checks source and target of a move or copy.
// It does not change anything.
func (t *txn) prepareTransfer(spaceID string, tr storage.Transfer) (transfer, error) {
	var x transfer
	var err error
	if x.src, err = t.nodeIn(spaceID, tr.NodeID); err != nil {
		return x, err
	}
	if err := tr.Conditions.Check(x.src.ETag); err != nil {
		return x, err
	}
	if x.dst, err = t.folderIn(spaceID, tr.NewParentID, storage.ErrCrossSpace); err != nil {
		return x, err
	}
	outcome, err := storage.CheckTransfer(tr, x.src.Node, x.dst.Node, storage.TransferLookups{
		Target: func() (storage.Node, bool, error) {
			target, exists, err := t.child(x.dst.ID, tr.NewName)
			x.target = target
			return target.Node, exists, err
		},
		IsAncestor: t.isAncestor,
	})
	x.noop, x.replaced = outcome == storage.TransferNoop, outcome == storage.TransferReplaces
	return x, err
}

// Move renames or moves a node within its space. It only rewrites the
// node's record and index entry and the ancestor chains, so its
// cost does not depend on the size of the subtree. The node keeps its id and
// modification time and gets a new etag.
func (s *Store) Move(ctx context.Context, spaceID string, tr storage.Transfer) (storage.Node, bool, error) {
	if err := ctx.Err(); err != nil {
		return storage.Node{}, false, err
	}
	if err := storage.ValidName(tr.NewName, nil); err != nil {
		return storage.Node{}, false, fmt.Errorf("move: %w", err)
	}
	var (
		out      rec
		replaced bool
	)
	err := s.update(func(t *txn) error {
		if n, err := t.nodeIn(spaceID, tr.NodeID); err != nil {
			return err
		} else if n.ParentID == "" {
			return storage.ErrRootMove
		}
		x, err := t.prepareTransfer(spaceID, tr)
		if err != nil {
			return err
		}
		n := x.src
		if x.noop {
			out = n
			return nil
		}
		if err := t.checkHeld(spaceID, tr.Locks, x.lockedNodes(true)...); err != nil {
			return err
		}
		var targetSize int64
		if x.replaced {
			if err := t.discard(spaceID, x.target); err != nil {
				return err
			}
			targetSize = x.target.Size
		}
		// A MOVE must not move a write lock with its resource (RFC 4918
		// §7.6); locks belong to nodes here, so the subtree's are dropped.
		if err := t.dropLocksBelow(n); err != nil {
			return err
		}
		if err := t.removeNode(&n); err != nil {
			return err
		}
		oldParent := n.ParentID
		n.ParentID, n.Name, n.ETag = x.dst.ID, tr.NewName, t.etag(n.ID)
		if err := t.placeNode(&n); err != nil {
			return err
		}
		if err := t.propagate(oldParent, -n.Size); err != nil {
			return err
		}
		if err := t.propagate(x.dst.ID, n.Size-targetSize); err != nil {
			return err
		}
		out, replaced = n, x.replaced
		return nil
	})
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("move %s to %q: %w", tr.NodeID, tr.NewName, err)
	}
	return out.Node, replaced, nil
}

// maxCopyAttempts bounds how often Copy prepares content files again
// because the source tree changed while it did.
const maxCopyAttempts = 3

var errSourceChanged = fmt.Errorf("the source changed while it was copied: %w", storage.ErrConflict)

// Copy duplicates a node, and unless Shallow everything below it, with new
// ids. File content is hard-linked to new content files (copied where links
// are not possible); shared dead properties are copied too. Copying a node
// onto itself changes nothing.
//
// The content files are made before the transaction, which only writes
// metadata, so a large copy does not hold up writers; cancelling ctx stops
// it between files. If the source tree changes meanwhile, the content files
// still missing are made and the transaction is tried again.
func (s *Store) Copy(ctx context.Context, spaceID string, tr storage.Transfer) (storage.Node, bool, error) {
	if err := ctx.Err(); err != nil {
		return storage.Node{}, false, err
	}
	if err := storage.ValidName(tr.NewName, nil); err != nil {
		return storage.Node{}, false, fmt.Errorf("copy: %w", err)
	}
	n, replaced, err := s.copy(ctx, spaceID, tr)
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("copy %s to %q: %w", tr.NodeID, tr.NewName, err)
	}
	return n.Node, replaced, nil
}

func (s *Store) copy(ctx context.Context, spaceID string, tr storage.Transfer) (rec, bool, error) {
	blobs := &copyBlobs{s: s, made: map[string]string{}}
	defer blobs.release()
	for attempt := 1; ; attempt++ {
		sources, err := s.copySources(spaceID, tr)
		if err != nil {
			return rec{}, false, err
		}
		if err := blobs.prepare(ctx, sources); err != nil {
			return rec{}, false, err
		}
		n, replaced, err := s.recordCopy(spaceID, tr, blobs)
		if errors.Is(err, errSourceChanged) && attempt < maxCopyAttempts {
			continue
		}
		if err != nil {
			return rec{}, false, err
		}
		return n, replaced, nil
	}
}

// copySources checks a copy in a snapshot and returns the content files of
// the files it copies, so that they can be duplicated outside the write
// transaction. A copy that will fail anyway (conflicts, quota) fails here
// before any file work.
func (s *Store) copySources(spaceID string, tr storage.Transfer) ([]string, error) {
	var sources []string
	err := s.view(func(t *txn) error {
		t.now = s.now() // lock expiry
		x, err := t.prepareTransfer(spaceID, tr)
		if err != nil || x.noop {
			return err
		}
		if err := t.checkHeld(spaceID, tr.Locks, x.lockedNodes(false)...); err != nil {
			return err
		}
		if err := t.checkRoom(spaceID, copyGrowth(x, tr.Shallow)); err != nil {
			return err
		}
		sources, err = t.subtreeBlobs(x.src, tr.Shallow)
		return err
	})
	return sources, err
}

// copyGrowth is how much the copy x grows its space's files by.
func copyGrowth(x transfer, shallow bool) int64 {
	return copySize(x, shallow) - replacedSize(x)
}

// copySize is the size a copy adds at its target.
func copySize(x transfer, shallow bool) int64 {
	if x.src.IsFolder() && shallow {
		return 0
	}
	return x.src.Size
}

// replacedSize is the size of the node a transfer replaces.
func replacedSize(x transfer) int64 {
	if x.replaced {
		return x.target.Size
	}
	return 0
}

// subtreeBlobs returns the content files of top and, unless shallow, of all
// files below it.
func (t *txn) subtreeBlobs(top rec, shallow bool) ([]string, error) {
	if !top.IsFolder() {
		if top.inlined() {
			return nil, nil
		}
		return []string{top.Blob}, nil
	}
	if shallow {
		return nil, nil
	}
	var blobs []string
	stack := []string{top.ID}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		prefix := childKey(id, "")
		c := t.children().Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			child, err := decodeNode(v)
			if err != nil {
				return nil, err
			}
			switch {
			case child.IsFolder():
				stack = append(stack, child.ID)
			case !child.inlined():
				blobs = append(blobs, child.Blob)
			}
		}
	}
	return blobs, nil
}

// recordCopy writes the metadata of a copy whose content files blobs has
// made. It fails with errSourceChanged when the source now has content
// blobs has not made. It returns the new top node and whether the target
// was replaced.
func (s *Store) recordCopy(spaceID string, tr storage.Transfer, blobs *copyBlobs) (rec, bool, error) {
	var (
		out      rec
		replaced bool
	)
	used := map[string]bool{}
	var later []digestJob
	err := s.update(func(t *txn) error {
		defer func() { later = t.laterDigests }()
		x, err := t.prepareTransfer(spaceID, tr)
		if err != nil {
			return err
		}
		if x.noop {
			out = x.src
			return nil
		}
		if err := t.checkHeld(spaceID, tr.Locks, x.lockedNodes(false)...); err != nil {
			return err
		}
		if err := t.makeRoom(spaceID, copyGrowth(x, tr.Shallow)); err != nil {
			return err
		}
		if err := t.checkQuota(spaceID, copyGrowth(x, tr.Shallow)); err != nil {
			return err
		}
		before, err := t.usage(spaceID)
		if err != nil {
			return err
		}
		if x.replaced {
			if err := t.discard(spaceID, x.target); err != nil {
				return err
			}
		}
		copied, err := t.copyTree(x.src, x.dst.ID, tr.NewName, tr.Shallow, blobs.made, used)
		if err != nil {
			return err
		}
		out = copied.top
		// What the target held went to the trash or was destroyed and
		// counted out already.
		if err := t.addNodes(spaceID, copied.nodes); err != nil {
			return err
		}
		replaced = x.replaced
		if err := t.propagate(x.dst.ID, copySize(x, tr.Shallow)-replacedSize(x)); err != nil {
			return err
		}
		return t.checkGrowthWithinQuota(spaceID, before)
	})
	if err != nil {
		return rec{}, false, err
	}
	blobs.used = used
	for _, job := range later {
		job.spaceID = spaceID
		s.queueJob(job)
	}
	return out, replaced, nil
}

// copyBlobs are the content files made for a copy before its transaction.
// They are pending until release, which removes those the committed copy
// does not reference.
type copyBlobs struct {
	s    *Store
	made map[string]string // source content file → its duplicate
	used map[string]bool   // duplicates the committed copy references
}

// prepare duplicates the sources not duplicated yet, checking ctx before
// each, and makes the new names durable.
func (b *copyBlobs) prepare(ctx context.Context, sources []string) error {
	dirs := map[string]bool{}
	for _, src := range sources {
		if _, ok := b.made[src]; ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		dst := newBlobID()
		b.s.pending.add(dst)
		err := b.s.duplicateBlob(src, dst)
		if errors.Is(err, fs.ErrNotExist) {
			// Replaced or removed since the snapshot: the transaction
			// finds out whether it is still needed.
			b.s.pending.done(dst)
			continue
		}
		b.made[src] = dst
		if err != nil {
			return diskFull(err)
		}
		dirs[filepath.Dir(b.s.blobPath(dst))] = true
	}
	// The new names must be durable before the metadata pointing at them.
	for d := range dirs {
		if err := b.s.syncDir(d); err != nil {
			return diskFull(err)
		}
	}
	return nil
}

// release removes the duplicates not referenced by a committed copy, then
// lets the sweep see them all.
func (b *copyBlobs) release() {
	var unused, all []string
	for _, dst := range b.made {
		all = append(all, dst)
		if !b.used[dst] {
			unused = append(unused, dst)
		}
	}
	b.s.removeBlobs(unused)
	b.s.pending.done(all...)
}

// copiedTree is what copyTree made: the new top node and how many nodes.
type copiedTree struct {
	top   rec
	nodes int64
}

// copyTree copies src as child name of parentID, depth first, and returns
// the new top node and how many it made. Files get the duplicates of their
// content in blobs, which it marks used; a file without one is
// errSourceChanged. What it holds is bounded by the depth of the tree, not
// by the size of a folder.
func (t *txn) copyTree(src rec, parentID, name string, shallow bool, blobs map[string]string, used map[string]bool) (copiedTree, error) {
	first := src
	if shallow && src.IsFolder() {
		first.Size = 0 // an empty folder
	}
	top, err := t.copyNode(first, parentID, name, blobs, used)
	if err != nil || !src.IsFolder() || shallow {
		return copiedTree{top: top, nodes: 1}, err
	}
	out := copiedTree{top: top, nodes: 1}
	// A level is a folder being copied: the source, its copy, and the name
	// of the last child copied.
	type level struct{ src, dst, after string }
	stack := []level{{src: src.ID, dst: top.ID}}
	for len(stack) > 0 {
		l := &stack[len(stack)-1]
		child, ok, err := t.childAfter(l.src, l.after)
		if err != nil {
			return copiedTree{}, err
		}
		if !ok {
			stack = stack[:len(stack)-1]
			continue
		}
		l.after = child.Name
		n, err := t.copyNode(child, l.dst, child.Name, blobs, used)
		if err != nil {
			return copiedTree{}, err
		}
		out.nodes++
		if child.IsFolder() {
			stack = append(stack, level{src: child.ID, dst: n.ID})
		}
	}
	return out, nil
}

// copyNode places a copy of src, without its children, as child name of
// parentID, with its properties and its content.
func (t *txn) copyNode(src rec, parentID, name string, blobs map[string]string, used map[string]bool) (rec, error) {
	n := src
	n.ID = uuid.NewString()
	n.ParentID, n.Name = parentID, name
	n.ETag = t.etag(n.ID)
	switch {
	case src.IsFolder():
	case src.inlined():
		// Small: copied in the transaction, nothing to prepare.
		k, err := t.copyInline(src)
		if err != nil {
			return rec{}, err
		}
		n.Inline = k
	default:
		dup, ok := blobs[src.Blob]
		if !ok {
			return rec{}, errSourceChanged
		}
		n.Blob = dup
		used[dup] = true
		if err := t.blobs().Put([]byte(n.Blob), []byte(n.ID)); err != nil {
			return rec{}, err
		}
		if !n.Checksums.Complete() {
			t.laterDigests = append(t.laterDigests, digestJob{nodeID: n.ID, blob: n.Blob})
		}
	}
	if err := t.placeNode(&n); err != nil {
		return rec{}, err
	}
	if err := t.copyProps(src.ID, n); err != nil {
		return rec{}, err
	}
	return n, nil
}

// isAncestor reports whether ancestorID is id or one of its ancestors.
func (t *txn) isAncestor(ancestorID, id string) (bool, error) {
	for id != "" {
		if id == ancestorID {
			return true, nil
		}
		r, ok, err := t.node(id)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, fmt.Errorf("ancestor %s missing: %w", id, errCorrupt)
		}
		id = r.ParentID
	}
	return false, nil
}
