package pgstore

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// readFromBlockSize is the block a large body is read, sent and hashed in.
const readFromBlockSize = 256 << 10

// readFromBlocks is how many blocks an upload has in flight: the PUT and
// the faster digests can run this far ahead of MD5, the slowest.
const readFromBlocks = 8

// blocks recycles the blocks of uploads, so that a large upload costs a
// few MiB of memory whatever its size.
var blocks = sync.Pool{New: func() any {
	b := make([]byte, readFromBlockSize)
	return &b
}}

// ReadFrom writes everything r yields to the content and the checksums, as
// Write does; io.Copy into an upload ends here. The first bytes go to
// memory; past memLimit, the PUT and the three digests each take the
// blocks on a goroutine of their own (checksum.Pipeline) while this one
// reads the next. An error reading r is returned as it is; one sending
// fails the upload, as in Write.
func (u *upload) ReadFrom(r io.Reader) (int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.writable(); err != nil {
		return 0, err
	}
	start := u.size
	if u.stream == nil {
		done, err := u.fillMem(r)
		if done || err != nil {
			return u.size - start, err
		}
	}
	first := blocks.Get().(*[]byte)
	n, err := readBlock(r, *first)
	if n == 0 && u.stream == nil {
		// The body ended exactly at memLimit: still one PUT.
		blocks.Put(first)
		return u.size - start, eofIsEnd(err)
	}
	if serr := u.startStream(); serr != nil {
		blocks.Put(first)
		return u.size - start, serr
	}
	err = u.pipeline(r, first, n, err)
	return u.size - start, err
}

// fillMem reads into the memory the upload holds until it is full or r
// ends; done reports that r ended.
func (u *upload) fillMem(r io.Reader) (done bool, err error) {
	mem := *u.memory()
	for len(mem) < cap(mem) {
		n, err := r.Read(mem[len(mem):cap(mem)])
		u.sum.Write(mem[len(mem) : len(mem)+n])
		mem = mem[:len(mem)+n]
		u.size += int64(n)
		if err != nil {
			*u.mem = mem
			return true, eofIsEnd(err)
		}
	}
	*u.mem = mem
	return false, nil
}

func eofIsEnd(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// pipeline sends r to the object and the digests block by block, starting
// with first, which holds n bytes read with readErr. It returns once every
// block is sent, hashed and back in the pool.
func (u *upload) pipeline(r io.Reader, first *[]byte, n int, readErr error) error {
	free := make(chan *[]byte, readFromBlocks)
	for range readFromBlocks - 1 {
		free <- blocks.Get().(*[]byte)
	}
	lane := &streamLane{u: u}
	lanes := u.sum.Pipeline(readFromBlocks, lane)
	buf := first
	for {
		if n == 0 || lane.failed.Load() {
			free <- buf
		} else {
			block := buf // buf moves on to the next block before this one is done
			lanes.Write((*block)[:n], func() { free <- block })
		}
		if readErr != nil || lane.failed.Load() {
			break
		}
		buf = <-free
		n, readErr = readBlock(r, *buf)
	}
	lanes.Close()
	for range readFromBlocks {
		blocks.Put(<-free)
	}
	if lane.err != nil {
		// The digests may have bytes the object lacks.
		u.failed = fmt.Errorf("write upload: %w", lane.err)
		return u.failed
	}
	return eofIsEnd(readErr)
}

// streamLane sends the blocks of a pipeline to the upload's object, on the
// pipeline's goroutine, which owns u.size until the pipeline is closed.
// After an error it drops the rest and says so in failed, for the reader
// to stop.
type streamLane struct {
	u      *upload
	err    error
	failed atomic.Bool
}

func (l *streamLane) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.u.stream.Write(p)
	l.u.size += int64(n)
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
