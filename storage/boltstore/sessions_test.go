package boltstore

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
)

// newSession starts a session of length bytes for name in the root.
func (f *fixture) newSession(t testing.TB, name string, length int64, ttl time.Duration) storage.UploadSession {
	t.Helper()
	us, err := f.s.CreateSession(ctx, storage.UploadSession{
		SpaceID: f.space.ID,
		User:    "einstein",
		Length:  length,
		Target:  storage.Commit{ParentID: f.root(), Name: name},
		Expires: f.clk.Now().Add(ttl),
	})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return us
}

func (f *fixture) appendPart(t testing.TB, id string, offset int64, part string) {
	t.Helper()
	if _, err := f.s.AppendSession(ctx, id, offset, strings.NewReader(part), nil); err != nil {
		t.Fatalf("AppendSession %q at %d: %v", part, offset, err)
	}
}

// reopen closes the store and opens it again on the same directory.
func (f *fixture) reopen(t testing.TB) {
	t.Helper()
	if err := f.s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	f.s = openStore(t, f.dir, f.clk)
}

func (f *fixture) sessionOffset(t testing.TB, id string) int64 {
	t.Helper()
	us, err := f.s.Session(ctx, id)
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	return us.Offset
}

func (f *fixture) sessionFileSize(t testing.TB, id string) int64 {
	t.Helper()
	info, err := os.Stat(f.s.sessionPath(id))
	if err != nil {
		t.Fatalf("session file: %v", err)
	}
	return info.Size()
}

func TestSessionSurvivesRestart(t *testing.T) {
	f := newFixture(t)
	us := f.newSession(t, "f", 10, time.Hour)
	f.appendPart(t, us.ID, 0, "hello")
	f.reopen(t)
	if got := f.sessionOffset(t, us.ID); got != 5 {
		t.Fatalf("offset after restart = %d, want 5", got)
	}
	f.appendPart(t, us.ID, 5, "world")
	n, _, err := f.s.CompleteSession(ctx, us.ID, nil, time.Time{})
	if err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	want := checksum.NewWriter()
	want.Write([]byte("helloworld"))
	if f.read(t, n.ID) != "helloworld" || f.settled(t, n).Checksums != want.Sums() {
		t.Fatalf("committed %q with %v", f.read(t, n.ID), n.Checksums)
	}
	if _, err := os.Stat(f.s.sessionPath(us.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("session file after completion: %v", err)
	}
}

// A crash between writing a part and recording it leaves bytes past the
// recorded offset; they were never acknowledged and must go.
func TestSessionCrashSurplusIsCut(t *testing.T) {
	tests := []struct {
		name   string
		reopen bool // recovered at open, or else before the next append
	}{
		{"at open", true},
		{"on next append", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			us := f.newSession(t, "f", 8, time.Hour)
			f.appendPart(t, us.ID, 0, "abcd")
			file, err := os.OpenFile(f.s.sessionPath(us.ID), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			file.WriteString("XX")
			file.Close()
			if tt.reopen {
				f.reopen(t)
				if got := f.sessionFileSize(t, us.ID); got != 4 {
					t.Fatalf("session file after open = %d bytes, want 4", got)
				}
			}
			if got := f.sessionOffset(t, us.ID); got != 4 {
				t.Fatalf("offset = %d, want 4", got)
			}
			f.appendPart(t, us.ID, 4, "efgh")
			n, _, err := f.s.CompleteSession(ctx, us.ID, nil, time.Time{})
			if err != nil {
				t.Fatalf("CompleteSession: %v", err)
			}
			if got := f.read(t, n.ID); got != "abcdefgh" {
				t.Fatalf("content = %q", got)
			}
		})
	}
}

// wantSessionGone checks that session id and its bytes are gone.
func (f *fixture) wantSessionGone(t testing.TB, id string) {
	t.Helper()
	if _, err := f.s.Session(ctx, id); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Session %s: err %v, want ErrNotFound", id, err)
	}
	var stored bool
	f.s.view(func(tx *txn) error {
		stored = tx.sessions().Get([]byte(id)) != nil
		return nil
	})
	if stored {
		t.Fatalf("session %s: record still stored", id)
	}
	if _, err := os.Stat(f.s.sessionPath(id)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("session %s: file still there (%v)", id, err)
	}
}

