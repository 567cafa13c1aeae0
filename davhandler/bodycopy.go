package davhandler

import (
	"io"
	"sync"
)

// bodyBlockSize is how much of a request body is read before it is handed
// to the store: large enough that the store's parallel write and hashes
// run long between hand-offs, small enough to stay in the CPU's cache
// while the write and the three hashes read it.
const bodyBlockSize = 256 << 10

// bodyBlocks recycles the blocks bodies are read into, so that a large
// upload costs the same two blocks of memory as a small one.
var bodyBlocks = sync.Pool{New: func() any {
	b := make([]byte, bodyBlockSize)
	return &b
}}

// block is a part of a body read into a buffer, with the error that ended
// reading it.
type block struct {
	buf *[]byte
	n   int
	err error
}

// copyReadingAhead copies src to dst block by block, reading the next
// block while dst takes the last one, so that receiving from the network
// overlaps with writing and hashing instead of alternating with them. A
// body that fits one block is copied without the second goroutine.
//
// It returns the error that ended reading (never io.EOF) or writing,
// whichever came first in the stream, and returns only once nothing
// reads src any more: a request body must not be read after its handler
// has returned.
func copyReadingAhead(dst io.Writer, src io.Reader) (readErr, writeErr error) {
	first := bodyBlocks.Get().(*[]byte)
	defer bodyBlocks.Put(first)
	n, err := readBlock(src, *first)
	if err != nil {
		return writeLast(dst, block{buf: first, n: n, err: err})
	}
	if _, err := dst.Write((*first)[:n]); err != nil {
		return nil, err
	}
	second := bodyBlocks.Get().(*[]byte)
	defer bodyBlocks.Put(second)
	// Two blocks circulate: one being read, one being written. Both
	// channels hold two, so neither side blocks the other on a send.
	empty := make(chan *[]byte, 2)
	filled := make(chan block, 2)
	stop := make(chan struct{})
	empty <- first
	empty <- second
	go readBlocks(src, empty, filled, stop)
	for b := range filled {
		if readErr != nil || writeErr != nil {
			continue // draining what the reader read before it stopped
		}
		if b.err != nil {
			readErr, writeErr = writeLast(dst, b)
			close(stop)
			continue
		}
		if _, writeErr = dst.Write((*b.buf)[:b.n]); writeErr != nil {
			close(stop)
			continue
		}
		empty <- b.buf
	}
	return readErr, writeErr
}

// readBlocks fills the buffers it receives from empty and sends them on
// filled until reading fails or ends, or stop is closed.
func readBlocks(src io.Reader, empty <-chan *[]byte, filled chan<- block, stop <-chan struct{}) {
	defer close(filled)
	for {
		// Stopping comes first: a free buffer must not start one more read
		// of a body nobody will store.
		select {
		case <-stop:
			return
		default:
		}
		var buf *[]byte
		select {
		case <-stop:
			return
		case buf = <-empty:
		}
		n, err := readBlock(src, *buf)
		filled <- block{buf: buf, n: n, err: err}
		if err != nil {
			return
		}
	}
}

// writeLast writes the last block, the one whose reading ended with
// b.err, and reports b.err unless it is the end of the body.
func writeLast(dst io.Writer, b block) (readErr, writeErr error) {
	if b.n > 0 {
		if _, err := dst.Write((*b.buf)[:b.n]); err != nil {
			return nil, err
		}
	}
	if b.err == io.EOF {
		return nil, nil
	}
	return b.err, nil
}

// readBlock reads until buf is full or reading fails; unlike
// io.ReadFull it keeps the reader's own error, so a body cut short
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
