package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// trashRaceTests pin that a restore and a purge of the same folder item,
// racing, are decided by one of them, whole.
var trashRaceTests = []conformanceTest{
	{"RestoreRacesPurge", testRestoreRacesPurge},
	{"RestoreRacesPurgeOfABigTree", testRestoreRacesPurgeOfABigTree},
}

// Rounds of the restore-against-purge race, and the tree each one deletes.
const (
	restorePurgeRounds = 12
	racedFolders       = 3
	racedFilesEach     = 4
)

// racedTree makes folder name with racedFolders folders of racedFilesEach
// files, each file with a dead property and the first of each folder
// replaced once, and returns the folder, what each file below it holds
// and what the version of each replaced file holds, by id.
func (f *fixture) racedTree(t *testing.T, name string) (top storage.Node, files, versions map[string]string) {
	t.Helper()
	color := prop("urn:x", "color", "", "teal")
	top = f.mkdir(t, f.root(), name)
	files, versions = map[string]string{}, map[string]string{}
	for i := range racedFolders {
		dir := f.mkdir(t, top.ID, fmt.Sprint("d", i))
		for j := range racedFilesEach {
			content := bytesOf(fmt.Sprint(name, i, j), i*racedFilesEach+j+1)
			n := f.put(t, dir.ID, fmt.Sprint("f", j), content)
			if j == 0 {
				versions[n.ID] = content
				content += "-new"
				f.replace(t, n.ID, content)
			}
			f.patch(t, n.ID, set(color))
			files[n.ID] = content
		}
	}
	return f.node(t, top.ID), files, versions
}

// A folder item is restored and purged at once, many times: exactly one
// of the two succeeds, the other finds no item; restored, every file
// below reads back whole with its properties and versions; purged, no
// node of it is left, nor any version; the trash is empty, the usage
// exact and a check finds nothing.
func testRestoreRacesPurge(t *testing.T, f *fixture) {
	color := prop("urn:x", "color", "", "teal")
	for round := range restorePurgeRounds {
		top, files, versions := f.racedTree(t, fmt.Sprint("tree", round))
		f.raceRound(t, round, top, func() {
			for id := range files {
				if _, err := f.s.Node(f.ctx, f.space.ID, id); !errors.Is(err, storage.ErrNotFound) {
					t.Fatalf("round %d: file %s of the purged item: %v", round, id, err)
				}
			}
			f.wantUsage(t, storage.Usage{})
		}, func() {
			for id, content := range files {
				if got := f.read(t, id); got != content {
					t.Fatalf("round %d: restored file %s holds %d bytes, want %d", round, id, len(got), len(content))
				}
				f.wantProps(t, id, color)
			}
			var versionBytes int64
			for id, content := range versions {
				vs := f.versions(t, id)
				if len(vs) != 1 || f.readVersion(t, id, vs[0].Key) != content {
					t.Fatalf("round %d: restored file %s has versions %+v, want one of %d bytes", round, id, vs, len(content))
				}
				versionBytes += int64(len(content))
			}
			f.wantUsage(t, storage.Usage{Files: top.Size, Versions: versionBytes, Props: int64(len(files)) * propBytes(color)})
		})
	}
	f.wantUsage(t, storage.Usage{})
	f.wantChecked(t)
}

