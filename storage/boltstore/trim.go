package boltstore

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/internal/residency"
)

// When the database mapping is trimmed. Between two trims the process
// maps at most what it touches in the meantime, so the mapped part stays
// bounded by the throughput, not by the size of the database. Each fault
// maps the neighbouring pages too, and writing maps fastest: every
// transaction reads the pages the previous one wrote, so written bytes
// call for a trim before the interval is over. An idle store looks less
// often.
const (
	trimInterval  = 250 * time.Millisecond // a used database is trimmed at least this often
	trimWritten   = 1 << 20                // bytes written that call for a trim at once
	trimBusyCheck = 5 * time.Millisecond   // how often the use is looked at while the database is busy
	trimIdleCheck = trimInterval           // and otherwise
	// trimBusyFor is how long the database counts as busy after it was
	// last seen used: a write transaction's statistics come at its end, and
	// one that moves a big folder into the trash runs for a few hundred
	// milliseconds, mapping pages all along.
	trimBusyFor = time.Second
	// trimGrowth is how much the process's resident file pages may grow
	// after a trim before the next, whatever maps them: the heuristics
	// above follow the database's use, and the pages each use maps grow
	// with the database (a bigger tree spreads a transaction's pages, and
	// each fault maps its neighbours); this bounds the result. Without it
	// the bench's peaks of a big DELETE grew round after round.
	trimGrowth = 16 << 20
	// trimScanned is how many bytes of records scans may read before the
	// mapping is trimmed at once. A scan maps the pages of the records it
	// reads and, as each fault maps its neighbours too, many times more:
	// concurrent listings of big folders map the whole database within one
	// trimInterval. A trim costs the next reads their
	// faults: at 256 kB, every listing of 1,000 entries trimmed the
	// mapping under the next ones, and concurrent listings of such folders
	// were slower than with 2 MB, with which the big listings keep their
	// bounds all the same.
	trimScanned = 2 << 20
	// trimWriteScanned is how many bytes a write txn's scans read between
	// the trims it makes itself (countScan).
	trimWriteScanned = 256 << 10
)

// initialMapSize is the address space the database is mapped with at
// first. When a write transaction grows the file past the mapping, bbolt
// maps it anew and first copies every key and value the transaction has
// read or written to the heap, as they point into the old mapping: a big
// move into the trash allocated more that way than the rest of its memory
// together. Address space
// is not memory: nothing of it is resident before it is read, and the
// trims keep what is read bounded.
const initialMapSize = 1 << 30

// scanMeter counts the bytes of records that scans (listings, the walk of
// a subtree) read through the mapping since the last trim, and asks for a
// trim when they reach trimScanned, so that a long scan or many at once
// keep a bounded part of the database mapped, where the periodic check
// would look too late. A meter of a store that does not trim (Inspect) is
// nil.
type scanMeter struct {
	scanned atomic.Int64
	// due holds a request for a trim; one is enough.
	due chan struct{}
}

func newScanMeter() *scanMeter { return &scanMeter{due: make(chan struct{}, 1)} }

// add counts n bytes read.
func (m *scanMeter) add(n int) {
	if m == nil || m.scanned.Add(int64(n)) < trimScanned {
		return
	}
	select {
	case m.due <- struct{}{}:
	default: // a trim is asked for already
	}
}

// reset starts counting afresh, as a trim begins.
func (m *scanMeter) reset() { m.scanned.Store(0) }

// countScan counts n bytes of records a scan of t read. A write txn trims
// the mapping itself every trimWriteScanned bytes, as the trim loop would not
// keep up, and has it trimmed until it has committed (without its own
// trims, a big DELETE peaked clearly higher in the bench's setup).
func (t *txn) countScan(n int) {
	t.walk.readRecord()
	before := t.scanned
	t.scanned += int64(n)
	if t.trim == nil || t.scans == nil {
		// A read txn leaves it to the trim loop; a store that does not
		// trim (Inspect) has no meter.
		t.scans.add(n)
		return
	}
	if t.scanned/trimWriteScanned == before/trimWriteScanned {
		return
	}
	t.trim.begin()
	// Only this txn remaps the database, in its own goroutine: the
	// mapping stays as the txn sees it while it trims.
	if err := dropMapped(t.trim.store.db.Info().Data, t.tx.Size()); err != nil {
		t.trim.store.log.Warn("cannot trim the database mapping", zap.Error(err))
	}
}

// trimCommitEvery is how often the mapping is trimmed while a write
// transaction that scanned much commits.
const trimCommitEvery = 2 * time.Millisecond

// commitTrim trims the mapping over and over while a big write transaction
// runs and commits: its scans read faster than the trim loop follows, and
// bbolt's commit frees every page the transaction changed, reading
// its header through the mapping, and each fault maps the page's
// neighbours too (fault-around): the commit of a big DELETE maps a large
// part of the database before the trim loop looks again, with no scan to
// count. The zero value trims nothing; end stops what begin started.
type commitTrim struct {
	store *Store
	stop  chan struct{}
	done  chan struct{}
}

