package boltstore

import "os"

// writebackChunk is how many written bytes collect before their writeback
// starts: enough to hand the disk large requests, few enough that the
// fsync at the end of an upload or a part finds at most this much left.
const writebackChunk = 8 << 20

// writeback starts the kernel writing a file's bytes to disk while more of
// them arrive, so that the fsync that makes them durable has little left
// to do and receiving is not stalled for it. It is only a head start:
// durability still comes from that fsync alone, which also reports any
// write error.
type writeback struct {
	f     *os.File // nil when the store runs without fsync
	start int64    // the first byte whose writeback has not started
}

// newWriteback tracks the writeback of f from off, where writing starts.
func (s *Store) newWriteback(f *os.File, off int64) writeback {
	if s.noSync {
		// Nothing will be synced; starting writeback would only cost.
		return writeback{}
	}
	return writeback{f: f, start: off}
}

// wrote notes that the bytes before end are written, starting their
// writeback once a chunk of them has collected.
func (w *writeback) wrote(end int64) {
	if w.f == nil || end-w.start < writebackChunk {
		return
	}
	startWriteback(w.f, w.start, end-w.start)
	w.start = end
}
