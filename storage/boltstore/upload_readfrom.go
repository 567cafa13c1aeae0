package boltstore

import (
	"fmt"
	"io"

	"github.com/davspaces/davspaces/storage"
)

// ReadFrom writes everything r yields to the temporary file and the
// checksums, as Write does, but with its own blocks: it can then hand each
// block to the digests without waiting for them (checksum.Pipeline), and
// the three digests, the write and the next read all run at once. io.Copy
// into an upload ends here. An error reading r is returned as it is; one
// writing fails the upload, as in Write.
func (u *upload) ReadFrom(r io.Reader) (int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.writable(); err != nil {
		return 0, err
	}
	first := storage.GetBlock()
	n, err := storage.ReadBlock(r, *first)
	if err != nil && (n < parallelWriteMin || u.s.keepsInline(u.size+int64(n))) {
		// A small body, read whole: not worth any goroutine, and kept in
		// memory when it can be kept inline.
		defer storage.PutBlock(first)
		return u.writeLast((*first)[:n], err)
	}
	// The pipeline writes to the temporary file.
	if ferr := u.ensureFile(); ferr != nil {
		storage.PutBlock(first)
		return 0, ferr
	}
	return u.pipeline(r, first, n, err)
}

// writeLast writes the last bytes read from a body, whose reading ended
// with readErr, and reports readErr unless the body simply ended.
func (u *upload) writeLast(p []byte, readErr error) (int64, error) {
	n, err := u.write(p)
	if err != nil {
		return int64(n), err
	}
	if readErr == io.EOF {
		readErr = nil
	}
	return int64(n), readErr
}

// pipeline copies r into the file and the digests block by block,
// starting with first, which holds n bytes read with readErr.
func (u *upload) pipeline(r io.Reader, first *[]byte, n int, readErr error) (int64, error) {
	start := u.size
	werr, rerr := storage.PipeBlocks(u.sum, fileWriter{u}, r, first, n, readErr)
	if werr != nil {
		// The digests may have bytes the file lacks: the upload can only
		// be discarded.
		u.failed = fmt.Errorf("write upload: %w", diskFull(werr))
		return u.size - start, u.failed
	}
	return u.size - start, rerr
}

// fileWriter writes the blocks of a pipeline to the upload's file, on the
// pipeline's goroutine, which owns u.size and u.wb until the pipeline is
// done.
type fileWriter struct{ u *upload }

func (w fileWriter) Write(p []byte) (int, error) {
	n, err := w.u.f.WriteAt(p, w.u.size)
	w.u.size += int64(n)
	w.u.wb.wrote(w.u.size)
	return n, err
}
