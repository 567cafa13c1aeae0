package pgstore

import (
	"testing"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/storetest"
)

// BenchmarkRestoreEvent10000 measures restoring 10,000 files deleted one
// by one, as a mass-delete restore does: a RestoreTrash each on four
// workers, and one RestoreTrashBatch; it reports the write transactions
// they committed.
func BenchmarkRestoreEvent10000(b *testing.B) {
	const files = 10_000
	for _, mode := range []string{"one-by-one", "batch"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				opts := checkOpts
				opts.CountWrites = true
				s := openTestStore(b, opts)
				sp := personal(b, s)
				items := deletedOneByOne(b, s, sp.ID, files)
				before := s.commits.Load()
				b.StartTimer()
				var err error
				if mode == "batch" {
					err = storetest.RestoreInBatches(b.Context(), s, sp.ID, items)
				} else {
					err = storetest.RestoreOneByOne(b.Context(), s, sp.ID, items, 4)
				}
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(s.commits.Load()-before), "transactions")
				b.StartTimer()
			}
		})
	}
}

// deletedOneByOne makes files files (bigFolder) and removes each, and
// returns their trash items.
func deletedOneByOne(b *testing.B, s *Store, spaceID string, files int) []storage.TrashItem {
	ctx := b.Context()
	bigFolder(b, s, spaceID, files)
	rows, _ := s.pool.Query(ctx, `SELECT id FROM nodes WHERE id LIKE 'big-%'`)
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if err := s.Remove(ctx, spaceID, id, storage.Conditions{}); err != nil {
			b.Fatal(err)
		}
	}
	items, err := storage.AllTrashItems(ctx, s, spaceID)
	if err != nil || len(items) != files {
		b.Fatalf("%d trash items, %v", len(items), err)
	}
	return items
}
