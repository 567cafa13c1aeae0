package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/davspaces/davspaces/storage"
)

// A version is the record a file had before a commit replaced its content,
// kept in the versions bucket under space id \0 file id \0 version key.
// Its content stays where it was, a content file (still referenced in the
// blobs bucket by the file's id, so the orphan sweep leaves it) or an
// inline value, and is deleted with the version. Versions are keyed by the
// file's id, not by its place: they stay with a file moved or put in the
// trash, and a space's versions are one key range, for the evictions.

func versionPrefix(spaceID, fileID string) []byte {
	k := make([]byte, 0, len(spaceID)+len(fileID)+2)
	k = append(append(k, spaceID...), 0)
	return append(append(k, fileID...), 0)
}

func versionRecKey(spaceID, fileID, key string) []byte {
	return append(versionPrefix(spaceID, fileID), key...)
}

// fileVersions returns the versions of file fileID of space spaceID,
// newest first.
func (t *txn) fileVersions(spaceID, fileID string) ([]versionRec, error) {
	out, err := decodeUnder(t.versions(), versionPrefix(spaceID, fileID), decodeVersion)
	if err != nil {
		return nil, err
	}
	sortVersionRecs(out)
	return out, nil
}

// sortVersionRecs orders versions newest first, as storage.SortVersions.
func sortVersionRecs(vs []versionRec) {
	public := make([]storage.Version, len(vs))
	byKey := make(map[string]versionRec, len(vs))
	for i, v := range vs {
		public[i] = v.public("")
		byKey[v.Key] = v
	}
	storage.SortVersions(public)
	for i, p := range public {
		vs[i] = byKey[p.Key]
	}
}

// public returns the version as the contract shows it.
func (v versionRec) public(spaceID string) storage.Version {
	n := v.File.Node
	n.SpaceID, n.ParentID, n.Name = spaceID, "", ""
	return storage.Version{Key: v.Key, Node: n, Replaced: v.Replaced}
}

// version returns version key of file fileID of space spaceID.
func (t *txn) version(spaceID, fileID, key string) (versionRec, error) {
	v := t.versions().Get(versionRecKey(spaceID, fileID, key))
	if v == nil {
		return versionRec{}, storage.VersionNotFound(fileID, key)
	}
	return decodeVersion(key, v)
}

// liveFile returns file fileID of the live space spaceID; a folder is not
// found, as it has no versions.
func (t *txn) liveFile(spaceID, fileID string) (rec, error) {
	r, err := t.nodeIn(spaceID, fileID)
	if err != nil {
		return rec{}, err
	}
	if r.IsFolder() {
		return rec{}, fmt.Errorf("folder %s has no versions: %w", fileID, storage.ErrNotFound)
	}
	return r, nil
}

// replaceContent lets go of the content of old, a file of space spaceID
// whose content a commit replaces: it becomes the newest version of the
// file when the space keeps versions, and the file's versions are pruned
// to the retention; else the content is deleted.
func (t *txn) replaceContent(spaceID string, old rec) error {
	if !t.retentionOf(spaceID).KeepsVersions() {
		blob, err := t.dropContent(old)
		t.discardContent(blob)
		return err
	}
	vs, err := t.fileVersions(spaceID, old.ID)
	if err != nil {
		return err
	}
	key := storage.VersionKey(t.now, len(vs))
	for seq := len(vs) + 1; t.versions().Get(versionRecKey(spaceID, old.ID, key)) != nil; seq++ {
		key = storage.VersionKey(t.now, seq)
	}
	v := versionRec{Key: key, File: old, Replaced: t.now}
	v.File.ParentID, v.File.Name = "", ""
	if err := t.versions().Put(versionRecKey(spaceID, old.ID, key), encodeVersion(&v)); err != nil {
		return err
	}
	if err := t.indexVersionAge(spaceID, old.ID, &v); err != nil {
		return err
	}
	if err := t.addUndo(spaceID, 0, old.Size); err != nil {
		return err
	}
	if err := t.countNodes(spaceID, 1); err != nil {
		return err
	}
	if pruned, err := t.pruneVersions(spaceID, old.ID); err != nil || pruned > 0 {
		return err
	}
	return t.keepWithinNodeCap(spaceID, old.ID)
}

// keepWithinNodeCap drops the oldest version of file fileID, the one just
// kept when it is the only one, if the space is past its node cap: a
// version is kept only where the cap has room for it, so that an edit is
// never refused for what it would keep for undo, as the oldest undo makes
// room for an upload under the quota (trimUndo).
func (t *txn) keepWithinNodeCap(spaceID, fileID string) error {
	limit, err := t.nodeCap(spaceID)
	if err != nil || t.spaceCounters(spaceID).nodes <= limit {
		return err
	}
	vs, err := t.fileVersions(spaceID, fileID)
	if err != nil || len(vs) == 0 {
		return err
	}
	return t.dropVersion(spaceID, fileID, vs[len(vs)-1].Key) // newest first
}

// pruneVersions drops the versions of file fileID the retention of space
// spaceID no longer keeps, and returns how many.
func (t *txn) pruneVersions(spaceID, fileID string) (int, error) {
	vs, err := t.fileVersions(spaceID, fileID)
	if err != nil || len(vs) == 0 {
		return 0, err
	}
	public := make([]storage.Version, len(vs))
	for i, v := range vs {
		public[i] = v.public(spaceID)
	}
	prune := t.retentionOf(spaceID).VersionsToPrune(public, t.now)
	for _, v := range prune {
		if err := t.dropVersion(spaceID, fileID, v.Key); err != nil {
			return 0, err
		}
	}
	return len(prune), nil
}

