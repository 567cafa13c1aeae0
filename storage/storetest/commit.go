package storetest

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// A commit by id replaces the file where a concurrent MOVE put it and
// creates nothing at the old place.
func testCommitByIDFollowsMove(t *testing.T, f *fixture) {
	a := f.mkdir(t, f.root(), "a")
	b := f.mkdir(t, f.root(), "b")
	file := f.put(t, a.ID, "f", "old")
	if _, _, err := f.s.Move(f.ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: b.ID, NewName: "g"}); err != nil {
		t.Fatalf("Move: %v", err)
	}
	n, created, err := f.commit(f.space.ID, "new!", storage.Commit{NodeID: file.ID, ParentID: a.ID, Name: "f"})
	if err != nil || created {
		t.Fatalf("commit by id = %v, %v", created, err)
	}
	if n.ID != file.ID || n.ParentID != b.ID || n.Name != "g" || n.Size != 4 {
		t.Fatalf("committed node = %+v", n)
	}
	if got := f.read(t, file.ID); got != "new!" {
		t.Fatalf("content = %q", got)
	}
	if names := f.names(t, a.ID); len(names) != 0 {
		t.Fatalf("old folder has %v", names)
	}
	if got := f.node(t, b.ID).Size; got != 4 {
		t.Fatalf("size of the folder holding the file = %d, want 4", got)
	}
}

// A commit with KeepSame that brings the bytes and modification time the
// file has changes nothing (storage.Commit.Unchanged): the file, its
// folder and its versions stay as they are. Any difference, a refused
// condition or a commit without KeepSame writes as always.
func testCommitKeepSame(t *testing.T, f *fixture) {
	folder := f.mkdir(t, f.root(), "folder")
	mtime := time.Unix(1700000000, 0)
	again := storage.Commit{ParentID: folder.ID, Name: "f", ModTime: mtime, KeepSame: true}
	file, created, err := f.commit(f.space.ID, "same", again)
	if err != nil || !created {
		t.Fatalf("first commit = %v, %v", created, err)
	}
	before := f.node(t, folder.ID)

	n, created, err := f.commit(f.space.ID, "same", again)
	if err != nil || created {
		t.Fatalf("commit of the same file = %v, %v", created, err)
	}
	if n.ID != file.ID || n.ETag != file.ETag || !n.ModTime.Equal(mtime) {
		t.Fatalf("commit of the same file answered %+v, want the file as it was, %+v", n, file)
	}
	if got := f.node(t, file.ID); got.ETag != file.ETag {
		t.Fatalf("etag after the commit of the same file = %s, want %s", got.ETag, file.ETag)
	}
	if got := f.node(t, folder.ID); got.ETag != before.ETag || got.Size != before.Size {
		t.Fatalf("folder after the commit of the same file = %+v, want %+v", got, before)
	}
	f.wantVersions(t, file.ID)

	wantErr(t, "a refused If-Match", func() error {
		c := again
		c.IfMatch = "other"
		_, _, err := f.commit(f.space.ID, "same", c)
		return err
	}(), storage.ErrPrecondition)

	etag := file.ETag
	for _, tc := range []struct {
		name, content string
		change        func(*storage.Commit)
	}{
		{"another time", "same", func(c *storage.Commit) { c.ModTime = mtime.Add(time.Second) }},
		{"other bytes of the same length", "SAME", func(c *storage.Commit) {}},
		{"no time", "SAME", func(c *storage.Commit) { c.ModTime = time.Time{} }},
		{"without KeepSame", "SAME", func(c *storage.Commit) { c.ModTime = mtime; c.KeepSame = false }},
	} {
		c := again
		tc.change(&c)
		n, _, err := f.commit(f.space.ID, tc.content, c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n.ETag == etag {
			t.Errorf("%s: the file kept its etag %s", tc.name, etag)
		}
		etag = n.ETag
	}
}

// foreignFile makes space spaceID, other than the fixture's, with a file
// "foreign" at its root.
func (f *fixture) foreignFile(t *testing.T, spaceID string) (storage.Space, storage.Node) {
	t.Helper()
	other, err := f.s.PutSpace(f.ctx, storage.Space{ID: spaceID, Name: "Other", Quota: storage.NoQuota})
	if err != nil {
		t.Fatalf("PutSpace: %v", err)
	}
	foreign, _, err := f.commit(other.ID, "foreign", storage.Commit{ParentID: other.ID, Name: "foreign"})
	if err != nil {
		t.Fatalf("commit in the other space: %v", err)
	}
	return other, foreign
}

func testCommitByIDRules(t *testing.T, f *fixture) {
	other, foreign := f.foreignFile(t, "storetest-other")
	folder := f.mkdir(t, f.root(), "folder")
	tests := []struct {
		name   string
		commit func(file storage.Node) storage.Commit
		want   error
	}{
		{"removed", func(file storage.Node) storage.Commit {
			if err := f.s.Remove(f.ctx, f.space.ID, file.ID, storage.Conditions{}); err != nil {
				t.Fatalf("Remove: %v", err)
			}
			return storage.Commit{NodeID: file.ID, ParentID: f.root(), Name: file.Name}
		}, storage.ErrNotFound},
		{"in another space", func(storage.Node) storage.Commit {
			return storage.Commit{NodeID: foreign.ID}
		}, storage.ErrNotFound},
		{"a folder", func(storage.Node) storage.Commit {
			return storage.Commit{NodeID: folder.ID}
		}, storage.ErrTargetIsFolder},
		{"the space root", func(storage.Node) storage.Commit {
			return storage.Commit{NodeID: f.root()}
		}, storage.ErrConflict},
		{"If-Match fails", func(file storage.Node) storage.Commit {
			return storage.Commit{NodeID: file.ID, Conditions: storage.Conditions{IfMatch: "other"}}
		}, storage.ErrPrecondition},
		{"If-None-Match fails", func(file storage.Node) storage.Commit {
			return storage.Commit{NodeID: file.ID, Conditions: storage.Conditions{IfNoneMatch: true}}
		}, storage.ErrTargetExists},
		{"If-Match holds", func(file storage.Node) storage.Commit {
			return storage.Commit{NodeID: file.ID, Conditions: storage.Conditions{IfMatch: file.ETag}}
		}, nil},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := f.put(t, f.root(), fmt.Sprint("file", i), "before")
			c := tt.commit(file)
			before := f.names(t, f.root())
			_, _, err := f.commit(f.space.ID, "after", c)
			wantErr(t, "commit", err, tt.want)
			if tt.want == nil {
				if got := f.read(t, file.ID); got != "after" {
					t.Fatalf("content = %q", got)
				}
				return
			}
			if names := f.names(t, f.root()); !slices.Equal(names, before) {
				t.Fatalf("failed commit changed the folder: %v, want %v", names, before)
			}
			if got, err := f.s.Node(f.ctx, other.ID, foreign.ID); err != nil || got != foreign {
				t.Fatalf("foreign file = %+v, %v", got, err)
			}
		})
	}
}

