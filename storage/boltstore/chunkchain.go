package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// AppendChunks writes the parts the upload's digest chain covers into up,
// file to file (the kernel copies them, or shares their blocks where the
// file system can), and gives up the chain's digests instead of hashing
// them again.
func (s *Store) AppendChunks(ctx context.Context, up storage.Upload, id string, order []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	u, ok := up.(*upload)
	if !ok || u.s != s {
		return 0, nil
	}
	files, state, err := s.chainedParts(id, order)
	if err != nil {
		return 0, fmt.Errorf("append parts of chunked upload %.64q: %w", id, err)
	}
	if len(files) == 0 {
		return 0, nil
	}
	err = u.appendHashed(files, state)
	if errors.Is(err, errUncovered) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("append parts of chunked upload %.64q: %w", id, err)
	}
	return len(files), nil
}

// chainedFile is a part's file and the size its record gives.
type chainedFile struct {
	path string
	size int64
}

// chainedParts returns the files of the parts of upload id that its digest
// chain covers, when they are exactly the first parts of order, and the
// chain's state; none otherwise.
func (s *Store) chainedParts(id string, order []string) ([]chainedFile, []byte, error) {
	var files []chainedFile
	var state []byte
	err := s.view(func(t *txn) error {
		u, err := t.liveChunkedUpload(id, s.now())
		if err != nil {
			return err
		}
		if u.Chain.Len == 0 || u.Chain.Len > uint64(len(order)) {
			return nil
		}
		parts, err := t.partsOf(id)
		if err != nil {
			return err
		}
		for i, name := range order[:u.Chain.Len] {
			p, err := partNamed(parts, id, name)
			if err != nil {
				return err
			}
			if !u.Chain.covers(p) || p.Seq != uint64(i+1) {
				files = nil
				return nil
			}
			files = append(files, chainedFile{path: s.chunkPath(u.Dir, p.File), size: p.Size})
		}
		state = u.Chain.State
		return nil
	})
	return files, state, err
}

// errNotEmpty: parts are appended with their digests only to an upload
// that holds nothing yet.
var errNotEmpty = errors.New("upload is not empty")

// errUncovered: the chain carries none of a digest the upload computes
// while its bytes arrive (one its client announced other than
// storage.PartDigests): the parts are then written as any bytes are.
var errUncovered = errors.New("the chain lacks a digest the upload computes")

// computesAll reports whether w computes every one of algs.
func computesAll(w *checksum.Writer, algs []checksum.Algorithm) bool {
	have := w.Computes()
	for _, alg := range algs {
		if !slices.Contains(have, alg) {
			return false
		}
	}
	return true
}

// appendHashed writes files to the upload's temporary file and takes
// state, the digests of their bytes, as its own. A failure fails the
// upload.
func (u *upload) appendHashed(files []chainedFile, state []byte) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.writable(); err != nil {
		return err
	}
	if u.size != 0 {
		return errNotEmpty
	}
	sum := checksum.NewWriter()
	if err := sum.UnmarshalBinary(state); err != nil {
		return fmt.Errorf("chain of parts: %w: %w", err, errCorrupt)
	}
	if !computesAll(sum, u.sum.Computes()) {
		return errUncovered
	}
	if err := u.ensureFile(); err != nil {
		return err
	}
	u.sum = sum
	u.later = u.later || !sum.Sums().Complete()
	for _, f := range files {
		if err := u.appendFile(f); err != nil {
			u.failed = fmt.Errorf("write upload: %w", err)
			return u.failed
		}
	}
	return nil
}

// appendFile appends the part in f to the temporary file: ReadFrom of one
// file into another copies in the kernel (copy_file_range), never through
// this process.
func (u *upload) appendFile(f chainedFile) error {
	src, err := os.Open(f.path)
	if err != nil {
		return err
	}
	defer src.Close()
	if _, err := u.f.Seek(u.size, io.SeekStart); err != nil {
		return err
	}
	n, err := u.f.ReadFrom(src)
	u.size += n
	u.wb.wrote(u.size)
	if err != nil {
		return diskFull(err)
	}
	if n != f.size {
		return fmt.Errorf("part %s holds %d bytes, not %d: %w", f.path, n, f.size, errCorrupt)
	}
	return nil
}