// begin starts trimming the store's mapping, once; a store that does not
// trim (Inspect) is left alone.
func (c *commitTrim) begin() {
	s := c.store
	if c.stop != nil || s == nil || s.scans == nil {
		return
	}
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(c.done)
		tick := time.NewTicker(trimCommitEvery)
		defer tick.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-tick.C:
			}
			if err := s.trimMapping(); err != nil {
				s.log.Warn("cannot trim the database mapping", zap.Error(err))
			}
		}
	}()
}

// end stops the trimming and waits for it, once the commit is over, and
// releases what the commit left behind (releaseCommitBuffers).
func (c *commitTrim) end() {
	if c.stop == nil {
		return
	}
	close(c.stop)
	<-c.done
	c.stop = nil
	releaseCommitBuffers()
}

// releaseCommitBuffers frees the page buffers a big commit leaves in
// bbolt's pool and gives their memory back to the system. bbolt writes
// every page of a commit from a buffer of its own and keeps the buffers in
// a sync.Pool, which holds them until two garbage collections have passed;
// until then they count as live, and the collector lets the heap grow to
// twice that: after a big move into the trash, the buffers still live
// made emptying the trash next peak at about twice the heap.
// Two forced collections cost a few milliseconds with the store's small
// heap, paid only by a transaction that scanned enough to trim.
func releaseCommitBuffers() {
	for range 2 {
		debug.FreeOSMemory()
	}
}

// releaseAfterPart gives back to the system what one part of a purge
// allocated and dropped. A database with many free pages has a large
// freelist, which every write transaction merges into a new array and
// every commit writes out from a new buffer; between its cycles the
// collector lets the heap grow to twice what is live, so emptying a trash
// of a million files held some three times its live heap. A forced cycle
// of the store's small heap, most of it the freelist's pointer-free
// arrays, costs little beside the part's commit.
func releaseAfterPart() { debug.FreeOSMemory() }

// trimMapping unmaps from this process the database pages it has touched.
//
// bbolt reads the database through a read-only shared mapping of the file,
// and every page it touches stays in the process's resident set: as small
// files live in the database, that would grow with the data stored. Dropping
// the page-table entries leaves the pages in the page cache, shared and
// clean, so the next access faults them back in from memory and readers
// see the same bytes.
//
// The trim runs in a read transaction: bbolt remaps a growing file only
// under a lock that read transactions hold shared, so the address and the
// size taken here are those of the live mapping for as long as it lasts.
// The size is the database's as the transaction sees it, which it reads
// through the mapping, so the mapping covers it; pages a later commit adds
// beyond it are left to the next trim.
func (s *Store) trimMapping() error {
	err := s.db.View(func(tx *bolt.Tx) error {
		return dropMapped(s.db.Info().Data, tx.Size())
	})
	if err != nil {
		return fmt.Errorf("trim database mapping: %w", err)
	}
	return nil
}

// trimLoop trims the database mapping while the database is used, until
// the store closes. With it, at most every trimInterval, it drops the
// executable's pages (dropExecutable), and once at its first look, after
// the start.
func (s *Store) trimLoop() {
	defer close(s.trimDone)
	check := time.NewTimer(trimIdleCheck)
	defer check.Stop()
	var exe executableDrop
	lastTrim, lastUse := time.Now(), time.Time{}
	atTrim := s.dbUse() // the use at the last trim
	atCheck := atTrim   // and at the last check
	for {
		scanned := false
		select {
		case <-s.closing:
			return
		case <-check.C:
		case <-s.scans.due:
			scanned = true
		}
		if !scanned {
			now := s.dbUse()
			if now.since(atCheck) != (dbUse{}) {
				lastUse = time.Now()
			}
			busy := time.Since(lastUse) < trimBusyFor
			check.Reset(nextTrimCheck(busy))
			atCheck = now
			if !trimDue(now.since(atTrim), time.Since(lastTrim)) && !(busy && s.files.grown()) {
				exe.dropFirst(s)
				continue
			}
		}
		s.scans.reset()
		if err := s.trimMapping(); err != nil {
			s.log.Warn("cannot trim the database mapping", zap.Error(err))
		}
		exe.dropDue(s)
		s.files.reset()
		// The trim's own read transaction is not a use.
		atTrim, lastTrim = s.dbUse(), time.Now()
		atCheck = atTrim
	}
}

// nextTrimCheck returns when to look at the use again: soon while the
// database is busy.
func nextTrimCheck(busy bool) time.Duration {
	if busy {
		return trimBusyCheck
	}
	return trimIdleCheck
}

