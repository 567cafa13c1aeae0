package boltstore

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/checksum"
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
	n, _, err := f.s.CompleteSession(ctx, us.ID)
	if err != nil {
		t.Fatalf("CompleteSession: %v", err)
	}
	want := checksum.NewWriter()
	want.Write([]byte("helloworld"))
	if f.read(t, n.ID) != "helloworld" || n.Checksums != want.Sums() {
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
			n, _, err := f.s.CompleteSession(ctx, us.ID)
			if err != nil {
				t.Fatalf("CompleteSession: %v", err)
			}
			if got := f.read(t, n.ID); got != "abcdefgh" {
				t.Fatalf("content = %q", got)
			}
		})
	}
}
