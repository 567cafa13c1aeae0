package boltstore

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// stagedUpload puts three parts of upload id in order, as nextcloud/desktop
// sends them, and returns their bytes.
func (f *fixture) stagedUpload(t *testing.T, id string) []byte {
	t.Helper()
	f.newChunkedUpload(t, id, time.Hour)
	rng := rand.New(rand.NewPCG(9, 10))
	var whole []byte
	prev := ""
	for _, name := range []string{"1", "2", "3"} {
		b := randomBytes(rng, 100<<10+rng.IntN(1000))
		whole = append(whole, b...)
		if _, err := f.s.PutChunkAfter(ctx, id, name, prev, bytes.NewReader(b)); err != nil {
			t.Fatalf("PutChunkAfter %q: %v", name, err)
		}
		prev = name
	}
	return whole
}

// readParts reads parts 1, 2 and 3 of upload id one after the other.
func (f *fixture) readParts(t *testing.T, id string) []byte {
	t.Helper()
	var got []byte
	for _, name := range []string{"1", "2", "3"} {
		rc, err := f.s.OpenChunk(ctx, id, name)
		if err != nil {
			t.Fatalf("part %s: %v", name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("part %s: %v", name, err)
		}
		got = append(got, b...)
	}
	return got
}

// inode returns the inode number of the file at path.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Ino
}

// assemble claims upload id and appends its parts to a new upload, as the
// NG MOVE does when it announces SHA1.
func (f *fixture) assemble(t *testing.T, id string) storage.Upload {
	t.Helper()
	if _, err := f.s.ClaimChunkedUpload(ctx, id); err != nil {
		t.Fatal(err)
	}
	up, err := f.s.NewUpload(ctx, f.root())
	if err != nil {
		t.Fatal(err)
	}
	storage.HashInline(up, checksum.SHA1)
	if n, err := f.s.AppendChunks(ctx, up, id, []string{"1", "2", "3"}); n != 3 || err != nil {
		up.Discard()
		t.Fatalf("AppendChunks = %d, %v; want 3", n, err)
	}
	return up
}

// TestAssemblyLinksTheStagedParts: parts put in order are appended to one
// staging file, which the assembly commits as the content itself: the
// content file is the staging file's inode, no byte copied, and the parts
// read as they were sent until then.
func TestAssemblyLinksTheStagedParts(t *testing.T) {
	f := newFixture(t)
	whole := f.stagedUpload(t, "ng")
	r, err := f.s.liveChunkedUpload("ng")
	if err != nil {
		t.Fatal(err)
	}
	staging := inode(t, f.chunkFilePath(t, "ng", "1"))
	if !bytes.Equal(f.readParts(t, "ng"), whole) {
		t.Fatal("the staged parts read otherwise than they were sent")
	}
	up := f.assemble(t, "ng")
	defer up.Discard()
	n, _, err := up.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "ng.bin", Assembles: "ng"})
	if err != nil {
		t.Fatal(err)
	}
	if got := inode(t, f.s.blobPath(f.blob(t, n.ID))); got != staging {
		t.Fatalf("the content file is inode %d, not the staging file's %d: the parts were copied", got, staging)
	}
	if f.read(t, n.ID) != string(whole) {
		t.Fatal("the assembled file differs from its parts")
	}
	if got := f.settled(t, n).Checksums; got != sumsOf(whole) {
		t.Fatalf("digests %v, want %v", got, sumsOf(whole))
	}
	if _, err := os.Stat(f.s.chunkDirPath(r.Dir)); !os.IsNotExist(err) {
		t.Fatalf("the upload's directory outlived the commit: %v", err)
	}
	if found, _ := runCheck(t, f.s, storage.CheckOptions{Deep: true}); len(found) > 0 {
		t.Fatalf("check --deep after the assembly: %v", found)
	}
}

// TestAssemblyCrashBetweenLinkAndCommit: a store stopped after the staging
// file was linked as the upload's file and before the commit keeps the
// parts whole, no content made of them, and a deep check finds nothing;
// the claim is lifted, so the client's retry of the MOVE assembles them.
func TestAssemblyCrashBetweenLinkAndCommit(t *testing.T) {
	f := newFixture(t)
	whole := f.stagedUpload(t, "ng")
	staging := inode(t, f.chunkFilePath(t, "ng", "1"))
	up := f.assemble(t, "ng")
	if got := inode(t, up.(*upload).path); got != staging {
		t.Fatalf("the upload's file is inode %d, not the staging file %d linked", got, staging)
	}
	// Never committed: the store stops under it.
	f.reopen(t)
	if found, _ := runCheck(t, f.s, storage.CheckOptions{Deep: true}); len(found) > 0 {
		t.Fatalf("check --deep after the crash: %v", found)
	}
	if entries, _ := os.ReadDir(f.s.uploadDir); len(entries) > 0 {
		t.Fatalf("the upload's link outlived the restart: %v", entries)
	}
	if !bytes.Equal(f.readParts(t, "ng"), whole) {
		t.Fatal("the parts changed in the crash")
	}
	// The client's retry of its MOVE assembles the same parts.
	up = f.assemble(t, "ng")
	n, _, err := up.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "ng.bin", Assembles: "ng"})
	if err != nil {
		t.Fatalf("the retried assembly: %v", err)
	}
	if got := f.read(t, n.ID); got != string(whole) {
		t.Fatalf("the retried assembly holds %d bytes, want the %d sent", len(got), len(whole))
	}
	if found, _ := runCheck(t, f.s, storage.CheckOptions{Deep: true}); len(found) > 0 {
		t.Fatalf("check --deep after the retry: %v", found)
	}
}

// TestAssemblyCopiesWhileAPartIsStaged: an assembly that meets a part
// still being appended to the staging file (sent before the upload was
// claimed) copies the parts instead of adopting the file that part is
// still writing to, so the content holds the chain's bytes alone.
func TestAssemblyCopiesWhileAPartIsStaged(t *testing.T) {
	f := newFixture(t)
	whole := f.stagedUpload(t, "ng")
	staging := inode(t, f.chunkFilePath(t, "ng", "1"))
	unlock, ok := f.s.chainLocks.tryLock("ng") // the part under way
	if !ok {
		t.Fatal("the chain is busy with no part under way")
	}
	up := f.assemble(t, "ng")
	unlock()
	defer up.Discard()
	if got := inode(t, up.(*upload).path); got == staging {
		t.Fatal("the assembly adopted the staging file a part was writing to")
	}
	n, _, err := up.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "ng.bin", Assembles: "ng"})
	if err != nil {
		t.Fatal(err)
	}
	if f.read(t, n.ID) != string(whole) {
		t.Fatal("the assembled file differs from its parts")
	}
	if found, _ := runCheck(t, f.s, storage.CheckOptions{Deep: true}); len(found) > 0 {
		t.Fatalf("check --deep after the assembly: %v", found)
	}
}
