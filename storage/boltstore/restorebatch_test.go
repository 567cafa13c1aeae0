package boltstore

import (
	"testing"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/storetest"
)

// eventFiles is the size of the mass-delete event the restore benchmark
// brings back.
const eventFiles = 10_000

// BenchmarkRestoreEvent10000 measures restoring 10,000 files deleted one
// by one, as a mass-delete restore does: a RestoreTrash each on four
// workers, and one RestoreTrashBatch; it reports the write transactions
// they committed.
func BenchmarkRestoreEvent10000(b *testing.B) {
	for _, mode := range []string{"one-by-one", "batch"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				f := newFixture(b)
				items := f.deletedOneByOne(b, eventFiles)
				before := f.s.WriteCommits()
				b.StartTimer()
				var err error
				if mode == "batch" {
					err = storetest.RestoreInBatches(ctx, f.s, f.space.ID, items)
				} else {
					err = storetest.RestoreOneByOne(ctx, f.s, f.space.ID, items, 4)
				}
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(f.s.WriteCommits()-before), "transactions")
				b.StartTimer()
			}
		})
	}
}

// deletedOneByOne seeds n files in a folder and removes each, and returns
// their trash items.
func (f *fixture) deletedOneByOne(b *testing.B, n int) []storage.TrashItem {
	dir := f.mkdir(b, f.root(), "event")
	f.seedFiles(b, dir.ID, n)
	nodes, err := f.s.ReadDir(ctx, f.space.ID, dir.ID, "", 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range nodes {
		if err := f.s.Remove(ctx, f.space.ID, n.ID, storage.Conditions{}); err != nil {
			b.Fatal(err)
		}
	}
	items, err := storage.AllTrashItems(ctx, f.s, f.space.ID)
	if err != nil || len(items) != n {
		b.Fatalf("%d trash items, %v", len(items), err)
	}
	return items
}
