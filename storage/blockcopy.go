package storage

import (
	"io"
	"sync"
	"sync/atomic"

	"github.com/davspaces/davspaces/checksum"
)

// BlockSize is the block a large upload body is read, written and hashed
// in: large enough that hand-offs are rare, small enough to stay in the
// CPU's cache while the write and the three digests read it.
const BlockSize = 256 << 10

// BlocksInFlight is how many blocks a PipeBlocks copy has in flight: the
// write and the faster digests can run this far ahead of MD5, the slowest.
const BlocksInFlight = 8

// blocks recycles the blocks of uploads, so that a large upload costs a
// few MiB of memory whatever its size.
var blocks = sync.Pool{New: func() any {
	b := make([]byte, BlockSize)
	return &b
}}

// GetBlock returns a block of BlockSize bytes from the pool the stores'
// uploads share; PutBlock gives it back.
func GetBlock() *[]byte { return blocks.Get().(*[]byte) }

// PutBlock returns a block GetBlock gave.
func PutBlock(b *[]byte) { blocks.Put(b) }

// ReadBlock reads until buf is full or reading fails; unlike io.ReadFull
// it keeps the reader's own error, so a body cut short
// (io.ErrUnexpectedEOF) is never taken for one that ended.
func ReadBlock(r io.Reader, buf []byte) (int, error) {
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

// PipeBlocks copies r into dst and the digests of sum block by block,
// starting with first (from GetBlock), which holds n bytes read with
// readErr. This goroutine only reads; dst and each digest take the blocks
// on goroutines of their own (checksum.Pipeline), so dst sees its writes
// in order on one goroutine, which owns what dst changes until PipeBlocks
// returns. Once dst fails the rest of r is left unread.
//
// It returns once every block is written, hashed and back in the pool:
// writeErr is dst's error (the digests may then hold bytes dst lacks),
// readErr r's, nil when r simply ended.
func PipeBlocks(sum *checksum.Writer, dst io.Writer, r io.Reader, first *[]byte, n int, readErr error) (writeErr, _ error) {
	free := make(chan *[]byte, BlocksInFlight)
	for range BlocksInFlight - 1 {
		free <- GetBlock()
	}
	lane := &latchingWriter{w: dst}
	lanes := sum.Pipeline(BlocksInFlight, lane)
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
		n, readErr = ReadBlock(r, *buf)
	}
	lanes.Close()
	for range BlocksInFlight {
		PutBlock(<-free)
	}
	if readErr == io.EOF {
		readErr = nil
	}
	return lane.err, readErr
}

// latchingWriter writes to w until w fails, then drops the rest and says so
// in failed, for the reader to stop.
type latchingWriter struct {
	w      io.Writer
	err    error
	failed atomic.Bool
}

func (l *latchingWriter) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.w.Write(p)
	if err != nil {
		l.err = err
		l.failed.Store(true)
	}
	return n, err
}
