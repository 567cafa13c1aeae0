package boltstore

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/davspaces/davspaces/storage"
	"github.com/google/uuid"
	"go.uber.org/zap"
)

// duplicateBlob makes the content file dst with the content of src: a hard
// link, or a copy where links are not possible.
func (s *Store) duplicateBlob(src, dst string) error {
	if err := s.prepareBlobDir(dst); err != nil {
		return err
	}
	srcPath, dstPath := s.blobPath(src), s.blobPath(dst)
	if err := s.link(srcPath, dstPath); err == nil {
		return nil
	}
	return s.copyFile(srcPath, dstPath)
}

func (s *Store) copyFile(srcPath, dstPath string) (err error) {
	in, err := os.Open(srcPath)
	if err != nil {
		return fmt.Errorf("copy content: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(s.uploadDir, "copy-*")
	if err != nil {
		return fmt.Errorf("copy content: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = io.Copy(tmp, in); err != nil {
		return fmt.Errorf("copy content: %w", err)
	}
	if err = s.sync(tmp); err != nil {
		return fmt.Errorf("copy content: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("copy content: %w", err)
	}
	if err = os.Rename(tmp.Name(), dstPath); err != nil {
		return fmt.Errorf("copy content: %w", err)
	}
	return nil
}

// newBlobID returns a fresh content file id: 32 lower-case hex digits.
func newBlobID() string {
	u := uuid.New()
	return hex.EncodeToString(u[:])
}

func (s *Store) blobPath(blob string) string {
	return filepath.Join(s.blobDir, blob[:2], blob)
}

// prepareBlobDir makes sure the directory of blob exists, durably.
func (s *Store) prepareBlobDir(blob string) error {
	err := os.Mkdir(filepath.Join(s.blobDir, blob[:2]), 0o700)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.syncDir(s.blobDir)
}

// removeBlobs deletes content files no longer referenced. Failures leave
// orphans the next sweep removes, so they are only logged.
func (s *Store) removeBlobs(blobs []string) {
	for _, b := range blobs {
		if err := os.Remove(s.blobPath(b)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("cannot remove content file", zap.String("blob", b), zap.Error(err))
		}
	}
}

// sync flushes f to stable storage unless the store runs without fsync.
func (s *Store) sync(f *os.File) error {
	if s.noSync {
		return nil
	}
	return f.Sync()
}

// syncDir flushes a directory's entries unless the store runs without fsync.
func (s *Store) syncDir(dir string) error {
	if s.noSync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// diskFull marks the error of a full disk or an exhausted disk quota as
// storage.ErrNoSpace: the client is told 507, not 500.
func diskFull(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", storage.ErrNoSpace, err)
	}
	return err
}

// Open returns the content of a file and the node as of that content: the
// content file itself, which stays readable while open even if the file is
// replaced or removed. The node is the record that names the content file
// opened, and content files never change, so its size, etag and checksums
// describe exactly the bytes read. A replacement may remove the content
// file between the lookup and the open; then the lookup is done again.
func (s *Store) Open(ctx context.Context, spaceID, nodeID string) (storage.Node, storage.Content, error) {
	if err := ctx.Err(); err != nil {
		return storage.Node{}, nil, err
	}
	prev := ""
	for attempt := 0; ; attempt++ {
		var (
			r    rec
			data []byte
		)
		err := s.view(func(t *txn) (err error) {
			if r, err = t.nodeIn(spaceID, nodeID); err != nil || !r.inlined() {
				return err
			}
			data, err = t.inlineContent(r)
			return err
		})
		if err != nil {
			return storage.Node{}, nil, fmt.Errorf("open: %w", err)
		}
		if r.IsFolder() {
			return storage.Node{}, nil, storage.IsAFolder(nodeID)
		}
		if r.inlined() {
			// Read in the snapshot that holds the node: the pair matches.
			return r.Node, inlineReader{bytes.NewReader(data)}, nil
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
