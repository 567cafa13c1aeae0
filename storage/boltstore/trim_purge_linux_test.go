package boltstore

import (
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestEmptyTrashKeepsMappingBounded checks that emptying a trash item of
// many files keeps the part of the database's mapping resident in the
// process bounded: each node the purge destroys is looked up at random in
// several buckets, and each commit rereads the pages it changes, each
// fault mapping the page's neighbours too. The walks' bound is lowered,
// as in TestWalksKeepMappingBounded, so that a small database shows it;
// what the commits map on top is bounded by the pages a part changes.
func TestEmptyTrashKeepsMappingBounded(t *testing.T) {
	const (
		files   = 12000
		boundKB = 1 << 10  // the walks' bound, lowered
		limitKB = 14 << 10 // what may be resident at most: the bound and a commit's pages with their neighbours
	)
	f := newInlineFixture(t, 0)
	keep := f.mkdir(t, f.root(), "keep")
	big := f.mkdir(t, f.root(), "big")
	f.seedInlineFiles(t, keep.ID, files)
	f.seedInlineFiles(t, big.ID, files)
	if err := f.s.Remove(ctx, f.space.ID, big.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	info := f.lowerWalkBound(t, boundKB, limitKB)
	if err := f.s.trimMapping(); err != nil {
		t.Fatal(err)
	}
	stop := f.s.peakMapped(t)
	err := f.s.EmptyTrash(ctx, f.space.ID)
	peak, sampled := stop()
	if err != nil || sampled != nil {
		t.Fatal(err, sampled)
	}
	t.Logf("%d kB of the %d kB database mapped at the peak", peak, info.Size()>>10)
	if peak > limitKB {
		t.Errorf("%d kB of the database mapped at the peak of the emptying, of %d kB in all, want at most %d", peak, info.Size()>>10, limitKB)
	}
	if items, _ := storage.AllTrashItems(ctx, f.s, f.space.ID); len(items) != 0 {
		t.Fatalf("trash after emptying: %v", items)
	}
	if problems, _ := runCheck(t, f.s, storage.CheckOptions{}); len(problems) > 0 {
		t.Errorf("the check after emptying: %d problems, the first %v", len(problems), problems[0])
	}
}