// fileGrowth follows the process's resident file pages since the last
// trim. Reading them costs a read of /proc/self/statm, a few microseconds;
// where they cannot be read they never grow.
type fileGrowth struct {
	atTrim  atomic.Int64 // bytes resident just after the last trim
	checked atomic.Int64 // when they were last looked at by a transaction (unix nanoseconds)
	// walkLimit, when set, replaces trimGrowth as the growth a walk
	// (viewWalk) allows: a test lowers it to walk a small database.
	walkLimit atomic.Int64
}

// reset takes the resident file pages just after a trim.
func (g *fileGrowth) reset() {
	n, _ := residency.FileResident()
	g.atTrim.Store(n)
}

// grown reports whether they grew by trimGrowth since.
func (g *fileGrowth) grown() bool { return g.grownBy(trimGrowth) }

// grownBy reports whether they grew by n bytes since.
func (g *fileGrowth) grownBy(n int64) bool {
	now, err := residency.FileResident()
	return err == nil && now-g.atTrim.Load() >= n
}

// walkBound is the growth a walk allows: trimGrowth, the bound of the
// whole store, unless a test set walkLimit.
func (g *fileGrowth) walkBound() int64 {
	if n := g.walkLimit.Load(); n > 0 {
		return n
	}
	return trimGrowth
}

// trimGrowthCheckEvery is how often transactions look at the growth.
const trimGrowthCheckEvery = time.Millisecond

// dueForCheck reports whether a transaction that just ended is to look at
// the growth: one in every trimGrowthCheckEvery does.
func (g *fileGrowth) dueForCheck() bool {
	now := time.Now().UnixNano()
	last := g.checked.Load()
	return now-last >= int64(trimGrowthCheckEvery) && g.checked.CompareAndSwap(last, now)
}

// trimIfGrown trims the mapping at once, in the goroutine of a transaction
// that just ended, when the process's file pages grew by trimGrowth since
// the last trim. The trim loop looks every few milliseconds, but on a
// busy node it is one goroutine among many and runs late: with many
// writers or big listings at a time, the pages grew by several times
// trimGrowth before it ran.
func (s *Store) trimIfGrown() {
	if s.scans == nil || !s.files.dueForCheck() || !s.files.grown() {
		return
	}
	if err := s.trimMapping(); err != nil {
		s.log.Warn("cannot trim the database mapping", zap.Error(err))
	}
	s.files.reset()
}

// dbUse counts what was done with the database so far.
type dbUse struct {
	reads   int   // read transactions started
	written int64 // bytes of pages written
}

func (s *Store) dbUse() dbUse {
	st := s.db.Stats()
	return dbUse{reads: st.TxN, written: st.TxStats.GetPageAlloc()}
}

// since returns what was done after prev.
func (u dbUse) since(prev dbUse) dbUse {
	return dbUse{reads: u.reads - prev.reads, written: u.written - prev.written}
}

// trimDue reports whether the mapping is to be trimmed after used, done in
// the time elapsed since the last trim.
func trimDue(used dbUse, elapsed time.Duration) bool {
	switch {
	case used.written >= trimWritten:
		return true
	case used == dbUse{}:
		return false
	default:
		return elapsed >= trimInterval
	}
}

// executableDrop drops the pages of the process's executable from its
// resident set now and then (package residency): the start leaves much
// of Caddy's binary mapped, more than the store's mapping and heap
// together, and the code a workload runs is a fraction of it. The store
// does it because it is what keeps the process's resident set bounded;
// it is the same kind of memory as the database's mapping, clean pages of
// a file that stay in the page cache. A zero executableDrop has not
// dropped anything yet.
type executableDrop struct {
	exe  *residency.Executable
	last time.Time
	// failed is set once a drop failed: the next ones would too.
	failed bool
}

// dropFirst drops the executable's pages if none were dropped yet.
func (d *executableDrop) dropFirst(s *Store) {
	if d.last.IsZero() {
		d.drop(s)
	}
}

// dropDue drops the executable's pages if the last drop is trimInterval
// ago: code in use faults back in, each fault costs a little, and a busy
// store trims its mapping every few milliseconds.
func (d *executableDrop) dropDue(s *Store) {
	if time.Since(d.last) >= trimInterval {
		d.drop(s)
	}
}

func (d *executableDrop) drop(s *Store) {
	d.last = time.Now()
	if d.failed {
		return
	}
	err := d.find()
	if err == nil {
		err = d.exe.Drop()
	}
	if err != nil {
		d.failed = true
		s.log.Warn("cannot drop the executable's pages from memory", zap.Error(err))
	}
}

// find finds the executable's mappings once.
func (d *executableDrop) find() error {
	if d.exe != nil {
		return nil
	}
	exe, err := residency.FindExecutable()
	d.exe = exe
	return err
}
