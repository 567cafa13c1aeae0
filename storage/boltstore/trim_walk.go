package boltstore

import (
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"
)

// How often a walk (viewWalk) looks at the process's file pages: reading
// them costs a read of /proc/self/statm, a few microseconds. A walk looks
// itself every walkCheckRecords records its scans count (countScan): a
// record it looks up at random faults in a page and its neighbours
// (fault-around), 64 kB. A watcher looks every walkCheckEvery while the
// walk's snapshot lasts, for what the scans do not count (the pages of
// the trees above the records, a bucket read without counting).
const (
	walkCheckRecords = 16
	walkCheckEvery   = time.Millisecond
)

// viewWalk is view for a read transaction that walks much of the database
// in one snapshot: a batch of a check, the recount of the usage counters,
// the name index of a space for a search. bbolt reads through its mapping
// of the file, and every page a walk touches stays resident in this
// process, with its neighbours: a snapshot that reads a whole bucket maps
// all of it, which grows with the database. The trim loop follows the
// starts of transactions and the bytes scans read, and may look too late
// for a walk, or not at all once a long snapshot is the only use. So
// both the walk's scans and a watcher beside it drop the mapping's pages
// whenever the process's file pages grew by the walk's bound since the
// last trim.
//
// The pages are dropped within fn's snapshot, whose read lock keeps the
// mapping where it is (bbolt remaps only under the write side of that
// lock); the watcher has stopped when fn returns.
func (s *Store) viewWalk(fn func(t *txn) error) error {
	return s.view(func(t *txn) error {
		t.walk = &walk{s: s, tx: t.tx}
		stop := t.walk.watch()
		defer stop()
		return fn(t)
	})
}

// walk is the trimming of a txn of viewWalk.
type walk struct {
	s    *Store
	tx   *bolt.Tx
	read int // records read
}

// readRecord counts a record read, and every walkCheckRecords records
// trims the mapping if it grew by the bound. A txn that is no walk has
// a nil walk, which counts nothing.
func (w *walk) readRecord() {
	if w == nil {
		return
	}
	w.read++
	if w.read%walkCheckRecords == 0 {
		w.s.trimWalk(w.tx)
	}
}

// watch starts the watcher of w; stop stops it,
// waits for it and looks a last time, before tx ends: a check reads in
// many snapshots, most of them shorter than walkCheckEvery.
func (w *walk) watch() (stop func()) {
	stopTicks := everyWalkCheck(func() { w.s.trimWalk(w.tx) })
	return func() {
		stopTicks()
		w.s.trimWalk(w.tx)
	}
}

// everyWalkCheck calls fn every walkCheckEvery on a goroutine of its own
// until stop, which waits for it.
func everyWalkCheck(fn func()) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(walkCheckEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fn()
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// trimWalk drops the pages of the mapping that tx sees when the process's
// file pages grew by the walk's bound since the last trim.
func (s *Store) trimWalk(tx *bolt.Tx) {
	if !s.files.grownBy(s.files.walkBound()) {
		return
	}
	if err := dropMapped(s.db.Info().Data, tx.Size()); err != nil {
		s.log.Warn("cannot trim the database mapping", zap.Error(err))
	}
	s.files.reset()
}

// purgeCheckNodes is how often a purge's walk (destroyTreePart) looks at
// the process's file pages, in nodes destroyed: each node is looked up at
// random in several buckets, and after a trim each lookup faults in the
// pages of the trees above the records again, with their neighbours, so
// that a few nodes map a megabyte.
const purgeCheckNodes = 4

// trimWrite drops the pages of the mapping that the write txn t has
// touched when the process's file pages grew by the walk's bound since
// the last trim: a purge's walk maps faster than the trim loop follows.
// The txn's own goroutine trims, so the mapping stays as t sees it; a
// read txn or a store that does not trim (Inspect) is left alone.
func (t *txn) trimWrite() {
	if t.trim == nil || t.trim.store == nil || t.scans == nil {
		return
	}
	t.trim.store.trimWalk(t.tx)
}

// watchMapping starts a watcher that drops the mapping's pages whenever
// the process's file pages grew by the walk's bound, until stop, which
// waits for it. It trims in a read transaction of its own (trimMapping),
// so it may run while a write transaction commits, which the write txn's
// own trims (trimWrite) cannot reach: bbolt's commit rereads the pages
// the transaction changed and those it merges, with no call back.
func (s *Store) watchMapping() (stop func()) {
	if s.scans == nil {
		return func() {}
	}
	return everyWalkCheck(func() {
		if !s.files.grownBy(s.files.walkBound()) {
			return
		}
		if err := s.trimMapping(); err != nil {
			s.log.Warn("cannot trim the database mapping", zap.Error(err))
		}
		s.files.reset()
	})
}
