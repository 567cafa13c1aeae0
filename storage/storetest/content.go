package storetest

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// contentTests check uploads and Open.
var contentTests = []conformanceTest{
	{"CommitErrors", testCommitErrors},
	{"CommitReplaceKeepsOpenReaders", testCommitReplace},
	{"CommitQuota", testCommitQuota},
	{"EmptyFile", testEmptyFile},
	{"LargeFileSeeks", testLargeFile},
	{"UploadFinishes", testUploadFinishes},
	{"Discard", testDiscard},
	{"OpenFolder", testOpenFolder},
	{"LaterDigests", testLaterDigests},
}

func testCommitErrors(t *testing.T, f *fixture) {
	dir := f.mkdir(t, f.root(), "dir")
	file := f.put(t, f.root(), "file", "abc")
	for _, tc := range []struct {
		name   string
		parent string
		target string
		c      storage.Commit
		want   error
	}{
		{"parent missing", "missing", "x", storage.Commit{}, storage.ErrConflict},
		{"parent is a file", file.ID, "x", storage.Commit{}, storage.ErrConflict},
		{"target is a folder", f.root(), "dir", storage.Commit{}, storage.ErrConflict},
		{"invalid name", f.root(), "..", storage.Commit{}, storage.ErrInvalid},
		{"if-match on missing target", f.root(), "new", storage.Commit{Conditions: storage.Conditions{IfMatch: "abc"}}, storage.ErrPrecondition},
		{"if-match wrong etag", f.root(), "file", storage.Commit{Conditions: storage.Conditions{IfMatch: "abc"}}, storage.ErrPrecondition},
		{"if-none-match on existing", f.root(), "file", storage.Commit{Conditions: storage.Conditions{IfNoneMatch: true}}, storage.ErrPrecondition},
		{"if-match right etag", f.root(), "file", storage.Commit{Conditions: storage.Conditions{IfMatch: file.ETag}}, nil},
		{"if-none-match on new", f.root(), "new", storage.Commit{Conditions: storage.Conditions{IfNoneMatch: true}}, nil},
		{"into a subfolder", dir.ID, "x", storage.Commit{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.ParentID, tc.c.Name = tc.parent, tc.target
			_, _, err := f.commit(f.space.ID, "data", tc.c)
			wantErr(t, "commit", err, tc.want)
		})
	}
	if _, err := f.s.NewUpload(f.ctx, "missing"); err == nil {
		t.Fatal("NewUpload in a missing space succeeded")
	}
	canceled, cancel := context.WithCancel(f.ctx)
	u, err := f.s.NewUpload(f.ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	_, _, err = u.Commit(canceled, storage.Commit{ParentID: f.root(), Name: "canceled"})
	wantErr(t, "commit with a cancelled context", err, context.Canceled)
}

func testCommitReplace(t *testing.T, f *fixture) {
	first, created, err := f.commit(f.space.ID, "old content", storage.Commit{ParentID: f.root(), Name: "f", ContentType: "text/plain"})
	if err != nil || !created {
		t.Fatal(created, err)
	}
	_, old, err := f.s.Open(f.ctx, f.space.ID, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(old, buf); err != nil || string(buf) != "old " {
		t.Fatalf("read %q, %v", buf, err)
	}
	second, created, err := f.commit(f.space.ID, "new", storage.Commit{ParentID: f.root(), Name: "f", ContentType: "text/x-new"})
	if err != nil || created {
		t.Fatalf("replace = %v, %v", created, err)
	}
	if second.ID != first.ID || second.ETag == first.ETag || second.Size != 3 || second.ContentType != "text/x-new" ||
		second.ModTime.Before(first.ModTime) {
		t.Fatalf("replaced = %+v, first %+v", second, first)
	}
	if got := f.node(t, first.ID); !sameNode(got, second) {
		t.Fatalf("Node = %+v, commit returned %+v", got, second)
	}
	// The old reader still reads the old bytes, from where it was.
	rest, err := io.ReadAll(old)
	if err != nil || string(rest) != "content" {
		t.Fatalf("old reader reads %q, %v", rest, err)
	}
	if _, err := old.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if all, _ := io.ReadAll(old); string(all) != "old content" {
		t.Fatalf("old reader after seek reads %q", all)
	}
	if got := f.read(t, first.ID); got != "new" {
		t.Fatalf("new content %q", got)
	}
	if root := f.node(t, f.root()); root.Size != 3 {
		t.Fatalf("root size %d", root.Size)
	}
}

func testCommitQuota(t *testing.T, f *fixture) {
	if _, err := f.s.PutSpace(f.ctx, storage.Space{ID: "storetest-quota", Quota: 10}); err != nil {
		t.Fatal(err)
	}
	sp, err := f.s.Space(f.ctx, "storetest-quota")
	if err != nil {
		t.Fatal(err)
	}
	put := func(name, content string) error {
		_, _, err := f.commit(sp.ID, content, storage.Commit{ParentID: sp.ID, Name: name})
		return err
	}
	wantErr(t, "put a", put("a", "123456"), nil)
	wantErr(t, "put b over quota", put("b", "12345"), storage.ErrInsufficientStorage)
	wantErr(t, "put b to the quota", put("b", "1234"), nil)
	wantErr(t, "replace a, same size", put("a", "654321"), nil)
	wantErr(t, "replace a, larger", put("a", "6543210"), storage.ErrInsufficientStorage)
	wantErr(t, "replace a, smaller", put("a", "1"), nil)
	if root, err := f.s.Node(f.ctx, sp.ID, sp.ID); err != nil || root.Size != 5 {
		t.Fatalf("root = %+v, %v", root, err)
	}
	// Lowering the quota below the usage still lets files shrink.
	if _, err := f.s.PutSpace(f.ctx, storage.Space{ID: sp.ID, Quota: 2}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "shrink b", put("b", "12"), nil)
	wantErr(t, "put c over the lowered quota", put("c", "1"), storage.ErrInsufficientStorage)
	if _, err := f.s.PutSpace(f.ctx, storage.Space{ID: sp.ID, Quota: storage.NoQuota}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "put without a quota", put("big", string(make([]byte, 1000))), nil)
}

func testEmptyFile(t *testing.T, f *fixture) {
	n := f.put(t, f.root(), "empty", "")
	if n.Size != 0 || n.Checksums.SHA1 != "da39a3ee5e6b4b0d3255bfef95601890afd80709" {
		t.Fatalf("empty = %+v", n)
	}
	if got := f.read(t, n.ID); got != "" {
		t.Fatalf("content %q", got)
	}
}

// A file larger than any buffer an upload keeps in memory arrives whole,
// in many writes, and its reader seeks.
func testLargeFile(t *testing.T, f *fixture) {
	content := make([]byte, 3<<20+12345)
	for i := range content {
		content[i] = byte(i*7 + i>>13)
	}
	u, err := f.s.NewUpload(f.ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Discard()
	for rest := content; len(rest) > 0; {
		n := min(len(rest), 100_000)
		if _, err := u.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if u.Size() != int64(len(content)) {
		t.Fatalf("Size = %d", u.Size())
	}
	sums := u.Checksums()
	n, _, err := u.Commit(f.ctx, storage.Commit{ParentID: f.root(), Name: "large"})
	if err != nil {
		t.Fatal(err)
	}
	if n.Size != int64(len(content)) || n.Checksums != sums {
		t.Fatalf("node %+v, checksums %+v", n, sums)
	}
	// io.Copy (ReadFrom, where the upload has it) stores the same.
	u2, err := f.s.NewUpload(f.ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer u2.Discard()
	if _, err := io.Copy(u2, bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	n2, _, err := u2.Commit(f.ctx, storage.Commit{ParentID: f.root(), Name: "large2"})
	if err != nil || n2.Checksums != sums || n2.Size != n.Size {
		t.Fatalf("io.Copy upload = %+v, %v", n2, err)
	}
	_, c, err := f.s.Open(f.ctx, f.space.ID, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, off := range []int64{0, 1 << 20, int64(len(content)) - 10, 5} {
		if _, err := c.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 10)
		if _, err := io.ReadFull(c, buf); err != nil || !bytes.Equal(buf, content[off:off+10]) {
			t.Fatalf("at %d read %x, %v", off, buf, err)
		}
	}
	if _, err := c.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if all, err := io.ReadAll(c); err != nil || !bytes.Equal(all, content) {
		t.Fatalf("read %d bytes back, %v", len(all), err)
	}
}

// A committed upload takes no more writes or commits, and Discard after
// Commit keeps the file.
func testUploadFinishes(t *testing.T, f *fixture) {
	u, err := f.s.NewUpload(f.ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	u.Write([]byte("kept"))
	if _, _, err := u.Commit(f.ctx, storage.Commit{ParentID: f.root(), Name: "kept"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Write([]byte("more")); err == nil {
		t.Fatal("Write after Commit succeeded")
	}
	if _, _, err := u.Commit(f.ctx, storage.Commit{ParentID: f.root(), Name: "again"}); err == nil {
		t.Fatal("second Commit succeeded")
	}
	if err := u.Discard(); err != nil {
		t.Fatal(err)
	}
	n, err := f.s.Child(f.ctx, f.space.ID, f.root(), "kept")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, n.ID); got != "kept" {
		t.Fatalf("content after Discard = %q", got)
	}
}

func testDiscard(t *testing.T, f *fixture) {
	for _, size := range []int{7, 3 << 20} {
		u, err := f.s.NewUpload(f.ctx, f.space.ID)
		if err != nil {
			t.Fatal(err)
		}
		u.Write(make([]byte, size))
		if err := u.Discard(); err != nil {
			t.Fatal(err)
		}
		if err := u.Discard(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := u.Commit(f.ctx, storage.Commit{ParentID: f.root(), Name: "x"}); err == nil {
			t.Fatal("Commit after Discard succeeded")
		}
		if _, err := f.s.Child(f.ctx, f.space.ID, f.root(), "x"); err == nil {
			t.Fatal("discarded upload became visible")
		}
	}
}

func testOpenFolder(t *testing.T, f *fixture) {
	_, _, err := f.s.Open(f.ctx, f.space.ID, f.root())
	wantErr(t, "Open a folder", err, storage.ErrInvalid)
	_, _, err = f.s.Open(f.ctx, f.space.ID, "missing")
	wantErr(t, "Open a missing node", err, storage.ErrNotFound)
}
