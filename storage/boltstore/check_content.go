package boltstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// contentRef is a content file a file or a version references, checked
// on disk once the snapshot that found it has ended.
type contentRef struct {
	spaceID, path string
	what          string // "file x" or "version k of file x"
	blob          string
	size          int64
	sha1          string
	// still reports, in a snapshot, whether the reference is still there:
	// a content file missing because its file was replaced or removed
	// since is no problem.
	still func(t *txn) bool
	// drop, when set, repairs a missing content file by removing what
	// references it (a version; never a node).
	drop func() (bool, error)
}

// fileContent checks the content of r, a file or the file of version
// versionKey (""), as far as the snapshot t can: an inline value there, or
// the reference of its content file, which it returns to be checked on
// disk after the snapshot.
func (c *checkRun) fileContent(t *txn, spaceID, path string, r rec, versionKey string) (*contentRef, []finding) {
	what := "file " + r.ID
	if versionKey != "" {
		what = fmt.Sprintf("version %s of file %s", versionKey, r.ID)
	}
	if r.inlined() {
		return nil, c.inlineContent(t, spaceID, path, what, r)
	}
	var fs []finding
	if owner := t.blobs().Get([]byte(r.Blob)); string(owner) != r.ID {
		f := problem(storage.ProblemDangling, spaceID, path, "content file %s of %s has no reference (the orphan sweep would remove it)", r.Blob, what)
		if owner != nil {
			f.Detail = fmt.Sprintf("content file %s of %s is referenced by %s", r.Blob, what, owner)
		} else {
			f = f.withRepair(c.addBlobRef(r.Blob, r.ID))
		}
		fs = append(fs, f)
	}
	ref := &contentRef{spaceID: spaceID, path: path, what: what, blob: r.Blob, size: r.Size, sha1: r.Checksums.SHA1}
	id, blob := r.ID, r.Blob
	if versionKey == "" {
		ref.still = func(t *txn) bool {
			n, ok, err := t.node(id)
			return err == nil && ok && n.Blob == blob
		}
	} else {
		key := versionRecKey(spaceID, id, versionKey)
		ref.still = func(t *txn) bool {
			v := t.versions().Get(key)
			if v == nil {
				return false
			}
			vr, err := decodeVersion(versionKey, v)
			return err == nil && vr.File.Blob == blob
		}
		ref.drop = c.dropVersion(spaceID, id, versionKey, ref.still)
	}
	return ref, fs
}

// addBlobRef repairs the missing reference of content file blob of node
// (or version of) id.
func (c *checkRun) addBlobRef(blob, id string) func() (bool, error) {
	return func() (bool, error) {
		return c.update(func(t *txn) (bool, error) {
			if t.blobs().Get([]byte(blob)) != nil {
				return false, nil
			}
			return true, t.blobs().Put([]byte(blob), []byte(id))
		})
	}
}

// dropVersion repairs a version that points at nothing by deleting it, if
// still says it is the same.
func (c *checkRun) dropVersion(spaceID, fileID, key string, still func(t *txn) bool) func() (bool, error) {
	return func() (bool, error) {
		return c.update(func(t *txn) (bool, error) {
			if !still(t) {
				return false, nil
			}
			return true, t.dropVersion(spaceID, fileID, key)
		})
	}
}

// inlineContent checks the inline content of r in the snapshot t.
func (c *checkRun) inlineContent(t *txn, spaceID, path, what string, r rec) []finding {
	v := t.inline().Get(inlineKey(r.Inline))
	c.sum.Contents++
	c.sum.Bytes += r.Size
	switch {
	case v == nil && r.Size > 0:
		return []finding{problem(storage.ProblemMissingContent, spaceID, path, "inline content %d of %s is missing", r.Inline, what)}
	case int64(len(v)) != r.Size:
		return []finding{problem(storage.ProblemContentSize, spaceID, path, "inline content %d of %s has %d bytes, the record says %d", r.Inline, what, len(v), r.Size)}
	case c.opts.Deep && r.Checksums.SHA1 != "":
		w := checksum.NewWriter()
		w.Write(v)
		if got := w.Sums().SHA1; got != r.Checksums.SHA1 {
			return []finding{problem(storage.ProblemChecksum, spaceID, path, "inline content %d of %s has SHA1 %s, the record says %s", r.Inline, what, got, r.Checksums.SHA1)}
		}
	}
	return nil
}

// checkContents checks content files on disk: each exists with its size
// and, in a deep check, its SHA1.
func (c *checkRun) checkContents(refs []contentRef) error {
	for _, ref := range refs {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		f, err := c.checkContent(ref)
		if err != nil {
			return err
		}
		c.sum.Contents++
		c.sum.Bytes += ref.size
		c.progress(1)
		if f != nil {
			if err := c.found(*f); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *checkRun) checkContent(ref contentRef) (*finding, error) {
	info, err := os.Stat(c.s.blobPath(ref.blob))
	if errors.Is(err, fs.ErrNotExist) {
		still := false
		if err := c.s.view(func(t *txn) error { still = ref.still(t); return nil }); err != nil || !still {
			return nil, err
		}
		f := problem(storage.ProblemMissingContent, ref.spaceID, ref.path, "content file %s of %s is missing", ref.blob, ref.what)
		if ref.drop != nil {
			f = f.withRepair(ref.drop)
		}
		return &f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("content file %s: %w", ref.blob, err)
	}
	if info.Size() != ref.size {
		f := problem(storage.ProblemContentSize, ref.spaceID, ref.path, "content file %s of %s has %d bytes, the record says %d", ref.blob, ref.what, info.Size(), ref.size)
		return &f, nil
	}
	if !c.opts.Deep || ref.sha1 == "" {
		return nil, nil
	}
	got, err := c.fileSHA1(ref.blob)
	if err != nil {
		return nil, err
	}
	if got != ref.sha1 {
		f := problem(storage.ProblemChecksum, ref.spaceID, ref.path, "content file %s of %s has SHA1 %s, the record says %s", ref.blob, ref.what, got, ref.sha1)
		return &f, nil
	}
	return nil, nil
}

// fileSHA1 reads content file blob through, streaming.
func (c *checkRun) fileSHA1(blob string) (string, error) {
	f, err := os.Open(c.s.blobPath(blob))
	if err != nil {
		return "", fmt.Errorf("content file %s: %w", blob, err)
	}
	defer f.Close()
	w := checksum.NewWriter()
	if _, err := io.Copy(w, f); err != nil {
		return "", fmt.Errorf("content file %s: %w", blob, err)
	}
	return w.Sums().SHA1, nil
}