// dropVersion deletes version key of file fileID with its content, if it
// is still there.
func (t *txn) dropVersion(spaceID, fileID, key string) error {
	k := versionRecKey(spaceID, fileID, key)
	v := t.versions().Get(k)
	if v == nil {
		return nil
	}
	r, err := decodeVersion(key, v)
	if err != nil {
		return err
	}
	blob, err := t.dropContent(r.File)
	if err != nil {
		return err
	}
	t.discardContent(blob)
	if err := t.versions().Delete(k); err != nil {
		return err
	}
	if err := t.unindexVersionAge(spaceID, fileID, &r); err != nil {
		return err
	}
	if err := t.countNodes(spaceID, -1); err != nil {
		return err
	}
	return t.addUndo(spaceID, 0, -r.File.Size)
}

// dropVersions deletes every version of file fileID: one seek for a file
// that has none.
func (t *txn) dropVersions(spaceID, fileID string) error {
	prefix := versionPrefix(spaceID, fileID)
	var keys []string
	// A kept cursor: a large folder destroyed seeks once per file.
	c := t.look.cursor(&t.look.versions, t.versions)
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, string(k[len(prefix):]))
	}
	for _, key := range keys {
		if err := t.dropVersion(spaceID, fileID, key); err != nil {
			return err
		}
	}
	return nil
}

// FileVersions returns the versions of a file of the space, newest first.
func (s *Store) FileVersions(ctx context.Context, spaceID, fileID string) ([]storage.Version, error) {
	out, err := inTxn(ctx, s.view, func(t *txn) ([]storage.Version, error) {
		if _, err := t.liveFile(spaceID, fileID); err != nil {
			return nil, err
		}
		vs, err := t.fileVersions(spaceID, fileID)
		out := make([]storage.Version, len(vs))
		for i, v := range vs {
			out[i] = v.public(spaceID)
		}
		return out, err
	})
	if err != nil {
		return nil, fmt.Errorf("versions of %s: %w", fileID, err)
	}
	return out, nil
}

// OpenVersion returns a version of a file and its content, which stays
// readable while open even if the version is pruned meanwhile.
func (s *Store) OpenVersion(ctx context.Context, spaceID, fileID, key string) (storage.Version, storage.Content, error) {
	if err := ctx.Err(); err != nil {
		return storage.Version{}, nil, err
	}
	if err := storage.ValidVersionKey(fileID, key); err != nil {
		return storage.Version{}, nil, err
	}
	var (
		v    versionRec
		data []byte
	)
	err := s.view(func(t *txn) (err error) {
		if _, err := t.liveFile(spaceID, fileID); err != nil {
			return err
		}
		if v, err = t.version(spaceID, fileID, key); err != nil || !v.File.inlined() {
			return err
		}
		data, err = t.inlineContent(v.File)
		return err
	})
	if err != nil {
		return storage.Version{}, nil, fmt.Errorf("open version %s of %s: %w", key, fileID, err)
	}
	if v.File.inlined() {
		return v.public(spaceID), inlineReader{bytes.NewReader(data)}, nil
	}
	f, err := os.Open(s.blobPath(v.File.Blob))
	if errors.Is(err, fs.ErrNotExist) {
		// Content files of versions never change: gone, it was pruned
		// since the lookup.
		return storage.Version{}, nil, storage.VersionNotFound(fileID, key)
	}
	if err != nil {
		return storage.Version{}, nil, fmt.Errorf("open version %s of %s: %w", key, fileID, err)
	}
	return v.public(spaceID), f, nil
}

// RestoreVersion makes version key the content of the file again, as a
// commit by node id would, and keeps the content it replaces as the
// newest version. What the space holds does not grow: the restored bytes
// leave the versions for the file, the replaced ones the file for the
// versions (or are deleted when the space keeps no versions), so no quota
// check is needed.
func (s *Store) RestoreVersion(ctx context.Context, spaceID, fileID, key string, c storage.Conditions) (storage.Node, error) {
	if err := ctx.Err(); err != nil {
		return storage.Node{}, err
	}
	if err := storage.ValidVersionKey(fileID, key); err != nil {
		return storage.Node{}, err
	}
	var out rec
	err := s.update(func(t *txn) error {
		cur, err := t.liveFile(spaceID, fileID)
		if err != nil {
			return err
		}
		if err := t.checkHeld(spaceID, c.Locks, lockedNode{id: cur.ID}); err != nil {
			return err
		}
		if err := c.CheckReplace(cur.Node, true); err != nil {
			return err
		}
		v, err := t.version(spaceID, fileID, key)
		if err != nil {
			return err
		}
		if err := t.versions().Delete(versionRecKey(spaceID, fileID, key)); err != nil {
			return err
		}
		if err := t.unindexVersionAge(spaceID, fileID, &v); err != nil {
			return err
		}
		if err := t.countNodes(spaceID, -1); err != nil {
			return err
		}
		if err := t.addUndo(spaceID, 0, -v.File.Size); err != nil {
			return err
		}
		if err := t.replaceContent(spaceID, cur); err != nil {
			return err
		}
		out = cur
		out.Size, out.ModTime, out.ContentType, out.Checksums = v.File.Size, v.File.ModTime, v.File.ContentType, v.File.Checksums
		out.Blob, out.Inline = v.File.Blob, v.File.Inline
		out.ETag = t.etag(out.ID)
		if err := t.putNode(&out); err != nil {
			return err
		}
		return t.propagate(out.ParentID, v.File.Size-cur.Size)
	})
	if err != nil {
		return storage.Node{}, fmt.Errorf("restore version %s of %s: %w", key, fileID, err)
	}
	return out.Node, nil
}