func TestSessionRecoveryAtOpen(t *testing.T) {
	tests := []struct {
		name string
		// damage changes what a session left on disk before the reopen;
		// gone says whether the session must have ended.
		damage func(t *testing.T, f *fixture, id string)
		gone   bool
	}{
		{"intact", func(*testing.T, *fixture, string) {}, false},
		{"expired", func(_ *testing.T, f *fixture, _ string) { f.clk.Advance(2 * time.Hour) }, true},
		{"file lost", func(t *testing.T, f *fixture, id string) {
			if err := os.Remove(f.s.sessionPath(id)); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"file shorter than offset", func(t *testing.T, f *fixture, id string) {
			if err := os.Truncate(f.s.sessionPath(id), 1); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"record unreadable", func(t *testing.T, f *fixture, id string) {
			err := f.s.update(func(tx *txn) error { return tx.sessions().Put([]byte(id), []byte{sessionFormat, 0xff}) })
			if err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			us := f.newSession(t, "f", 4, time.Hour)
			f.appendPart(t, us.ID, 0, "ab")
			orphan := filepath.Join(f.s.sessionDir, newBlobID())
			if err := os.WriteFile(orphan, []byte("no record"), 0o600); err != nil {
				t.Fatal(err)
			}
			tt.damage(t, f, us.ID)
			f.reopen(t)
			if _, err := os.Stat(orphan); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("file without a record survived the open (%v)", err)
			}
			if tt.gone {
				f.wantSessionGone(t, us.ID)
				return
			}
			if got := f.sessionOffset(t, us.ID); got != 2 {
				t.Fatalf("offset = %d, want 2", got)
			}
		})
	}
}

func TestPurgeSessionsIsBounded(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for i := range 5 {
		ids = append(ids, f.newSession(t, fmt.Sprint("f", i), 1, time.Minute).ID)
	}
	live := f.newSession(t, "live", 1, 3*time.Hour)
	f.clk.Advance(time.Hour)
	if n, err := f.s.purgeSessions(2); err != nil || n != 2 {
		t.Fatalf("purge of at most 2 = %d, %v; want 2", n, err)
	}
	var unlocks []func()
	for _, id := range ids {
		unlock, ok := f.s.sessionLocks.tryLock(id)
		if !ok {
			t.Fatalf("session %s is locked", id)
		}
		unlocks = append(unlocks, unlock)
	}
	if n, err := f.s.purgeSessions(100); err != nil || n != 0 {
		t.Fatalf("purge of sessions in use = %d, %v; want 0", n, err)
	}
	for _, unlock := range unlocks {
		unlock()
	}
	if n, err := f.s.purgeSessions(100); err != nil || n != 3 {
		t.Fatalf("purge of the rest = %d, %v; want 3", n, err)
	}
	for _, id := range ids {
		f.wantSessionGone(t, id)
	}
	if got := f.sessionOffset(t, live.ID); got != 0 {
		t.Fatalf("live session offset = %d", got)
	}
}

func TestSessionsExpireInBackground(t *testing.T) {
	clk := newClock()
	dir := t.TempDir()
	s, err := Open(dir, Options{Now: clk.Now, SessionSweep: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, clk: clk, dir: dir, space: sp}
	us := f.newSession(t, "f", 4, time.Minute)
	f.appendPart(t, us.ID, 0, "ab")
	clk.Advance(2 * time.Minute)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(s.sessionPath(us.ID)); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background sweep did not remove the expired session's bytes")
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.wantSessionGone(t, us.ID)
}

func TestFiftySessionsInParallel(t *testing.T) {
	const (
		sessions = 50
		parts    = 4
		partSize = 64 << 10
	)
	f := newFixture(t)
	contents := make([][]byte, sessions)
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		contents[i] = make([]byte, parts*partSize)
		rand.Read(contents[i])
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- f.uploadInParts(fmt.Sprintf("f%02d", i), contents[i], partSize)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, content := range contents {
		n, err := f.s.Child(ctx, f.space.ID, f.root(), fmt.Sprintf("f%02d", i))
		if err != nil {
			t.Fatal(err)
		}
		want := checksum.NewWriter()
		want.Write(content)
		if got := f.read(t, n.ID); got != string(content) || f.settled(t, n).Checksums != want.Sums() {
			t.Fatalf("file %d: content or checksums differ", i)
		}
	}
	if entries, _ := os.ReadDir(f.s.sessionDir); len(entries) != 0 {
		t.Fatalf("%d session files left", len(entries))
	}
}

// uploadInParts uploads content as name in parts of partSize, each with
// its own checksum.
func (f *fixture) uploadInParts(name string, content []byte, partSize int) error {
	us, err := f.s.CreateSession(ctx, storage.UploadSession{
		SpaceID: f.space.ID, User: "einstein", Length: int64(len(content)),
		Target: storage.Commit{ParentID: f.root(), Name: name},
	})
	if err != nil {
		return err
	}
	for off := 0; off < len(content); off += partSize {
		part := content[off:min(off+partSize, len(content))]
		sums := checksum.NewWriter()
		sums.Write(part)
		check := &checksum.Expected{Algorithm: checksum.Adler32, Digest: sums.Sums().Adler32}
		if _, err := f.s.AppendSession(ctx, us.ID, int64(off), bytes.NewReader(part), check); err != nil {
			return fmt.Errorf("%s at %d: %w", name, off, err)
		}
	}
	_, _, err = f.s.CompleteSession(ctx, us.ID, nil, time.Time{})
	return err
}

// zeroReader is an endless source of zero bytes that allocates nothing.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// An append streams through one fixed buffer, whatever the size of the part.
func TestAppendSessionMemoryIsFlat(t *testing.T) {
	const size = 32 << 20
	f := newFixture(t)
	us := f.newSession(t, "big", size, time.Hour)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := f.s.AppendSession(ctx, us.ID, 0, io.LimitReader(zeroReader{}, size), nil)
	runtime.ReadMemStats(&after)
	if err != nil || got.Offset != size {
		t.Fatalf("AppendSession = %d, %v", got.Offset, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
		t.Fatalf("appending %d MiB allocated %d KiB", size>>20, alloc>>10)
	}
}

// The two benchmarks upload the same 64 MiB, durably: as one session part
// and completion, and as a plain upload and commit.
const benchUploadSize = 64 << 20

func BenchmarkAppendSession64MiB(b *testing.B) {
	f := newFixture(b)
	b.SetBytes(benchUploadSize)
	for i := 0; b.Loop(); i++ {
		us, err := f.s.CreateSession(ctx, storage.UploadSession{
			SpaceID: f.space.ID, User: "einstein", Length: benchUploadSize,
			Target: storage.Commit{ParentID: f.root(), Name: "big"},
		})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.s.AppendSession(ctx, us.ID, 0, io.LimitReader(zeroReader{}, benchUploadSize), nil); err != nil {
			b.Fatal(err)
		}
		if _, _, err := f.s.CompleteSession(ctx, us.ID, nil, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUploadCommit64MiB(b *testing.B) {
	f := newFixture(b)
	b.SetBytes(benchUploadSize)
	buf := make([]byte, appendBufferSize)
	for b.Loop() {
		u, err := f.s.NewUpload(ctx, f.space.ID)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(u, io.LimitReader(zeroReader{}, benchUploadSize), buf); err != nil {
			b.Fatal(err)
		}
		if _, _, err := u.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "big"}); err != nil {
			b.Fatal(err)
		}
	}
}

const sessionCrashDirEnv = "BOLTSTORE_SESSION_CRASH_DIR"

// sessionCrashLength is the length of the session the crash test uploads,
// sessionCrashPart the size of its parts.
const (
	sessionCrashLength = 4 << 20
	sessionCrashPart   = 32 << 10
)

// sessionCrashContent is the content the crash test uploads: every byte
// depends on its offset, so bytes at the wrong place show.
func sessionCrashContent() []byte {
	b := make([]byte, sessionCrashLength)
	for i := range b {
		b[i] = byte(i*7 + i>>13)
	}
	return b
}

// sessionCrashWriter is the child process of TestSessionCrashRecovery: it
// appends to the session named on its first output line until killed,
// reporting every acknowledged offset.
func sessionCrashWriter(dir string) {
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(1)
	}
	s, err := Open(dir, Options{})
	if err != nil {
		fail(err)
	}
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "crash"})
	if err != nil {
		fail(err)
	}
	us, err := s.CreateSession(ctx, storage.UploadSession{
		SpaceID: sp.ID, User: "crash", Length: sessionCrashLength,
		Target: storage.Commit{ParentID: sp.ID, Name: "f"},
	})
	if err != nil {
		fail(err)
	}
	fmt.Println("session", us.ID)
	content := sessionCrashContent()
	for us.Offset < us.Length {
		part := content[us.Offset:min(us.Offset+sessionCrashPart, us.Length)]
		if us, err = s.AppendSession(ctx, us.ID, us.Offset, bytes.NewReader(part), nil); err != nil {
			fail(err)
		}
		fmt.Println("ok", us.Offset)
	}
	select {} // wait for the kill
}

// TestSessionCrashRecovery kills a process appending to a session with
// SIGKILL: every acknowledged byte is kept, nothing unacknowledged shows,
// and the upload resumes from the offset the store reports.
func TestSessionCrashRecovery(t *testing.T) {
	if dir := os.Getenv(sessionCrashDirEnv); dir != "" {
		sessionCrashWriter(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	cmd := testpeer.Command(os.Args[0], "-test.run=^TestSessionCrashRecovery$")
	cmd.Env = append(os.Environ(), sessionCrashDirEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	var acked int64
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == "session" {
			id = fields[1]
		}
		if len(fields) > 0 && fields[0] == "error" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("writer: %s", sc.Text())
		}
		if len(fields) == 2 && fields[0] == "ok" {
			acked, _ = strconv.ParseInt(fields[1], 10, 64)
			if acked >= sessionCrashLength/3 {
				break
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
	if id == "" || acked == 0 {
		t.Fatal("writer acknowledged nothing")
	}

	f := &fixture{clk: newClock(), dir: dir}
	f.s = openStore(t, dir, nil)
	sp, err := f.s.PersonalSpace(ctx, storage.User{ID: "crash"})
	if err != nil {
		t.Fatal(err)
	}
	f.space = sp
	offset := f.sessionOffset(t, id)
	if offset < acked || f.sessionFileSize(t, id) != offset {
		t.Fatalf("after the crash: offset %d, file %d bytes; %d acknowledged", offset, f.sessionFileSize(t, id), acked)
	}
	content := sessionCrashContent()
	if _, err := f.s.AppendSession(ctx, id, offset, bytes.NewReader(content[offset:]), nil); err != nil {
		t.Fatalf("resume at %d: %v", offset, err)
	}
	n, _, err := f.s.CompleteSession(ctx, id, nil, time.Time{})
	if err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	want := checksum.NewWriter()
	want.Write(content)
	if f.read(t, n.ID) != string(content) || f.settled(t, n).Checksums != want.Sums() {
		t.Fatal("the resumed upload's content or checksums differ from what was sent")
	}
}

// A completion that cannot put the content in place for want of space is
// insufficient storage, ends the session and leaves nothing behind.
func TestCompleteSessionDiskFull(t *testing.T) {
	f := newFixture(t)
	us := f.newSession(t, "f", 4, time.Hour)
	f.appendPart(t, us.ID, 0, "abcd")
	f.s.rename = func(oldpath, newpath string) error {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: syscall.ENOSPC}
	}
	_, _, err := f.s.CompleteSession(ctx, us.ID, nil, time.Time{})
	wantErr(t, err, storage.ErrInsufficientStorage)
	f.wantSessionGone(t, us.ID)
	if names := f.names(t, f.root()); len(names) != 0 {
		t.Fatalf("failed completion created %v", names)
	}
	if got := countFiles(t, filepath.Join(f.dir, "blobs")); got != 0 {
		t.Fatalf("%d content files left", got)
	}
}

// A call waiting for another on the same session gives up with its context.
func TestSessionWaitEndsWithContext(t *testing.T) {
	f := newFixture(t)
	us := f.newSession(t, "f", 4, time.Hour)
	unlock, ok := f.s.sessionLocks.tryLock(us.ID)
	if !ok {
		t.Fatal("session lock taken")
	}
	defer unlock()
	waiting, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err := f.s.AppendSession(waiting, us.ID, 0, strings.NewReader("abcd"), nil)
	wantErr(t, err, context.DeadlineExceeded)
	wantErr(t, f.s.RemoveSession(waiting, us.ID), context.DeadlineExceeded)
	if got := f.sessionOffset(t, us.ID); got != 0 {
		t.Fatalf("offset = %d", got)
	}
}

// Session ids arrive in URLs and name files: only ids the store made are
// looked up, and nothing outside the sessions directory is touched.
func TestSessionIDsAreNotPaths(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{"", "../meta.db", "../blobs", strings.Repeat("A", 32), strings.Repeat("0", 31) + "/", strings.Repeat("f", 33)} {
		_, err := f.s.AppendSession(ctx, id, 0, strings.NewReader("x"), nil)
		wantErr(t, err, storage.ErrNotFound)
		wantErr(t, f.s.RemoveSession(ctx, id), storage.ErrNotFound)
		_, _, err = f.s.CompleteSession(ctx, id, nil, time.Time{})
		wantErr(t, err, storage.ErrNotFound)
		_, err = f.s.Session(ctx, id)
		wantErr(t, err, storage.ErrNotFound)
	}
	if _, err := os.Stat(filepath.Join(f.dir, dbFile)); err != nil {
		t.Fatalf("database: %v", err)
	}
}
