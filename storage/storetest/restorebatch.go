package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// restoreBatchTests are the conformance tests of restoring many trash
// items at once (storage.TrashBatchRestorer).
var restoreBatchTests = []conformanceTest{
	{"RestoreTrashBatch", testRestoreTrashBatch},
}

// restoreBatchFiles is more than one transaction's share of a batch.
const restoreBatchFiles = storage.RestoreBatchItems + 50

// A batch restores its files where they were deleted from, with their
// ids, across transactions; a restore refused (its place taken, its item
// gone) comes back with its error and keeps neither the others from
// going back nor anything of itself.
func testRestoreTrashBatch(t *testing.T, f *fixture) {
	br, ok := f.s.(storage.TrashBatchRestorer)
	if !ok {
		t.Skip("the store restores trash items one at a time")
	}
	folder := f.mkdir(t, f.root(), "folder")
	var files []storage.Node
	for i := range restoreBatchFiles {
		files = append(files, f.put(t, folder.ID, fmt.Sprintf("file-%03d", i), "x"))
	}
	for _, n := range files {
		f.remove(t, n.ID)
	}
	taken := f.mkdir(t, folder.ID, files[7].Name) // a folder took its place
	var restores []storage.TrashRestore
	for _, n := range files {
		it := f.trashed(t, n.ID)
		restores = append(restores, storage.TrashRestore{Key: it.Key, NodeID: n.ID, ParentID: folder.ID, Name: n.Name})
	}
	gone := storage.TrashRestore{Key: storage.TrashKey(time.Now(), "no-such-node"), NodeID: "no-such-node",
		ParentID: folder.ID, Name: "gone"}
	restores = append(restores, gone)

	outcomes, done, err := br.RestoreTrashBatch(f.ctx, f.space.ID, restores)
	if err != nil || done != len(restores) || len(outcomes) != len(restores) {
		t.Fatalf("RestoreTrashBatch = %d outcomes, %d done, %v; want %d, all done", len(outcomes), done, err, len(restores))
	}
	for i, n := range files {
		switch {
		case i == 7:
			if !errors.Is(outcomes[i], storage.ErrExists) {
				t.Errorf("restore onto the folder that took its place: %v; want ErrExists", outcomes[i])
			}
		case outcomes[i] != nil:
			t.Errorf("restore of %s: %v", n.Name, outcomes[i])
		default:
			got := f.node(t, n.ID)
			if got.ParentID != folder.ID || got.Name != n.Name {
				t.Errorf("%s came back as %q in %s", n.ID, got.Name, got.ParentID)
			}
		}
	}
	if last := outcomes[len(outcomes)-1]; !errors.Is(last, storage.ErrNotFound) {
		t.Errorf("restore of an item not in the trash: %v; want ErrNotFound", last)
	}
	f.wantTrashed(t, files[7].ID)
	if got := f.node(t, taken.ID); !got.IsFolder() {
		t.Errorf("the folder in the way became %+v", got)
	}
	if got := f.node(t, folder.ID); got.Size != int64(len(files)-1) {
		t.Errorf("folder holds %d bytes; want %d", got.Size, len(files)-1)
	}
}

// RestoreOneByOne restores items of space spaceID where they were deleted
// from, one RestoreTrash each on workers workers side by side, as a
// mass-delete restore did before batches: for benchmarks.
func RestoreOneByOne(ctx context.Context, s storage.Trash, spaceID string, items []storage.TrashItem, workers int) error {
	jobs := make(chan storage.TrashItem)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for it := range jobs {
				t := storage.Transfer{NodeID: it.Node.ID, NewParentID: it.Node.ParentID, NewName: it.Node.Name}
				if _, _, err := s.RestoreTrash(ctx, spaceID, it.Key, t); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for _, it := range items {
		jobs <- it
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// RestoreInBatches restores items of space spaceID where they were
// deleted from with one RestoreTrashBatch: for benchmarks.
func RestoreInBatches(ctx context.Context, s storage.TrashBatchRestorer, spaceID string, items []storage.TrashItem) error {
	restores := make([]storage.TrashRestore, len(items))
	for i, it := range items {
		restores[i] = storage.TrashRestore{Key: it.Key, NodeID: it.Node.ID, ParentID: it.Node.ParentID, Name: it.Node.Name}
	}
	outcomes, _, err := s.RestoreTrashBatch(ctx, spaceID, restores)
	if err != nil {
		return err
	}
	return errors.Join(outcomes...)
}
