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
	// busy holds a token while a writeback runs. Starting one can block
	// while the disk's queue is full; it runs on its own goroutine so
	// that receiving and hashing go on meanwhile, and one at a time, so
	// that a slow disk costs one waiting thread, not one per chunk.
	busy chan struct{}
}

// newWriteback tracks the writeback of f from off, where writing starts.
func (s *Store) newWriteback(f *os.File, off int64) writeback {
	if s.noSync {
		// Nothing will be synced; starting writeback would only cost.
		return writeback{}
	}
	return writeback{f: f, start: off, busy: make(chan struct{}, 1)}
}

// wrote notes that the bytes before end are written, starting their
// writeback once a chunk of them has collected and the last one started
// has returned; until then the bytes keep collecting.
func (w *writeback) wrote(end int64) {
	if w.f == nil || end-w.start < writebackChunk {
		return
	}
	select {
	case w.busy <- struct{}{}:
	default:
		return
	}
	busy := w.busy
	go func(f *os.File, off, n int64) {
		defer func() { <-busy }()
		// The file may be closed by now (committed or discarded); the
		// call then fails harmlessly, as it holds the descriptor while it
		// runs.
		startWriteback(f, off, n)
	}(w.f, w.start, end-w.start)
	w.start = end
}
