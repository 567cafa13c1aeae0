package boltstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// newChunkedUpload starts upload id of einstein, expiring after ttl.
func (f *fixture) newChunkedUpload(t testing.TB, id string, ttl time.Duration) storage.ChunkedUpload {
	t.Helper()
	u, err := f.s.CreateChunkedUpload(ctx, storage.ChunkedUpload{ID: id, User: "einstein", Expires: f.clk.Now().Add(ttl)})
	if err != nil {
		t.Fatalf("CreateChunkedUpload: %v", err)
	}
	return u
}

func (f *fixture) putChunk(t testing.TB, id, name, content string) {
	t.Helper()
	if _, err := f.s.PutChunk(ctx, id, name, strings.NewReader(content)); err != nil {
		t.Fatalf("PutChunk %q: %v", name, err)
	}
}

// wantChunks checks the names and contents of the parts of upload id.
func (f *fixture) wantChunks(t testing.TB, id string, want map[string]string) {
	t.Helper()
	chunks, err := f.s.Chunks(ctx, id)
	if err != nil {
		t.Fatalf("Chunks: %v", err)
	}
	got := map[string]string{}
	for _, c := range chunks {
		rc, err := f.s.OpenChunk(ctx, id, c.Name)
		if err != nil {
			t.Fatalf("OpenChunk %q: %v", c.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || int64(len(b)) != c.Size {
			t.Fatalf("part %q: %d bytes of %d, %v", c.Name, len(b), c.Size, err)
		}
		got[c.Name] = string(b)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("parts = %q, want %q", got, want)
	}
}

// chunkRecord returns the stored record of upload id.
func (f *fixture) chunkRecord(t testing.TB, id string) chunkedUploadRec {
	t.Helper()
	var r chunkedUploadRec
	err := f.s.view(func(tx *txn) error {
		var ok bool
		var err error
		r, ok, err = tx.chunkedUpload(id)
		if err == nil && !ok {
			err = storage.ErrNotFound
		}
		return err
	})
	if err != nil {
		t.Fatalf("record of %q: %v", id, err)
	}
	return r
}

// chunkDirs lists the directories under chunks/.
func (f *fixture) chunkDirs(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(f.s.chunkDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// wantChunkedUploadGone checks that upload id, its records and its
// directory are gone.
func (f *fixture) wantChunkedUploadGone(t testing.TB, id, dir string) {
	t.Helper()
	if _, err := f.s.ChunkedUpload(ctx, id); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("ChunkedUpload %q: err %v, want ErrNotFound", id, err)
	}
	var stored bool
	f.s.view(func(tx *txn) error {
		stored = tx.chunkedUploads().Get([]byte(id)) != nil || tx.chunkParts().Bucket([]byte(id)) != nil
		return nil
	})
	if stored {
		t.Fatalf("upload %q still has records", id)
	}
	if _, err := os.Stat(f.s.chunkDirPath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("directory of %q survived (%v)", id, err)
	}
}

func TestChunkedUploadSurvivesRestart(t *testing.T) {
	f := newFixture(t)
	open := f.newChunkedUpload(t, "einstein/ng/open", time.Hour)
	f.putChunk(t, open.ID, "1", "one")
	f.putChunk(t, open.ID, "2", "two")
	claimed := f.newChunkedUpload(t, "einstein/ng/claimed", time.Hour)
	f.putChunk(t, claimed.ID, "a", "assembling")
	if _, err := f.s.ClaimChunkedUpload(ctx, claimed.ID); err != nil {
		t.Fatalf("ClaimChunkedUpload: %v", err)
	}
	f.reopen(t)
	got, err := f.s.ChunkedUpload(ctx, open.ID)
	if err != nil || got != open {
		t.Fatalf("ChunkedUpload after a restart = %+v, %v; want %+v", got, err, open)
	}
	f.wantChunks(t, open.ID, map[string]string{"1": "one", "2": "two"})
	f.putChunk(t, open.ID, "2", "TWO")
	f.putChunk(t, open.ID, "3", "three")
	f.wantChunks(t, open.ID, map[string]string{"1": "one", "2": "TWO", "3": "three"})
	if r := f.chunkRecord(t, open.ID); r.Parts != 3 {
		t.Fatalf("recorded parts = %d, want 3", r.Parts)
	}
	// The assembly that claimed it ended with the process: the claim is
	// lifted so that the client's retry of its MOVE finds the parts.
	if got, err := f.s.ChunkedUpload(ctx, claimed.ID); err != nil || got.Claimed {
		t.Fatalf("claimed upload after a restart = %+v, %v; want it unclaimed", got, err)
	}
	f.wantChunks(t, claimed.ID, map[string]string{"a": "assembling"})
	if _, err := f.s.ClaimChunkedUpload(ctx, claimed.ID); err != nil {
		t.Fatalf("claiming again after a restart: %v", err)
	}
}

// Open settles what a crash can leave: directories and files no record
// names, parts whose file was lost or cut short, uploads whose directory
// is gone, uploads that expired while the store was closed.
func TestChunkedUploadCrashLeftovers(t *testing.T) {
	f := newFixture(t)
	kept := f.newChunkedUpload(t, "kept", time.Hour)
	for _, name := range []string{"whole", "lost", "short"} {
		f.putChunk(t, kept.ID, name, "content of "+name)
	}
	dirGone := f.newChunkedUpload(t, "dir gone", time.Hour)
	f.putChunk(t, dirGone.ID, "1", "one")
	expiring := f.newChunkedUpload(t, "expiring", time.Minute)
	f.putChunk(t, expiring.ID, "1", "one")

	keptDir, expiringDir := f.chunkRecord(t, kept.ID).Dir, f.chunkRecord(t, expiring.ID).Dir
	dirGoneDir := f.chunkRecord(t, dirGone.ID).Dir
	orphanDir := f.s.chunkDirPath(newBlobID())
	unrecorded := f.s.chunkPath(keptDir, newBlobID())
	for _, p := range []string{orphanDir, filepath.Join(orphanDir, newBlobID())} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(unrecorded, []byte("never recorded"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(f.chunkFilePath(t, kept.ID, "lost")); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(f.chunkFilePath(t, kept.ID, "short"), 3); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(f.s.chunkDirPath(dirGoneDir)); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(2 * time.Minute)

	f.reopen(t)
	f.wantChunks(t, kept.ID, map[string]string{"whole": "content of whole"})
	if r := f.chunkRecord(t, kept.ID); r.Parts != 1 {
		t.Fatalf("recorded parts = %d, want 1", r.Parts)
	}
	for _, p := range []string{orphanDir, unrecorded} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s survived the open (%v)", filepath.Base(p), err)
		}
	}
	f.wantChunkedUploadGone(t, dirGone.ID, dirGoneDir)
	f.wantChunkedUploadGone(t, expiring.ID, expiringDir)
	if dirs := f.chunkDirs(t); !slices.Equal(dirs, []string{keptDir}) {
		t.Fatalf("chunk directories = %v, want only %s", dirs, keptDir)
	}
}

// chunkFilePath returns the path of the file of part name of upload id.
func (f *fixture) chunkFilePath(t testing.TB, id, name string) string {
	t.Helper()
	p, _, err := f.s.chunkFile(id, name)
	if err != nil {
		t.Fatalf("file of part %q: %v", name, err)
	}
	return p
}

func TestChunkedUploadsExpireInBackground(t *testing.T) {
	clk := newClock()
	dir := t.TempDir()
	s, err := Open(dir, Options{Now: clk.Now, SessionSweep: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &fixture{s: s, clk: clk, dir: dir}
	expiring := f.newChunkedUpload(t, "expiring", time.Minute)
	f.putChunk(t, expiring.ID, "1", "one")
	live := f.newChunkedUpload(t, "live", time.Hour)
	f.putChunk(t, live.ID, "1", "one")
	expiringDir, liveDir := f.chunkRecord(t, expiring.ID).Dir, f.chunkRecord(t, live.ID).Dir
	clk.Advance(2 * time.Minute)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(s.chunkDirPath(expiringDir)); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background sweep did not remove the expired upload's parts")
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.wantChunkedUploadGone(t, expiring.ID, expiringDir)
	if dirs := f.chunkDirs(t); !slices.Equal(dirs, []string{liveDir}) {
		t.Fatalf("chunk directories = %v, want only %s", dirs, liveDir)
	}
	f.wantChunks(t, live.ID, map[string]string{"1": "one"})
}

func TestPurgeChunkedUploadsIsBounded(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, f.newChunkedUpload(t, fmt.Sprint("expiring", i), time.Minute).ID)
	}
	live := f.newChunkedUpload(t, "live", 3*time.Hour)
	f.clk.Advance(time.Hour)
	if n, err := f.s.purgeChunkedUploads(2); err != nil || n != 2 {
		t.Fatalf("purge of at most 2 = %d, %v; want 2", n, err)
	}
	if n, err := f.s.purgeChunkedUploads(100); err != nil || n != 3 {
		t.Fatalf("purge of the rest = %d, %v; want 3", n, err)
	}
	if _, err := f.s.ChunkedUpload(ctx, live.ID); err != nil {
		t.Fatalf("live upload: %v", err)
	}
	if dirs := f.chunkDirs(t); len(dirs) != 1 {
		t.Fatalf("chunk directories = %v, want the live upload's alone", dirs)
	}
}

// Parts being written while their upload is removed leave nothing behind.
func TestChunkedUploadRemovedWhilePut(t *testing.T) {
	const writers = 8
	f := newFixture(t)
	for round := range 20 {
		id := fmt.Sprint("round", round)
		f.newChunkedUpload(t, id, time.Hour)
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.s.PutChunk(ctx, id, fmt.Sprint(i), strings.NewReader(strings.Repeat("x", 32<<10)))
				if err != nil && !errors.Is(err, storage.ErrNotFound) {
					errs <- err
				}
			}()
		}
		if err := f.s.RemoveChunkedUpload(ctx, id); err != nil {
			t.Fatalf("RemoveChunkedUpload: %v", err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("PutChunk racing a removal: %v", err)
		}
		if dirs := f.chunkDirs(t); len(dirs) != 0 {
			t.Fatalf("round %d left chunk directories %v", round, dirs)
		}
	}
}

// A removed part takes its file with it and is counted out of its
// upload, for good.
func TestRemoveChunkDropsFileAndCount(t *testing.T) {
	f := newFixture(t)
	u := f.newChunkedUpload(t, "einstein/ng/remove", time.Hour)
	f.putChunk(t, u.ID, "1", "one")
	f.putChunk(t, u.ID, "2", "two")
	path := f.chunkFilePath(t, u.ID, "2")
	if err := f.s.RemoveChunk(ctx, u.ID, "2"); err != nil {
		t.Fatalf("RemoveChunk: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the removed part's file survived (%v)", err)
	}
	f.reopen(t)
	f.wantChunks(t, u.ID, map[string]string{"1": "one"})
	if r := f.chunkRecord(t, u.ID); r.Parts != 1 {
		t.Fatalf("recorded parts = %d, want 1", r.Parts)
	}
}

// repeatReader yields n bytes of a pattern without holding them.
type repeatReader struct{ n int64 }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n)]
	for i := range p {
		p[i] = byte(i)
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// A part streams to its file: memory does not grow with its size.
func TestPutChunkStreams(t *testing.T) {
	const partSize = 64 << 20
	s, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.CreateChunkedUpload(ctx, storage.ChunkedUpload{ID: "big", User: "einstein"}); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c, err := s.PutChunk(ctx, "big", "1", &repeatReader{n: partSize})
	runtime.ReadMemStats(&after)
	if err != nil || c.Size != partSize {
		t.Fatalf("PutChunk = %+v, %v", c, err)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	if allocated > 4<<20 {
		t.Fatalf("a part of %d MiB allocated %d KiB", partSize>>20, allocated>>10)
	}
	t.Logf("a part of %d MiB allocated %d KiB", partSize>>20, allocated>>10)
}

// A part that does not fit on the disk is insufficient storage (507).
func TestCopyChunkDiskFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	f := newFixture(t)
	_, err = f.s.copyChunk(full, strings.NewReader("does not fit"), nil)
	wantErr(t, err, storage.ErrInsufficientStorage)
}
