package boltstore

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// sourceTree makes folder "src" with files f0…f(n-1) (one in a subfolder)
// and returns it.
func (f *fixture) sourceTree(t testing.TB, n int) storage.Node {
	t.Helper()
	src := f.mkdir(t, f.root(), "src")
	sub := f.mkdir(t, src.ID, "sub")
	for i := range n {
		parent := src.ID
		if i == n-1 {
			parent = sub.ID
		}
		f.put(t, parent, fmt.Sprint("f", i), fmt.Sprint("content ", i))
	}
	return src
}

// commitIn uploads content as name in the root of another space.
func (f *fixture) commitIn(spaceID, name, content string) error {
	u, err := f.s.NewUpload(ctx, spaceID)
	if err != nil {
		return err
	}
	defer u.Discard()
	if _, err := io.Copy(u, strings.NewReader(content)); err != nil {
		return err
	}
	_, _, err = u.Commit(ctx, storage.Commit{ParentID: spaceID, Name: name})
	return err
}

// The file work of a COPY happens before its transaction: a writer in
// another space commits while the copy is still linking files.
func TestCopyDoesNotBlockWriters(t *testing.T) {
	f := newFixture(t)
	src := f.sourceTree(t, 3)
	other, err := f.s.PutSpace(ctx, storage.Space{ID: "other", Quota: storage.NoQuota})
	if err != nil {
		t.Fatal(err)
	}
	linking, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.s.link = func(oldname, newname string) error {
		once.Do(func() {
			close(linking)
			<-release
		})
		return os.Link(oldname, newname)
	}
	copied := make(chan error, 1)
	go func() {
		_, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: src.ID, NewParentID: f.root(), NewName: "copy"})
		copied <- err
	}()
	<-linking
	put := make(chan error, 1)
	go func() { put <- f.commitIn(other.ID, "during-copy", "x") }()
	select {
	case err := <-put:
		wantErr(t, err, nil)
	case <-time.After(10 * time.Second):
		close(release)
		<-put
		<-copied
		t.Fatal("a commit in another space waited for the copy's file work")
	}
	close(release)
	wantErr(t, <-copied, nil)
	if names := f.names(t, mustChild(t, f, f.root(), "copy").ID); !slices.Equal(names, []string{"f0", "f1", "sub"}) {
		t.Fatalf("copy has %v", names)
	}
}

// A cancelled COPY stops between files and leaves nothing behind.
func TestCopyCancelled(t *testing.T) {
	f := newFixture(t)
	src := f.sourceTree(t, 5)
	blobsBefore := countFiles(t, filepath.Join(f.dir, "blobs"))
	rootBefore := f.node(t, f.root())
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	links := 0
	f.s.link = func(oldname, newname string) error {
		if links++; links == 2 {
			cancel()
		}
		return os.Link(oldname, newname)
	}
	_, _, err := f.s.Copy(cctx, f.space.ID, storage.Transfer{NodeID: src.ID, NewParentID: f.root(), NewName: "copy"})
	wantErr(t, err, context.Canceled)
	if links != 2 {
		t.Fatalf("%d files linked, want 2 (the copy went on after cancellation)", links)
	}
	if got := f.node(t, f.root()); got != rootBefore {
		t.Fatalf("root changed: %+v → %+v", rootBefore, got)
	}
	wantNoLeftovers(t, f, blobsBefore)
}

// A file of the source replaced while the copy links files is copied with
// its new content, and the duplicate of its old content is removed.
func TestCopyRetriesWhenSourceChanges(t *testing.T) {
	f := newFixture(t)
	f.keepNoUndo() // what is removed or replaced is destroyed at once
	src := f.sourceTree(t, 3)
	f0 := mustChild(t, f, src.ID, "f0")
	links := 0
	f.s.link = func(oldname, newname string) error {
		if links++; links == 3 { // f0 is linked already
			if _, _, err := f.commit(src.ID, "f0", "changed", storage.Commit{}); err != nil {
				return err
			}
		}
		return os.Link(oldname, newname)
	}
	top, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: src.ID, NewParentID: f.root(), NewName: "copy"})
	wantErr(t, err, nil)
	if links != 4 {
		t.Fatalf("%d links, want 4 (three files, then f0 again)", links)
	}
	c0 := mustChild(t, f, top.ID, "f0")
	if got := f.read(t, c0.ID); got != "changed" || c0.Checksums == f0.Checksums {
		t.Fatalf("copied f0 = %q, %+v", got, c0)
	}
	wantNoLeftovers(t, f, 6)
}

// The orphan sweep leaves pending content files alone: they are referenced
// once their transaction commits.
func TestSweepSkipsPendingContent(t *testing.T) {
	f := newFixture(t)
	<-f.s.sweepDone // the sweep of Open has finished
	blob := newBlobID()
	if err := f.s.prepareBlobDir(blob); err != nil {
		t.Fatal(err)
	}
	f.s.pending.add(blob)
	if err := os.WriteFile(f.s.blobPath(blob), []byte("pending"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(f.s.blobPath(blob))
	if n, err := f.s.sweepDir(dir); err != nil || n != 0 {
		t.Fatalf("sweep of a pending file removed %d, %v", n, err)
	}
	f.s.pending.done(blob)
	if n, err := f.s.sweepDir(dir); err != nil || n != 1 {
		t.Fatalf("sweep of an orphan removed %d, %v", n, err)
	}
}

// wantNoLeftovers checks that a copy left exactly blobs content files, no
// temporary file and nothing pending for the sweep to skip.
func wantNoLeftovers(t *testing.T, f *fixture, blobs int) {
	t.Helper()
	if got := countFiles(t, filepath.Join(f.dir, "blobs")); got != blobs {
		t.Fatalf("%d content files, want %d", got, blobs)
	}
	if got := countFiles(t, filepath.Join(f.dir, "uploads")); got != 0 {
		t.Fatalf("%d temporary files left", got)
	}
	if len(f.s.pending.ids) != 0 {
		t.Fatalf("content files still pending: %v", f.s.pending.ids)
	}
}
