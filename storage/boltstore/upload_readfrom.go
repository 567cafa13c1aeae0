package boltstore

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// readFromBlockSize is the block a large body is read, written and hashed
// in: large enough that hand-offs are rare, small enough to stay in the
// CPU's cache while the write and the three digests read it.
const readFromBlockSize = 256 << 10

// readFromBlocks is how many blocks an upload has in flight: the write and
// the faster digests can run this far ahead of MD5, the slowest.
const readFromBlocks = 8

// blocks recycles the blocks of uploads, so that a large upload costs a
// few MiB of memory whatever its size.
var blocks = sync.Pool{New: func() any {
	b := make([]byte, readFromBlockSize)
	return &b
}}

// ReadFrom writes everything r yields to the temporary file and the
// checksums, as Write does, but with its own blocks: it can then hand each
// block to the digests without waiting for them (checksum.Pipeline), and
// the three digests, the write and the next read all run at once. io.Copy
// into an upload ends here. An error reading r is returned as it is; one
// writing fails the upload, as in Write.
func (u *upload) ReadFrom(r io.Reader) (int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.finished {
		return 0, fmt.Errorf("write: %w", errFinished)
	}
	if u.failed != nil {
		return 0, u.failed
	}
	first := blocks.Get().(*[]byte)
	n, err := readBlock(r, *first)
	if err != nil && (n < parallelWriteMin || u.s.keepsInline(u.size+int64(n))) {
		// A small body, read whole: not worth any goroutine, and kept in
		// memory when it can be kept inline.
		defer blocks.Put(first)
		return u.writeLast((*first)[:n], err)
	}
	// The pipeline writes to the temporary file.
	if ferr := u.ensureFile(); ferr != nil {
		blocks.Put(first)
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

// pipeline copies r into the file and the digests block by block, starting
// with first, which holds n bytes read with readErr. This goroutine only
// reads; the write and each digest take the blocks on goroutines of their
// own. It returns once every block is written, hashed and back in the
// pool.
func (u *upload) pipeline(r io.Reader, first *[]byte, n int, readErr error) (int64, error) {
	free := make(chan *[]byte, readFromBlocks)
	for range readFromBlocks - 1 {
		free <- blocks.Get().(*[]byte)
	}
	file := &fileLane{u: u, start: u.size}
	lanes := u.sum.Pipeline(readFromBlocks, file)
	buf := first
	for {
		if n == 0 || file.failed.Load() {
			free <- buf
		} else {
			block := buf // buf moves on to the next block before this one is done
			lanes.Write((*block)[:n], func() { free <- block })
		}
		if readErr != nil || file.failed.Load() {
			break
		}
		buf = <-free
		n, readErr = readBlock(r, *buf)
	}
	lanes.Close()
	for range readFromBlocks {
		blocks.Put(<-free)
	}
	switch {
	case file.err != nil:
		// The digests may have bytes the file lacks: the upload can only
		// be discarded.
		u.failed = fmt.Errorf("write upload: %w", diskFull(file.err))
		return u.size - file.start, u.failed
	case readErr == io.EOF:
		return u.size - file.start, nil
	}
	return u.size - file.start, readErr
}

// fileLane writes the blocks of a pipeline to the upload's file, on the
// pipeline's goroutine, which owns u.size and u.wb until the pipeline is
// closed. After an error it drops the rest and says so in failed, for the
// reader to stop.
type fileLane struct {
	u      *upload
	start  int64
	err    error
	failed atomic.Bool
}

func (l *fileLane) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.u.f.WriteAt(p, l.u.size)
	l.u.size += int64(n)
	l.u.wb.wrote(l.u.size)
	if err != nil {
		l.err = err
		l.failed.Store(true)
	}
	return n, err
}

// readBlock reads until buf is full or reading fails; unlike io.ReadFull
// it keeps the reader's own error, so a body cut short
// (io.ErrUnexpectedEOF) is never taken for one that ended.
func readBlock(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
