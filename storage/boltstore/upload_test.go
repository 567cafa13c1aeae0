package boltstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

func TestCommitChecksums(t *testing.T) {
	f := newFixture(t)
	u, err := f.s.NewUpload(ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"12", "3", "45"} {
		if _, err := u.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	want := checksum.Sums{
		SHA1:    "8cb2237d0679ca88db6464eac60da96345513964",
		MD5:     "827ccb0eea8a706c4c34a16891f84e7b",
		Adler32: "02f80100",
	}
	if u.Size() != 5 || u.Checksums() != want {
		t.Fatalf("before commit: size %d, sums %+v", u.Size(), u.Checksums())
	}
	n, created, err := u.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "n.txt", ContentType: "text/plain"})
	if err != nil || !created {
		t.Fatalf("commit = %v, %v", created, err)
	}
	if n.Checksums != want || n.Size != 5 || n.ContentType != "text/plain" || n.Kind != storage.KindFile ||
		n.Name != "n.txt" || n.ParentID != f.root() || n.SpaceID != f.space.ID {
		t.Fatalf("node = %+v", n)
	}
	if got := f.node(t, n.ID); got != n {
		t.Fatalf("stored node = %+v, want %+v", got, n)
	}
	if got := f.read(t, n.ID); got != "12345" {
		t.Fatalf("content = %q", got)
	}
	if err := u.Discard(); err != nil {
		t.Fatalf("Discard after Commit: %v", err)
	}
	if got := f.read(t, n.ID); got != "12345" {
		t.Fatalf("content after Discard = %q", got)
	}
	if _, err := u.Write([]byte("x")); err == nil {
		t.Fatal("Write after Commit succeeded")
	}
	if _, _, err := u.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "again"}); err == nil {
		t.Fatal("second Commit succeeded")
	}
}

func TestCommitReplace(t *testing.T) {
	f := newFixture(t)
	f.keepNoUndo() // what is removed or replaced is destroyed at once
	first, created, err := f.commit(f.root(), "f", "old content", storage.Commit{ContentType: "text/plain"})
	if err != nil || !created {
		t.Fatal(created, err)
	}
	oldBlob := f.blob(t, first.ID)
	// A reader holding the old version.
	_, old, err := f.s.Open(ctx, f.space.ID, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(old, buf); err != nil || string(buf) != "old " {
		t.Fatalf("read %q, %v", buf, err)
	}

	f.clk.Advance(time.Second)
	second, created, err := f.commit(f.root(), "f", "new", storage.Commit{ContentType: "text/x-new"})
	if err != nil || created {
		t.Fatalf("replace = %v, %v", created, err)
	}
	if second.ID != first.ID {
		t.Fatalf("replace changed the id %s → %s", first.ID, second.ID)
	}
	if second.ETag == first.ETag || second.Size != 3 || second.ContentType != "text/x-new" || !second.ModTime.After(first.ModTime) {
		t.Fatalf("replaced = %+v, first %+v", second, first)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "blobs", oldBlob[:2], oldBlob)); !os.IsNotExist(err) {
		t.Fatalf("old content file not removed: %v", err)
	}
	// The old handle still reads the old bytes, from where it was.
	rest, err := io.ReadAll(old)
	if err != nil || string(rest) != "content" {
		t.Fatalf("old handle reads %q, %v", rest, err)
	}
	if _, err := old.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(old)
	if string(all) != "old content" {
		t.Fatalf("old handle after seek reads %q", all)
	}
	if got := f.read(t, first.ID); got != "new" {
		t.Fatalf("new content %q", got)
	}
	if root := f.node(t, f.root()); root.Size != 3 {
		t.Fatalf("root size %d", root.Size)
	}
}

func TestCommitErrors(t *testing.T) {
	f := newFixture(t)
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
		{"if-match on missing target", f.root(), "new", storage.Commit{Conditions: storage.Conditions{IfMatch: "abc"}}, storage.ErrPrecondition},
		{"if-match wrong etag", f.root(), "file", storage.Commit{Conditions: storage.Conditions{IfMatch: "abc"}}, storage.ErrPrecondition},
		{"if-none-match on existing", f.root(), "file", storage.Commit{Conditions: storage.Conditions{IfNoneMatch: true}}, storage.ErrPrecondition},
		{"if-match right etag", f.root(), "file", storage.Commit{Conditions: storage.Conditions{IfMatch: file.ETag}}, nil},
		{"if-none-match on new", f.root(), "new", storage.Commit{Conditions: storage.Conditions{IfNoneMatch: true}}, nil},
		{"into a subfolder", dir.ID, "x", storage.Commit{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blobsBefore := countFiles(t, filepath.Join(f.dir, "blobs"))
			_, _, err := f.commit(tc.parent, tc.target, "data", tc.c)
			wantErr(t, err, tc.want)
			if err != nil {
				if got := countFiles(t, filepath.Join(f.dir, "blobs")); got != blobsBefore {
					t.Fatalf("failed commit left content files: %d → %d", blobsBefore, got)
				}
			}
			if got := countFiles(t, filepath.Join(f.dir, "uploads")); got != 0 {
				t.Fatalf("%d temporary files left", got)
			}
		})
	}
	if _, err := f.s.NewUpload(ctx, "missing"); err == nil {
		t.Fatal("NewUpload in a missing space succeeded")
	}
	canceled, cancel := context.WithCancel(ctx)
	u, _ := f.s.NewUpload(ctx, f.space.ID)
	cancel()
	_, _, err := u.Commit(canceled, storage.Commit{ParentID: f.root(), Name: "canceled"})
	wantErr(t, err, context.Canceled)
}

