package boltstore

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// trimContent is the content of the i-th file of a trim test: inline, and
// different for every file.
func trimContent(i int) string {
	return strings.Repeat(fmt.Sprintf("%07d,", i), 1000)
}

// trimFile is a file a trim test wrote: its node id and its number.
type trimFile struct {
	id string
	i  int
}

// writtenFiles is the list of files written so far, shared by the writers
// and readers of a test.
type writtenFiles struct {
	mu    sync.Mutex
	files []trimFile
}

func (w *writtenFiles) add(f trimFile) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.files = append(w.files, f)
}

// pick returns the k-th file modulo those written, and false if none is.
func (w *writtenFiles) pick(k int) (trimFile, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.files) == 0 {
		return trimFile{}, false
	}
	return w.files[k%len(w.files)], true
}

// readContent returns the content of file id of the fixture's space.
func (f *fixture) readContent(id string) (string, error) {
	_, c, err := f.s.Open(ctx, f.space.ID, id)
	if err != nil {
		return "", err
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	return string(b), err
}

// checkContent reads file and compares it with what was written.
func (f *fixture) checkContent(file trimFile) error {
	got, err := f.readContent(file.id)
	if err != nil {
		return fmt.Errorf("read file %d: %w", file.i, err)
	}
	if got != trimContent(file.i) {
		return fmt.Errorf("file %d: read %d bytes that differ from the %d written", file.i, len(got), len(trimContent(file.i)))
	}
	return nil
}

// TestTrimUnderLoad trims the mapping without pause while writers grow the
// database (bbolt remaps it as it grows) and readers read what was written:
// a trim against a stale mapping would fail, crash or corrupt what they
// read.
func TestTrimUnderLoad(t *testing.T) {
	f := newInlineFixture(t, 0)
	const writers, perWriter = 4, 150
	var written writtenFiles
	var load, trims sync.WaitGroup
	stop := make(chan struct{})

	trims.Add(1)
	go func() {
		defer trims.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := f.s.trimMapping(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for w := range writers {
		done := make(chan struct{})
		load.Add(2)
		go func() {
			defer load.Done()
			defer close(done)
			for j := range perWriter {
				i := w*perWriter + j
				n, _, err := f.commit(f.root(), fmt.Sprintf("f%d", i), trimContent(i), storage.Commit{})
				if err != nil {
					t.Errorf("put %d: %v", i, err)
					return
				}
				written.add(trimFile{id: n.ID, i: i})
			}
		}()
		go func() {
			defer load.Done()
			for k := w; ; k += 7 {
				select {
				case <-done:
					return
				default:
				}
				file, ok := written.pick(k)
				if !ok {
					continue
				}
				if err := f.checkContent(file); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	load.Wait()
	close(stop)
	trims.Wait()

	if len(written.files) != writers*perWriter {
		t.Fatalf("%d files written, want %d", len(written.files), writers*perWriter)
	}
	for _, file := range written.files {
		if err := f.checkContent(file); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTrimDue(t *testing.T) {
	tests := []struct {
		name    string
		used    dbUse
		elapsed time.Duration
		want    bool
	}{
		{"unused", dbUse{}, time.Hour, false},
		{"read within the interval", dbUse{reads: 100}, trimInterval / 2, false},
		{"read for an interval", dbUse{reads: 1}, trimInterval, true},
		{"written a little within the interval", dbUse{written: trimWritten - 1}, trimInterval / 2, false},
		{"written a little for an interval", dbUse{written: 4096}, trimInterval, true},
		{"written much at once", dbUse{written: trimWritten}, trimBusyCheck, true},
	}
	for _, tt := range tests {
		if got := trimDue(tt.used, tt.elapsed); got != tt.want {
			t.Errorf("%s: trimDue(%+v, %v) = %v, want %v", tt.name, tt.used, tt.elapsed, got, tt.want)
		}
	}
}

func TestNextTrimCheck(t *testing.T) {
	if got := nextTrimCheck(true); got != trimBusyCheck {
		t.Errorf("busy: next check in %v, want %v", got, trimBusyCheck)
	}
	if got := nextTrimCheck(false); got != trimIdleCheck {
		t.Errorf("idle: next check in %v, want %v", got, trimIdleCheck)
	}
}

// TestScanMeterAsksForTrim checks that scans ask for a trim once they have
// read trimScanned bytes, once however many more they read, and again after
// the trim.
func TestScanMeterAsksForTrim(t *testing.T) {
	m := newScanMeter()
	m.add(trimScanned - 1)
	if len(m.due) != 0 {
		t.Fatal("a trim asked for before trimScanned bytes were read")
	}
	m.add(1)
	m.add(trimScanned)
	if len(m.due) != 1 {
		t.Fatalf("%d trims asked for after 2×trimScanned bytes, want 1", len(m.due))
	}
	<-m.due
	m.reset()
	m.add(trimScanned / 2)
	if len(m.due) != 0 {
		t.Fatal("a trim asked for after a reset and trimScanned/2 bytes")
	}
	var none *scanMeter // a store that does not trim
	none.add(2 * trimScanned)
}

// TestListingCountsScans checks that a listing counts what it reads.
func TestListingCountsScans(t *testing.T) {
	f := newFixture(t)
	dir := f.mkdir(t, f.root(), "big")
	f.seedFiles(t, dir.ID, 2000)
	meter := newScanMeter()
	err := f.s.view(func(tx *txn) error {
		tx.scans = meter
		return tx.readDir(f.space.ID, dir.ID, "", 0, func(rec) error { return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := meter.scanned.Load(); got < 2000*100 {
		t.Errorf("a listing of 2,000 records counted %d bytes", got)
	}
}

// TestBigWriteTrimsUntilCommitted checks that a write txn that scans more
// than trimWriteScanned starts trimming the mapping, which its end stops, and
// that a small one does not.
func TestBigWriteTrimsUntilCommitted(t *testing.T) {
	f := newFixture(t)
	big := f.mkdir(t, f.root(), "big")
	f.seedFiles(t, big.ID, 3000)
	small := f.mkdir(t, f.root(), "small")
	f.seedFiles(t, small.ID, 10)
	for _, c := range []struct {
		folder storage.Node
		trims  bool
	}{{big, true}, {small, false}} {
		var trim commitTrim
		var left leftovers
		err := f.s.db.Update(f.s.writeTxn(func(tx *txn) error {
			return tx.rewriteChildren(c.folder.ID)
		}, &left, &trim))
		if err != nil {
			t.Fatal(err)
		}
		if began := trim.stop != nil; began != c.trims {
			t.Errorf("rewriting %s: trimming began %v, want %v", c.folder.Name, began, c.trims)
		}
		done := trim.done
		trim.end()
		if done != nil {
			select {
			case <-done:
			default:
				t.Errorf("rewriting %s: trimming goes on after end", c.folder.Name)
			}
		}
	}
}

// rewriteChildren rewrites the record of every child of folder id in
// place: a write txn that scans as much as it writes.
func (t *txn) rewriteChildren(id string) error {
	for after := ""; ; {
		child, ok, err := t.childAfter(id, after)
		if err != nil || !ok {
			return err
		}
		after = child.Name
		if err := t.putNode(&child); err != nil {
			return err
		}
	}
}
