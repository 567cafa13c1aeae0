package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// undoRaceTests pin that removes, restores and purges racing each other
// keep every node in exactly one place and the usage exact.
var undoRaceTests = []conformanceTest{
	{"TrashRaces", testTrashRaces},
	{"TrashItemRaces", testTrashItemRaces},
	{"VersionRaces", testVersionRaces},
	{"VersionRestoreRaces", testVersionRestoreRaces},
	{"RecreateRaces", testRecreateRaces},
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
	items, err := storage.AllTrashItems(f.ctx, f.s, f.space.ID)
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

// raceCommits commits content(w) to c from raceWorkers goroutines at once
// and returns what each commit answered, by worker.
func (f *fixture) raceCommits(c storage.Commit, content func(w int) string) ([]storage.Node, []bool, []error) {
	var (
		wg      sync.WaitGroup
		nodes   = make([]storage.Node, raceWorkers)
		created = make([]bool, raceWorkers)
		errs    = make([]error, raceWorkers)
	)
	for w := range raceWorkers {
		wg.Go(func() {
			nodes[w], created[w], errs[w] = f.commit(f.space.ID, content(w), c)
		})
	}
	wg.Wait()
	return nodes, created, errs
}

// wantHistory checks that file id holds one of contents and its versions
// the others, each once, and that usage counts each once.
func (f *fixture) wantHistory(t *testing.T, id string, contents []string) {
	t.Helper()
	current := f.read(t, id)
	held := []string{current}
	var versions int64
	for _, v := range f.versions(t, id) {
		held = append(held, f.readVersion(t, id, v.Key))
		versions += v.Node.Size
	}
	slices.Sort(held)
	want := slices.Clone(contents)
	slices.Sort(want)
	if !slices.Equal(held, want) {
		t.Fatalf("file and versions hold %q, want each of %q once", held, want)
	}
	f.wantUsage(t, storage.Usage{Files: int64(len(current)), Versions: versions})
}

// Replacements of one file racing each other keep every replaced content
// as a version, once.
func testVersionRaces(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "initial")
	contents := []string{"initial"}
	for round := range 3 {
		content := func(w int) string { return fmt.Sprintf("round %d, writer %d", round, w) }
		_, _, errs := f.raceCommits(storage.Commit{NodeID: file.ID}, content)
		for w, err := range errs {
			if err != nil {
				t.Fatalf("a racing replacement: %v", err)
			}
			contents = append(contents, content(w))
		}
	}
	f.wantHistory(t, file.ID, contents)
}

// Restores of one version racing each other: one restores it, the others
// find it gone, and nothing is kept twice.
func testVersionRestoreRaces(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "v1")
	f.tick()
	f.replace(t, file.ID, "v2")
	f.tick()
	f.replace(t, file.ID, "v3")
	vs := f.wantVersions(t, file.ID, "v2", "v1")
	restored, errs := race(raceWorkers, storage.ErrNotFound, func(int) error {
		_, err := f.s.RestoreVersion(f.ctx, f.space.ID, file.ID, vs[1].Key, storage.Conditions{})
		return err
	})
	if len(restored) != 1 || len(errs) > 0 {
		t.Fatalf("%d of %d racing restores of one version succeeded, errors %v; want 1", len(restored), raceWorkers, errs)
	}
	if got := f.read(t, file.ID); got != "v1" {
		t.Fatalf("content after the restore %q", got)
	}
	f.wantHistory(t, file.ID, []string{"v1", "v2", "v3"})
}

// Files created at once where one was deleted: one of them takes the
// deleted file back, the others replace it; every content is kept once.
func testRecreateRaces(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "deleted")
	f.remove(t, file.ID)
	content := func(w int) string { return fmt.Sprint("writer ", w) }
	nodes, created, errs := f.raceCommits(storage.Commit{ParentID: f.root(), Name: "f"}, content)
	creations := 0
	contents := []string{"deleted"}
	for w := range raceWorkers {
		if errs[w] != nil || nodes[w].ID != file.ID {
			t.Fatalf("a racing creation = %+v, %v; want the deleted file %s back", nodes[w], errs[w], file.ID)
		}
		if created[w] {
			creations++
		}
		contents = append(contents, content(w))
	}
	if creations != 1 {
		t.Fatalf("%d of %d racing commits created the file, want 1", creations, raceWorkers)
	}
	f.wantTrashed(t)
	f.wantHistory(t, file.ID, contents)
}
