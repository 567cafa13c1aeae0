package boltstore

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

// mappedKB returns how many kB of the database mapping are resident in
// this process, from /proc/self/smaps (mincore would not do: it reports
// the page cache, which a trim leaves alone).
func (s *Store) mappedKB(t testing.TB) int {
	t.Helper()
	kb := -1
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		kb, err = residentKB(fmt.Sprintf("%x-", s.db.Info().Data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return kb
}

// residentKB returns the Rss of the mapping of /proc/self/smaps whose line
// starts with prefix.
func residentKB(prefix string) (int, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	found := false
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := lines.Text()
		if strings.HasPrefix(line, prefix) {
			found = true
			continue
		}
		if rss, ok := strings.CutPrefix(line, "Rss:"); ok && found {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rss), " kB"))
		}
	}
	if err := lines.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no mapping at %s in /proc/self/smaps", prefix)
}

// writeAndRead fills the fixture's store with n inline files and reads
// them back, which maps all their pages.
func (f *fixture) writeAndRead(t *testing.T, n int) []trimFile {
	t.Helper()
	files := make([]trimFile, n)
	for i := range files {
		node, _, err := f.commit(f.root(), fmt.Sprintf("f%d", i), trimContent(i), storage.Commit{})
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		files[i] = trimFile{id: node.ID, i: i}
	}
	f.readAll(t, files)
	return files
}

// readAll reads files and checks their content.
func (f *fixture) readAll(t *testing.T, files []trimFile) {
	t.Helper()
	for _, file := range files {
		if err := f.checkContent(file); err != nil {
			t.Fatal(err)
		}
	}
}

// touchPages reads every page of the database through the mapping, as
// reading all its records does, but within milliseconds.
func (s *Store) touchPages(t testing.TB) {
	t.Helper()
	err := s.db.View(func(tx *bolt.Tx) error {
		for id := 0; ; id++ {
			if p, err := tx.Page(id); p == nil || err != nil {
				return err
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTrimDropsMappedPages checks that a trim unmaps what reading the
// database mapped, and that the data reads back the same afterwards.
func TestTrimDropsMappedPages(t *testing.T) {
	f := newInlineFixture(t, 0)
	files := f.writeAndRead(t, 1000) // 8 MB of content
	// The store's own trims, every trimInterval while it is used, can
	// empty the mapping between the reads and the measure: on a busy
	// machine reading the records back takes longer than that. The next
	// attempts then map the pages within milliseconds, which fall between
	// two of the store's trims.
	for attempt := 0; ; attempt++ {
		before := f.s.mappedKB(t)
		if before < 4000 && attempt < 10 {
			f.s.touchPages(t)
			continue
		}
		if before < 4000 {
			t.Fatalf("%d kB of the database mapped after reading 8 MB of it, want more", before)
		}
		if err := f.s.trimMapping(); err != nil {
			t.Fatal(err)
		}
		if after := f.s.mappedKB(t); after > before/8 {
			t.Errorf("%d kB of the database mapped after a trim, %d before", after, before)
		}
		break
	}
	f.readAll(t, files)
}

// TestTrimLoop checks that the store trims the mapping by itself once the
// database has been used.
func TestTrimLoop(t *testing.T) {
	f := newInlineFixture(t, 0)
	f.writeAndRead(t, 500)
	before := f.s.mappedKB(t)
	const patience = 20 * trimInterval
	deadline := time.Now().Add(patience)
	for {
		after := f.s.mappedKB(t)
		if after <= before/8 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d kB of the database still mapped %v after use, %d before", after, patience, before)
		}
		time.Sleep(trimInterval / 10)
	}
}
