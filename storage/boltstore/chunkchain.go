package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// AppendChunks gives up the parts the upload's digest chain covers and
// the chain's digests, instead of hashing them again: their staging file
// itself, linked as up's file, when they were all appended to it (nothing
// is copied), else their files copied file to file (the kernel copies
// them, or shares their blocks where the file system can).
func (s *Store) AppendChunks(ctx context.Context, up storage.Upload, id string, order []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	u, ok := up.(*upload)
	if !ok || u.s != s {
		return 0, nil
	}
	// A part still being appended to the staging file (put before the
	// upload was claimed) would write past the chain into the adopted
	// file: with one under way, the parts are copied instead.
	unlock, idle := s.chainLocks.tryLock(id)
	if idle {
		defer unlock()
	}
	files, state, staged, err := s.chainedParts(id, order)
	if err != nil {
		return 0, fmt.Errorf("append parts of chunked upload %.64q: %w", id, err)
	}
	if len(files) == 0 {
		return 0, nil
	}
	if staged.path != "" && idle {
		err = u.adoptStaged(staged, state)
	} else {
		err = u.appendHashed(files, state)
	}
	if errors.Is(err, errUncovered) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("append parts of chunked upload %.64q: %w", id, err)
	}
	return len(files), nil
}

// chainedFile is a part's file and the size its record gives; a staged
// part is the range at off of its staging file.
type chainedFile struct {
	path   string
	size   int64
	off    int64
	staged bool
}

// chainedParts returns the files of the parts of upload id that its digest
// chain covers, when they are exactly the first parts of order, and the
// chain's state; none otherwise. staged is the chain's staging file when
// it holds all those parts, one after the other.
func (s *Store) chainedParts(id string, order []string) (files []chainedFile, state []byte, staged chainedFile, err error) {
	err = s.view(func(t *txn) error {
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
			files = append(files, chainedFile{path: s.chunkPath(u.Dir, p.File), size: p.Size, off: p.Off, staged: p.Staged})
		}
		state = u.Chain.State
		if u.Chain.File != "" && contiguous(files, s.chunkPath(u.Dir, u.Chain.File), u.Chain.Bytes) {
			staged = chainedFile{path: s.chunkPath(u.Dir, u.Chain.File), size: u.Chain.Bytes}
		}
		return nil
	})
	return files, state, staged, err
}

// contiguous reports whether files are the ranges of the staging file at
// path, one after the other from its start, size bytes in all.
func contiguous(files []chainedFile, path string, size int64) bool {
	var off int64
	for _, f := range files {
		if !f.staged || f.path != path || f.off != off {
			return false
		}
		off += f.size
	}
	return off == size
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

// chainSum restores state, the digests a chain carried, for the upload,
// which must be writable and empty and compute no digest the chain lacks
// (errUncovered). The caller holds u.mu.
func (u *upload) chainSum(state []byte) (*checksum.Writer, error) {
	if err := u.writable(); err != nil {
		return nil, err
	}
	if u.size != 0 {
		return nil, errNotEmpty
	}
	sum := checksum.NewWriter()
	if err := sum.UnmarshalBinary(state); err != nil {
		return nil, fmt.Errorf("chain of parts: %w: %w", err, errCorrupt)
	}
	if !computesAll(sum, u.sum.Computes()) {
		return nil, errUncovered
	}
	return sum, nil
}

// takeSum makes sum, a chain's digests, the upload's: those it lacks are
// computed after the commit. The caller holds u.mu.
func (u *upload) takeSum(sum *checksum.Writer) {
	u.sum = sum
	u.later = u.later || !sum.Sums().Complete()
}

// appendHashed writes files to the upload's temporary file and takes
// state, the digests of their bytes, as its own. A failure fails the
// upload.
func (u *upload) appendHashed(files []chainedFile, state []byte) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	sum, err := u.chainSum(state)
	if err != nil {
		return err
	}
	if err := u.ensureFile(); err != nil {
		return err
	}
	u.takeSum(sum)
	for _, f := range files {
		if err := u.appendFile(f); err != nil {
			u.failed = fmt.Errorf("write upload: %w", err)
			return u.failed
		}
	}
	return nil
}

// adoptStaged makes f, the staging file of a chain's parts, the
// upload's file, by a hard link: the parts stay as they are (readable, and
// the upload's to remove if the commit fails), and the commit renames the
// link into place as the content, so no byte is copied. Bytes a failed
// part left past the chain are cut off. The upload's own temporary file,
// empty, goes. A failure fails the upload.
func (u *upload) adoptStaged(f chainedFile, state []byte) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	sum, err := u.chainSum(state)
	if err != nil {
		return err
	}
	path := filepath.Join(u.s.uploadDir, "staged-"+newBlobID())
	file, err := linkStaged(f, path)
	if err != nil {
		u.failed = fmt.Errorf("adopt the staged parts: %w", diskFull(err))
		return u.failed
	}
	if u.f != nil {
		u.f.Close()
		os.Remove(u.path)
	}
	u.f, u.path, u.mem, u.size = file, path, nil, f.size
	u.wb = u.s.newWriteback(file, f.size)
	u.takeSum(sum)
	return nil
}

// linkStaged links the staging file f at path and opens it, cut to its
// chain's size.
func linkStaged(f chainedFile, path string) (*os.File, error) {
	if err := os.Link(f.path, path); err != nil {
		return nil, err
	}
	file, err := os.OpenFile(path, os.O_RDWR, 0)
	if err == nil {
		err = file.Truncate(f.size)
	}
	if err != nil {
		if file != nil {
			file.Close()
		}
		os.Remove(path)
		return nil, err
	}
	return file, nil
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
	var part io.Reader = src
	if f.staged {
		// Its range of the staging file: a LimitedReader of a file still
		// copies in the kernel.
		if _, err := src.Seek(f.off, io.SeekStart); err != nil {
			return err
		}
		part = &io.LimitedReader{R: src, N: f.size}
	}
	n, err := u.f.ReadFrom(part)
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
