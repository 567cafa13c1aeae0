package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/uuid"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// NewUpload starts receiving the content of a file in the space, into a
// temporary file under uploads/.
func (s *Store) NewUpload(ctx context.Context, spaceID string) (storage.Upload, error) {
	if _, err := s.Space(ctx, spaceID); err != nil {
		return nil, fmt.Errorf("new upload: %w", err)
	}
	f, err := os.CreateTemp(s.uploadDir, "upload-*")
	if err != nil {
		return nil, fmt.Errorf("new upload: %w", err)
	}
	return &upload{s: s, spaceID: spaceID, f: f, path: f.Name(), sum: checksum.NewWriter()}, nil
}

// upload is a storage.Upload writing to a temporary file.
type upload struct {
	s       *Store
	spaceID string
	path    string
	sum     *checksum.Writer

	mu   sync.Mutex
	f    *os.File // nil once committed or discarded
	size int64
}

var errFinished = errors.New("upload is finished")

// Write writes p to the temporary file and the checksums.
func (u *upload) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.f == nil {
		return 0, fmt.Errorf("write: %w", errFinished)
	}
	n, err := u.f.Write(p)
	u.sum.Write(p[:n])
	u.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("write upload: %w", err)
	}
	return n, nil
}

// Size is the number of bytes written so far.
func (u *upload) Size() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.size
}

// Checksums of the bytes written so far.
func (u *upload) Checksums() checksum.Sums {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sum.Sums()
}

// Discard drops the content. It is safe to call more than once and after
// Commit.
func (u *upload) Discard() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.f == nil {
		return nil
	}
	u.f.Close()
	u.f = nil
	if err := os.Remove(u.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("discard upload: %w", err)
	}
	return nil
}

// Commit makes the content durable and visible as the file c.Name in folder
// c.ParentID. The upload is finished afterwards, whether Commit succeeded or
// not.
func (u *upload) Commit(ctx context.Context, c storage.Commit) (storage.Node, bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.f == nil {
		return storage.Node{}, false, fmt.Errorf("commit %q: %w", c.Name, errFinished)
	}
	f := u.f
	u.f = nil
	err := validName(c.Name)
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = u.s.sync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(u.path)
		return storage.Node{}, false, fmt.Errorf("commit %q: %w", c.Name, err)
	}
	n, created, err := u.s.commit(u.spaceID, u.path, u.size, u.sum.Sums(), c)
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("commit %q: %w", c.Name, err)
	}
	return n, created, nil
}

// commit puts the complete, synced file at tmp in place as a new content
// file and creates or updates the node pointing at it.
func (s *Store) commit(spaceID, tmp string, size int64, sums checksum.Sums, c storage.Commit) (storage.Node, bool, error) {
	blob := newBlobID()
	if err := s.prepareBlobDir(blob); err != nil {
		os.Remove(tmp)
		return storage.Node{}, false, err
	}
	path := s.blobPath(blob)

	// From the rename until the metadata commits, the content file is
	// unreferenced: keep the orphan sweep away.
	s.blobMu.RLock()
	defer s.blobMu.RUnlock()
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return storage.Node{}, false, err
	}
	if err := s.syncDir(filepath.Dir(path)); err != nil {
		os.Remove(path)
		return storage.Node{}, false, err
	}

	var (
		n       rec
		created bool
		oldBlob string
	)
	err := s.update(func(t *txn) error {
		p, err := t.folderIn(spaceID, c.ParentID, storage.ErrConflict)
		if err != nil {
			return err
		}
		old, exists, err := t.child(p.ID, c.Name)
		if err != nil {
			return err
		}
		if c.IfMatch != "" && (!exists || old.ETag != c.IfMatch) {
			return fmt.Errorf("etag %q does not match: %w", c.IfMatch, storage.ErrPrecondition)
		}
		if c.IfNoneMatch && exists {
			return fmt.Errorf("target exists: %w", storage.ErrPrecondition)
		}
		if exists && old.IsFolder() {
			return fmt.Errorf("target is a folder: %w", storage.ErrConflict)
		}
		var oldSize int64
		if exists {
			oldSize = old.Size
		}
		if err := t.checkQuota(spaceID, size-oldSize); err != nil {
			return err
		}
		mtime := c.ModTime
		if mtime.IsZero() {
			mtime = t.now
		}
		if exists {
			n, oldBlob = old, old.Blob
			if err := t.blobs.Delete([]byte(oldBlob)); err != nil {
				return err
			}
		} else {
			n = rec{Node: storage.Node{
				ID:       uuid.NewString(),
				SpaceID:  spaceID,
				ParentID: p.ID,
				Name:     c.Name,
				Kind:     storage.KindFile,
			}}
			if err := t.children.Put(childKey(p.ID, c.Name), []byte(n.ID)); err != nil {
				return err
			}
		}
		n.Size = size
		n.ModTime = mtime.UTC()
		n.ETag = t.etag(n.ID)
		n.ContentType = c.ContentType
		n.Checksums = sums
		n.Blob = blob
		if err := t.blobs.Put([]byte(blob), []byte(n.ID)); err != nil {
			return err
		}
		if err := t.putNode(&n); err != nil {
			return err
		}
		created = !exists
		return t.propagate(p.ID, size-oldSize)
	})
	if err != nil {
		os.Remove(path)
		return storage.Node{}, false, err
	}
	if oldBlob != "" {
		s.removeBlobs([]string{oldBlob})
	}
	return n.Node, created, nil
}

// Open returns the content of a file and the node as of that content: the
// content file itself, which stays readable while open even if the file is
// replaced or removed.
func (s *Store) Open(ctx context.Context, spaceID, nodeID string) (storage.Node, storage.Content, error) {
	if err := ctx.Err(); err != nil {
		return storage.Node{}, nil, err
	}
	prev := ""
	for attempt := 0; ; attempt++ {
		var r rec
		err := s.view(func(t *txn) (err error) {
			r, err = t.nodeIn(spaceID, nodeID)
			return err
		})
		if err != nil {
			return storage.Node{}, nil, fmt.Errorf("open: %w", err)
		}
		if r.IsFolder() {
			return storage.Node{}, nil, fmt.Errorf("open %s: is a folder: %w", nodeID, storage.ErrInvalid)
		}
		f, err := os.Open(s.blobPath(r.Blob))
		if err == nil {
			return r.Node, f, nil
		}
		// A concurrent replacement may have deleted the content we looked
		// up; look again unless the node still points at the same content.
		if !errors.Is(err, fs.ErrNotExist) || r.Blob == prev || attempt == 10 {
			return storage.Node{}, nil, fmt.Errorf("open %s: content: %w", nodeID, err)
		}
		prev = r.Blob
	}
}
