package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// undoRaceTests pin that removes, restores and purges racing each other
// keep every node in exactly one place and the usage exact.
var undoRaceTests = []conformanceTest{
	{"TrashRaces", testTrashRaces},
	{"TrashItemRaces", testTrashItemRaces},
}

// Bounds of the races: each worker does a fixed number of operations.
const (
	raceFiles   = 12
	raceWorkers = 4
	raceOps     = 30
	itemRounds  = 8
)

// Removes, restores and purges of the same files race; afterwards each
// file is live, in the trash, or purged, never two of these, and the usage
// equals a recount.
func testTrashRaces(t *testing.T, f *fixture) {
	color := prop("urn:x", "color", "", "orange")
	files := make([]storage.Node, raceFiles)
	for i := range files {
		files[i] = f.put(t, f.root(), fmt.Sprint("f", i), bytesOf("x", i+1))
		f.patch(t, files[i].ID, set(color))
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for w := range raceWorkers {
		wg.Go(func() {
			for op := range raceOps {
				file := files[(w*7+op*5)%raceFiles]
				if err := f.raceStep((w+op)%3, file); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("racing removes, restores and purges: %v", errs)
	}

	var (
		want      storage.Usage
		liveProps int64
	)
	trashed := map[string]storage.TrashItem{}
	for _, it := range f.trash(t) {
		if _, twice := trashed[it.Node.ID]; twice {
			t.Fatalf("node %s is in the trash twice", it.Node.ID)
		}
		trashed[it.Node.ID] = it
		want.Trash += it.Node.Size
		want.Props += propBytes(color)
	}
	for _, file := range files {
		_, inTrash := trashed[file.ID]
		n, err := f.s.Node(f.ctx, f.space.ID, file.ID)
		switch {
		case err == nil && inTrash:
			t.Fatalf("file %q is live and in the trash", file.Name)
		case err == nil:
			if n.Name != file.Name || f.read(t, file.ID) != bytesOf("x", int(file.Size)) {
				t.Fatalf("live file %+v, was %+v", n, file)
			}
			f.wantProps(t, file.ID, color)
			want.Files += file.Size
			liveProps += propBytes(color)
		case !errors.Is(err, storage.ErrNotFound):
			t.Fatalf("Node %s: %v", file.ID, err)
		}
	}
	want.Props += liveProps
	f.wantUsage(t, want)
	if root := f.node(t, f.root()); root.Size != want.Files {
		t.Fatalf("root size %d, the live files hold %d", root.Size, want.Files)
	}
	if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
		t.Fatalf("EmptyTrash: %v", err)
	}
	f.wantUsage(t, storage.Usage{Files: want.Files, Props: liveProps})
}

// raceStep removes file (step 0), restores it from the trash to where it
// was (1) or purges its trash item (2). What a racing step did first is
// no failure: ErrNotFound (gone meanwhile) and ErrExists (its place taken
// meanwhile) are expected.
func (f *fixture) raceStep(step int, file storage.Node) error {
	var err error
	switch step {
	case 0:
		err = f.s.Remove(f.ctx, f.space.ID, file.ID, storage.Conditions{})
	case 1, 2:
		it, ok, lookErr := f.itemOf(file.ID)
		if lookErr != nil || !ok {
			return lookErr
		}
		if step == 1 {
			_, _, err = f.s.RestoreTrash(f.ctx, f.space.ID, it.Key,
				storage.Transfer{NodeID: file.ID, NewParentID: file.ParentID, NewName: file.Name})
		} else {
			err = f.s.PurgeTrash(f.ctx, f.space.ID, it.Key)
		}
	}
	if err != nil && !errorsAre(err, storage.ErrNotFound, storage.ErrExists) {
		return fmt.Errorf("step %d on %q: %w", step, file.Name, err)
	}
	return nil
}

// itemOf returns the trash item of node id, if there is one.
func (f *fixture) itemOf(id string) (storage.TrashItem, bool, error) {
	items, err := f.s.TrashItems(f.ctx, f.space.ID)
	if err != nil {
		return storage.TrashItem{}, false, fmt.Errorf("TrashItems: %w", err)
	}
	for _, it := range items {
		if it.Node.ID == id {
			return it, true, nil
		}
	}
	return storage.TrashItem{}, false, nil
}

// Restores of one item to different names and purges of it race: exactly
// one of them happens, and the node is where that one put it.
func testTrashItemRaces(t *testing.T, f *fixture) {
	for round := range itemRounds {
		file := f.put(t, f.root(), fmt.Sprint("raced", round), "raced")
		f.remove(t, file.ID)
		it := f.trashed(t, file.ID)
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			restored []storage.Node
			purged   int
			errs     []error
		)
		for w := range raceWorkers {
			wg.Go(func() {
				var (
					n   storage.Node
					err error
				)
				if w%2 == 0 {
					n, _, err = f.s.RestoreTrash(f.ctx, f.space.ID, it.Key,
						storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: fmt.Sprint("restored", round, "-", w)})
				} else {
					err = f.s.PurgeTrash(f.ctx, f.space.ID, it.Key)
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && w%2 == 0:
					restored = append(restored, n)
				case err == nil:
					purged++
				case !errors.Is(err, storage.ErrNotFound):
					errs = append(errs, err)
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 || len(restored)+purged != 1 {
			t.Fatalf("round %d: %d restores and %d purges of one item succeeded, errors %v; want one", round, len(restored), purged, errs)
		}
		f.wantTrashed(t)
		if purged == 1 {
			f.wantGone(t, file)
			continue
		}
		if got, err := f.s.Child(f.ctx, f.space.ID, f.root(), restored[0].Name); err != nil || got.ID != file.ID {
			t.Fatalf("round %d: the restored file at %q = %+v, %v", round, restored[0].Name, got, err)
		}
		f.remove(t, file.ID)
		if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
			t.Fatalf("EmptyTrash: %v", err)
		}
	}
	f.wantUsage(t, storage.Usage{})
}