func countFiles(t testing.TB, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestQuota(t *testing.T) {
	f := newFixture(t)
	if _, err := f.s.PutSpace(ctx, storage.Space{ID: "p", Quota: 10}); err != nil {
		t.Fatal(err)
	}
	f.space, _ = f.s.Space(ctx, "p")
	dir := f.mkdir(t, "p", "dir")
	f.put(t, dir.ID, "a", "123456")
	_, _, err := f.commit(dir.ID, "b", "12345", storage.Commit{})
	wantErr(t, err, storage.ErrInsufficientStorage)
	f.put(t, dir.ID, "b", "1234") // exactly full
	// Replacing counts the difference.
	f.put(t, dir.ID, "a", "654321")
	_, _, err = f.commit(dir.ID, "a", "6543210", storage.Commit{})
	wantErr(t, err, storage.ErrInsufficientStorage)
	f.put(t, dir.ID, "a", "1")
	if root := f.node(t, "p"); root.Size != 5 {
		t.Fatalf("root size %d", root.Size)
	}
	// Lowering the quota below the usage still lets files shrink.
	if _, err := f.s.PutSpace(ctx, storage.Space{ID: "p", Quota: 2}); err != nil {
		t.Fatal(err)
	}
	f.put(t, dir.ID, "b", "12")
	_, _, err = f.commit(dir.ID, "c", "1", storage.Commit{})
	wantErr(t, err, storage.ErrInsufficientStorage)
	// Unlimited.
	if _, err := f.s.PutSpace(ctx, storage.Space{ID: "p", Quota: storage.NoQuota}); err != nil {
		t.Fatal(err)
	}
	f.put(t, dir.ID, "big", string(make([]byte, 1000)))
}

func TestDiscard(t *testing.T) {
	f := newFixture(t)
	u, err := f.s.NewUpload(ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	u.Write([]byte("dropped"))
	if err := u.Discard(); err != nil {
		t.Fatal(err)
	}
	if err := u.Discard(); err != nil {
		t.Fatal(err)
	}
	if got := countFiles(t, filepath.Join(f.dir, "uploads")); got != 0 {
		t.Fatalf("%d temporary files left", got)
	}
	if _, _, err := u.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "x"}); err == nil {
		t.Fatal("Commit after Discard succeeded")
	}
	if _, err := f.s.Child(ctx, f.space.ID, f.root(), "x"); err == nil {
		t.Fatal("discarded upload became visible")
	}
}

// The content is an *os.File, so net/http can serve it with sendfile and
// range requests work.
func TestContentServesRanges(t *testing.T) {
	f := newFixture(t)
	n := f.put(t, f.root(), "f", "0123456789")
	_, c, err := f.s.Open(ctx, f.space.ID, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*os.File); !ok {
		t.Fatalf("content is %T, want *os.File", c)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/f", nil)
	req.Header.Set("Range", "bytes=2-4")
	http.ServeContent(rec, req, "f", n.ModTime, c)
	if rec.Code != http.StatusPartialContent || rec.Body.String() != "234" {
		t.Fatalf("range response %d %q", rec.Code, rec.Body.String())
	}
}

// Readers never see partial content while writers replace a file.
func TestConcurrentReplaceAndRead(t *testing.T) {
	f := newFixture(t)
	versions := make([]string, 8)
	for i := range versions {
		versions[i] = string(bytes.Repeat([]byte{byte('a' + i)}, 4096+i))
	}
	n := f.put(t, f.root(), "f", versions[0])
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 100)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, c, err := f.s.Open(ctx, f.space.ID, n.ID)
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(c)
				c.Close()
				if err != nil {
					errs <- err
					return
				}
				ok := false
				for _, v := range versions {
					ok = ok || string(b) == v
				}
				if !ok {
					errs <- fmt.Errorf("read a partial or mixed version of %d bytes", len(b))
					return
				}
			}
		}()
	}
	for i := 1; i < 40; i++ {
		if _, _, err := f.commit(f.root(), "f", versions[i%len(versions)], storage.Commit{}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// Concurrent commits of different files in one folder add up.
func TestConcurrentCommits(t *testing.T) {
	f := newFixture(t)
	dir := f.mkdir(t, f.root(), "dir")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := f.commit(dir.ID, fmt.Sprint("f", i), "12345", storage.Commit{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := f.node(t, f.root()).Size; got != 100 {
		t.Fatalf("root size %d, want 100", got)
	}
	if got := len(f.names(t, dir.ID)); got != 20 {
		t.Fatalf("%d files", got)
	}
}
