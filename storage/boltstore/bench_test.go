package boltstore

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// seedFiles adds n file records below parent in one transaction, shaped like
// committed files (checksums, content type, blob id) but without content,
// which listing never touches.
func (f *fixture) seedFiles(t testing.TB, parent string, n int) {
	t.Helper()
	err := f.s.update(func(tx *txn) error {
		for i := range n {
			w := checksum.NewWriter()
			fmt.Fprint(w, i)
			r := rec{Node: storage.Node{
				ID:          uuid.NewString(),
				SpaceID:     f.space.ID,
				ParentID:    parent,
				Name:        fmt.Sprintf("file-%05d.txt", i),
				Kind:        storage.KindFile,
				Size:        int64(1000 + i),
				ModTime:     tx.now,
				ContentType: "text/plain",
				Checksums:   w.Sums(),
			}, Blob: newBlobID()}
			r.ETag = tx.etag(r.ID)
			if err := tx.placeNode(&r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadDir10000IsFast(t *testing.T) {
	f := newFixture(t)
	dir := f.mkdir(t, f.root(), "big")
	f.seedFiles(t, dir.ID, 10000)
	best := time.Hour
	for range 3 {
		start := time.Now()
		nodes, err := f.s.ReadDir(ctx, f.space.ID, dir.ID, "", 0)
		took := time.Since(start)
		if err != nil || len(nodes) != 10000 {
			t.Fatalf("ReadDir = %d, %v", len(nodes), err)
		}
		best = min(best, took)
	}
	t.Logf("ReadDir of 10,000 children: %v", best)
	if !raceEnabled && best > 100*time.Millisecond {
		t.Fatalf("ReadDir of 10,000 children took %v", best)
	}
}

func BenchmarkReadDir10000(b *testing.B) {
	f := newFixture(b)
	dir := f.mkdir(b, f.root(), "big")
	f.seedFiles(b, dir.ID, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		after, total := "", 0
		for {
			page, err := f.s.ReadDir(ctx, f.space.ID, dir.ID, after, 1000)
			if err != nil {
				b.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			total += len(page)
			after = page[len(page)-1].Name
		}
		if total != 10000 {
			b.Fatalf("listed %d", total)
		}
	}
}

// BenchmarkRemoveFolder10000 removes a folder of 10,000 files (records
// only: their content files do not exist) into the trash.
func BenchmarkRemoveFolder10000(b *testing.B) {
	benchmarkRemoveFolder10000(b, newFixture(b))
}

// BenchmarkRemoveFolder10000NoTrash removes a folder of 10,000 files in a
// store that keeps no trash: it destroys them, as every remove did before
// the trash.
func BenchmarkRemoveFolder10000NoTrash(b *testing.B) {
	f := newFixture(b)
	f.keepNoUndo()
	benchmarkRemoveFolder10000(b, f)
}

// BenchmarkPurgeFolder10000 purges a trash item of a folder of 10,000
// files: what a remove cost before the trash, now paid when the trash is
// emptied.
func BenchmarkPurgeFolder10000(b *testing.B) {
	f := newFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		dir := f.mkdir(b, f.root(), "big")
		f.seedFiles(b, dir.ID, 10000)
		if err := f.s.Remove(ctx, f.space.ID, dir.ID, storage.Conditions{}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := f.s.EmptyTrash(ctx, f.space.ID); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkRemoveFolder10000(b *testing.B, f *fixture) {
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		dir := f.mkdir(b, f.root(), "big")
		f.seedFiles(b, dir.ID, 10000)
		b.StartTimer()
		if err := f.s.Remove(ctx, f.space.ID, dir.ID, storage.Conditions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSmallCommit commits 4 KiB files one after another, each in a
// content file of its own (the fixture keeps no file inline).
func BenchmarkSmallCommit(b *testing.B) {
	f := newFixture(b)
	dir := f.mkdir(b, f.root(), "dir")
	data := bytes.Repeat([]byte("0123456789abcdef"), 256) // 4 KiB
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		u, err := f.s.NewUpload(ctx, f.space.ID)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := u.Write(data); err != nil {
			b.Fatal(err)
		}
		if _, _, err := u.Commit(ctx, storage.Commit{ParentID: dir.ID, Name: fmt.Sprint("f", i)}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSmallCommitClients commits durable 4 KiB files, kept inline as
// by default, from 1 and 16 concurrent writers: one bolt commit per file
// alone, shared commits together. page-writes/op is how many page writes
// (pwrite calls) of bolt commits a file cost.
func BenchmarkSmallCommitClients(b *testing.B) {
	for _, clients := range []int{1, 16} {
		b.Run(fmt.Sprint("clients=", clients), func(b *testing.B) {
			f := newInlineFixture(b, 0)
			dir := f.mkdir(b, f.root(), "dir")
			data := bytes.Repeat([]byte("0123456789abcdef"), 256)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			before := pageWrites(f.s)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range clients {
				wg.Go(func() {
					for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
						if err := commitSmall(f, dir.ID, fmt.Sprint("f", i), data); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "files/s")
			b.ReportMetric(float64(pageWrites(f.s)-before)/float64(b.N), "page-writes/op")
		})
	}
}

// commitSmall uploads data as name in parent.
func commitSmall(f *fixture, parent, name string, data []byte) error {
	u, err := f.s.NewUpload(ctx, f.space.ID)
	if err != nil {
		return err
	}
	defer u.Discard()
	if _, err := u.Write(data); err != nil {
		return err
	}
	_, _, err = u.Commit(ctx, storage.Commit{ParentID: parent, Name: name})
	return err
}

// pageWrites is how many page writes bolt has made so far.
func pageWrites(s *Store) int64 {
	st := s.db.Stats()
	return st.TxStats.GetWrite()
}

// BenchmarkRequestLookups measures the read transactions every request
// makes before it does its work: its space, the path walk, a node, the
// locks on it. Each is one transaction touching one or two buckets, so
// allocs/op is mostly the cost of a transaction and the buckets it opens.
func BenchmarkRequestLookups(b *testing.B) {
	f := newFixture(b)
	dir := f.mkdir(b, f.mkdir(b, f.root(), "a").ID, "b")
	file := f.put(b, dir.ID, "c.txt", "content")
	user := storage.User{ID: "einstein", DisplayName: "Albert Einstein"}
	for _, bc := range []struct {
		name   string
		lookup func() error
	}{
		{"PersonalSpace", func() error { _, err := f.s.PersonalSpace(ctx, user); return err }},
		{"Space", func() error { _, err := f.s.Space(ctx, f.space.ID); return err }},
		{"Walk", func() error {
			_, err := f.s.Walk(ctx, f.space.ID, f.root(), []string{"a", "b", "c.txt"})
			return err
		}},
		{"Node", func() error { _, err := f.s.Node(ctx, f.space.ID, file.ID); return err }},
		{"LocksOn", func() error { _, err := f.s.LocksOn(ctx, f.space.ID, file.ID, false); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.lookup(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