// raceRound moves top into the trash and races its restore, as
// "back<round>", against its purge: exactly one succeeds and the other
// finds no item, and the trash is empty either way. Then purged or
// restored looks at the outcome (a restored folder is back whole where it
// went), the store checks clean, and a restored tree goes again, so that
// the next round starts from nothing.
func (f *fixture) raceRound(t *testing.T, round int, top storage.Node, purged, restored func()) {
	t.Helper()
	f.remove(t, top.ID)
	item := f.trashed(t, top.ID)
	restoredTo := fmt.Sprint("back", round)
	restoreErr, purgeErr := f.raceRestorePurge(item.Key, storage.Transfer{NodeID: top.ID, NewParentID: f.root(), NewName: restoredTo})
	won := restoreErr == nil
	if won == (purgeErr == nil) || !won && !errors.Is(restoreErr, storage.ErrNotFound) || won && !errors.Is(purgeErr, storage.ErrNotFound) {
		t.Fatalf("round %d: restore %v, purge %v; want one to succeed and the other to find nothing", round, restoreErr, purgeErr)
	}
	f.wantTrashed(t)
	if !won {
		f.wantGone(t, top)
		purged()
	} else {
		if got, err := f.s.Child(f.ctx, f.space.ID, f.root(), restoredTo); err != nil || got.ID != top.ID || got.Size != top.Size {
			t.Fatalf("round %d: the restored folder = %+v, %v; want %+v", round, got, err, top)
		}
		restored()
	}
	f.wantChecked(t)
	if won {
		f.remove(t, top.ID)
		if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
			t.Fatalf("EmptyTrash: %v", err)
		}
	}
}

// Rounds of the restore-against-purge race of a tree bigger than a part
// of either store's purge (the embedded store's first part destroys 128
// nodes), and the files of the tree: fewer rounds, as the tree takes
// longer to make.
const (
	bigRaceRounds = 3
	bigRacedFiles = 300
)

// A folder item bigger than a part of a purge is restored and purged at
// once: exactly one of the two succeeds and the other finds no item, even
// when the restore would come between two parts of the purge; restored,
// every file is back; purged, none is, the trash is empty, the usage
// exact and a check finds nothing.
func testRestoreRacesPurgeOfABigTree(t *testing.T, f *fixture) {
	for round := range bigRaceRounds {
		tree := f.constantTree(t, fmt.Sprint("big", round), bigRacedFiles)
		top := tree.top
		f.raceRound(t, round, top, func() {
			if _, err := f.s.Node(f.ctx, f.space.ID, tree.needle.ID); !errors.Is(err, storage.ErrNotFound) {
				t.Fatalf("round %d: a file of the purged item: %v", round, err)
			}
			f.wantUsage(t, storage.Usage{})
		}, func() {
			if files := f.filesBelow(t, top.ID); files != bigRacedFiles {
				t.Fatalf("round %d: the restored folder holds %d files, want %d", round, files, bigRacedFiles)
			}
			f.wantUsage(t, storage.Usage{Files: top.Size})
		})
	}
	f.wantUsage(t, storage.Usage{})
	f.wantChecked(t)
}

// filesBelow returns how many files live folder id holds, at any depth.
func (f *fixture) filesBelow(t *testing.T, id string) int {
	t.Helper()
	children, err := f.s.ReadDir(f.ctx, f.space.ID, id, "", bigRacedFiles+1) // no folder holds more
	if err != nil {
		t.Fatalf("ReadDir %s: %v", id, err)
	}
	files := 0
	for _, c := range children {
		if c.IsFolder() {
			files += f.filesBelow(t, c.ID)
		} else {
			files++
		}
	}
	return files
}

// raceRestorePurge starts RestoreTrash and PurgeTrash of item key at
// once and returns what each answered.
func (f *fixture) raceRestorePurge(key string, to storage.Transfer) (restoreErr, purgeErr error) {
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	wg.Go(func() {
		<-start
		_, _, restoreErr = f.s.RestoreTrash(f.ctx, f.space.ID, key, to)
	})
	wg.Go(func() {
		<-start
		purgeErr = f.s.PurgeTrash(f.ctx, f.space.ID, key)
	})
	close(start)
	wg.Wait()
	return restoreErr, purgeErr
}

// wantChecked runs the store's own check, when it has one, and fails on
// any problem it reports.
func (f *fixture) wantChecked(t *testing.T) {
	t.Helper()
	c, ok := f.s.(storage.Checker)
	if !ok {
		return
	}
	var problems []string
	if _, err := c.Check(f.ctx, storage.CheckOptions{}, func(p storage.Problem) {
		problems = append(problems, p.String())
	}); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if len(problems) > 0 {
		t.Fatalf("Check found %d problems: %v", len(problems), problems)
	}
}