// Open returns the node whose content it opened: the bytes read always
// match the node's size and checksums, even while writers replace the file.
func testOpenPairsNodeAndContent(t *testing.T, f *fixture) {
	file := f.put(t, f.root(), "f", "version 0")
	const writers, commits, readers = 2, 25, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers+readers)
	done := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			for i := range commits {
				content := fmt.Sprintf("writer %d, version %d%s", w, i, make([]byte, i*97))
				if _, _, err := f.commit(f.space.ID, content, storage.Commit{ParentID: f.root(), Name: "f"}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	var readersWG sync.WaitGroup
	for range readers {
		readersWG.Go(func() {
			for {
				if err := f.checkOpen(file.ID); err != nil {
					errs <- err
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	wg.Wait()
	close(done)
	readersWG.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// checkOpen opens file id and checks that its content matches the node.
func (f *fixture) checkOpen(id string) error {
	n, c, err := f.s.Open(f.ctx, f.space.ID, id)
	if err != nil {
		return fmt.Errorf("Open: %w", err)
	}
	defer c.Close()
	sum := checksum.NewWriter()
	size, err := io.Copy(sum, c)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	if size != n.Size || sum.Sums() != n.Checksums {
		return fmt.Errorf("read %d bytes with %v; node %s says %d bytes with %v", size, sum.Sums(), n.ETag, n.Size, n.Checksums)
	}
	return nil
}
