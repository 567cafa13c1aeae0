package boltstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

func TestDiskFull(t *testing.T) {
	tests := []struct {
		name string
		err  error
		full bool
	}{
		{"no space", syscall.ENOSPC, true},
		{"disk quota", syscall.EDQUOT, true},
		{"wrapped", &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, true},
		{"wrapped twice", fmt.Errorf("sync: %w", &os.LinkError{Op: "rename", Err: syscall.EDQUOT}), true},
		{"other errno", syscall.EIO, false},
		{"other error", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diskFull(tt.err)
			if !errors.Is(got, tt.err) {
				t.Fatalf("diskFull(%v) = %v lost the cause", tt.err, got)
			}
			if full := errors.Is(got, storage.ErrInsufficientStorage); full != tt.full {
				t.Fatalf("diskFull(%v) = %v, insufficient storage %v, want %v", tt.err, got, full, tt.full)
			}
		})
	}
	if diskFull(nil) != nil {
		t.Fatal("diskFull(nil) is an error")
	}
}

// A write to a full disk is insufficient storage (507), not a bad request.
func TestUploadWriteDiskFull(t *testing.T) {
	_, u := uploadToFullDisk(t)
	_, err := u.Write([]byte("does not fit"))
	wantErr(t, err, storage.ErrInsufficientStorage)
	wantErr(t, u.Discard(), nil)
}

// After a failed write the checksums may cover bytes the file lacks: the
// upload refuses more writes and its commit.
func TestUploadFailedWriteCannotCommit(t *testing.T) {
	f, u := uploadToFullDisk(t)
	_, err := u.Write(make([]byte, 2*parallelWriteMin))
	wantErr(t, err, storage.ErrInsufficientStorage)
	_, err = u.Write([]byte("more"))
	wantErr(t, err, storage.ErrInsufficientStorage)
	_, _, err = u.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "f"})
	wantErr(t, err, storage.ErrInsufficientStorage)
	if _, err := f.s.Child(ctx, f.space.ID, f.root(), "f"); err == nil {
		t.Fatal("a failed upload was committed")
	}
}

// A commit that cannot put the content in place for want of space is
// insufficient storage and leaves nothing behind.
func TestCommitDiskFull(t *testing.T) {
	f := newFixture(t)
	f.s.rename = func(oldpath, newpath string) error {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: syscall.ENOSPC}
	}
	_, _, err := f.commit(f.root(), "f", "content", storage.Commit{})
	wantErr(t, err, storage.ErrInsufficientStorage)
	if names := f.names(t, f.root()); len(names) != 0 {
		t.Fatalf("failed commit created %v", names)
	}
	for _, d := range []string{"blobs", "uploads"} {
		if got := countFiles(t, filepath.Join(f.dir, d)); got != 0 {
			t.Fatalf("%d files left in %s", got, d)
		}
	}
}

// uploadToFullDisk returns a fixture and an upload in it whose file is
// /dev/full, where every write fails with ENOSPC.
func uploadToFullDisk(t *testing.T) (*fixture, storage.Upload) {
	t.Helper()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	f := newFixture(t)
	u, err := f.s.NewUpload(ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	up := u.(*upload)
	up.f.Close()
	up.f = full
	return f, u
}
