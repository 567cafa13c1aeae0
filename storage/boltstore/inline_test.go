package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// newInlineFixture is a fixture whose store keeps files up to limit bytes
// inline.
func newInlineFixture(t testing.TB, limit int64) *fixture {
	t.Helper()
	return newFixtureWith(t, newClock(), Options{InlineLimit: limit})
}

// rec returns the stored record of node id.
func (f *fixture) rec(t testing.TB, id string) rec {
	t.Helper()
	var r rec
	if err := f.s.view(func(tx *txn) (err error) { r, err = tx.nodeIn(f.space.ID, id); return err }); err != nil {
		t.Fatalf("rec %s: %v", id, err)
	}
	return r
}

// inlineValues counts the values of the inline bucket.
func (f *fixture) inlineValues(t testing.TB) int {
	t.Helper()
	n := 0
	if err := f.s.view(func(tx *txn) error { n = tx.inline().Stats().KeyN; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantStorage checks how many inline values and content files the store
// holds.
func (f *fixture) wantStorage(t testing.TB, inline, files int) {
	t.Helper()
	if got := f.inlineValues(t); got != inline {
		t.Errorf("%d inline values, want %d", got, inline)
	}
	if got := countFiles(t, filepath.Join(f.dir, "blobs")); got != files {
		t.Errorf("%d content files, want %d", got, files)
	}
}

func TestInlineLimit(t *testing.T) {
	tests := []struct {
		name   string
		limit  int64
		size   int
		inline bool
	}{
		{"empty", 0, 0, true},
		{"one byte", 0, 1, true},
		{"at the default limit", 0, DefaultInlineLimit, true},
		{"past the default limit", 0, DefaultInlineLimit + 1, false},
		{"at a chosen limit", 100, 100, true},
		{"past a chosen limit", 100, 101, false},
		{"inline off, empty", -1, 0, false},
		{"limit capped", 1 << 40, maxInlineLimit + 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newInlineFixture(t, tc.limit)
			content := strings.Repeat("x", tc.size)
			n := f.put(t, f.root(), "f", content)
			if r := f.rec(t, n.ID); r.inlined() != tc.inline {
				t.Fatalf("inline = %v, want %v", r.inlined(), tc.inline)
			}
			if got := f.read(t, n.ID); got != content {
				t.Fatalf("read %d bytes, want %d", len(got), len(content))
			}
			if tc.inline {
				f.wantStorage(t, 1, 0)
			} else {
				f.wantStorage(t, 0, 1)
			}
			if got := countFiles(t, filepath.Join(f.dir, "uploads")); got != 0 {
				t.Fatalf("%d files left in uploads/", got)
			}
		})
	}
}

// Replacing a file drops its old content wherever it was kept, and the new
// content goes where its size says.
func TestInlineReplace(t *testing.T) {
	small, large := "small", strings.Repeat("L", 200)
	tests := []struct {
		name          string
		first, second string
		inline, files int
	}{
		{"inline by inline", small, small + "!", 1, 0},
		{"inline by content file", small, large, 0, 1},
		{"content file by inline", large, small, 1, 0},
		{"content file by content file", large, large + "!", 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newInlineFixture(t, 100)
			f.keepNoUndo() // what is replaced is destroyed at once
			first := f.put(t, f.root(), "f", tc.first)
			second := f.put(t, f.root(), "f", tc.second)
			if second.ID != first.ID || second.ETag == first.ETag {
				t.Fatalf("replacement = %+v, first %+v", second, first)
			}
			if got := f.read(t, first.ID); got != tc.second {
				t.Fatalf("content = %q", got)
			}
			if got := f.node(t, f.root()).Size; got != int64(len(tc.second)) {
				t.Fatalf("root size = %d", got)
			}
			f.wantStorage(t, tc.inline, tc.files)
		})
	}
}

// Remove, Move onto a file, Copy and the copy's removal keep inline values
// exactly as many as the files that hold them.
func TestInlineTreeOperations(t *testing.T) {
	f := newInlineFixture(t, 100)
	f.keepNoUndo() // what is removed or replaced is destroyed at once
	src := f.mkdir(t, f.root(), "src")
	sub := f.mkdir(t, src.ID, "sub")
	f.put(t, src.ID, "a", "alpha")
	f.put(t, sub.ID, "b", "beta")
	f.put(t, src.ID, "big", strings.Repeat("B", 200))
	f.wantStorage(t, 2, 1)

	cp, _, err := f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: src.ID, NewParentID: f.root(), NewName: "copy"})
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	f.wantStorage(t, 4, 2)
	cpSub := mustChild(t, f, cp.ID, "sub")
	cpB := mustChild(t, f, cpSub.ID, "b")
	if got := f.read(t, cpB.ID); got != "beta" {
		t.Fatalf("copied content = %q", got)
	}
	if f.rec(t, cpB.ID).Inline == f.rec(t, mustChild(t, f, sub.ID, "b").ID).Inline {
		t.Fatal("the copy shares its inline value with the source")
	}

	// Moving a file onto the copied one drops the replaced file's value.
	a := mustChild(t, f, src.ID, "a")
	if _, _, err := f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: a.ID, NewParentID: cpSub.ID, NewName: "b", Overwrite: true}); err != nil {
		t.Fatalf("Move: %v", err)
	}
	f.wantStorage(t, 3, 2)
	if got := f.read(t, a.ID); got != "alpha" {
		t.Fatalf("moved content = %q", got)
	}

	if err := f.s.Remove(ctx, f.space.ID, src.ID, storage.Conditions{}); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	f.wantStorage(t, 2, 1)
	if got := f.read(t, mustChild(t, f, cp.ID, "a").ID); got != "alpha" {
		t.Fatalf("copy after removing the source = %q", got)
	}
	if err := f.s.Remove(ctx, f.space.ID, cp.ID, storage.Conditions{}); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	f.wantStorage(t, 0, 0)
	if got := f.node(t, f.root()).Size; got != 0 {
		t.Fatalf("root size = %d", got)
	}
}

// Inline content is durable with its record: it is read back after the
// store is opened again, and the sweep of content files leaves it alone.
func TestInlineSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, dir: dir, space: sp}
	n := f.put(t, f.root(), "f", "kept inline")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if f.s, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer f.s.Close()
	<-f.s.sweepDone
	if got := f.read(t, n.ID); got != "kept inline" {
		t.Fatalf("content after reopening = %q", got)
	}
}

// A record that says its content is inline but has none is corrupt, not an
// empty file.
func TestInlineMissingValueIsCorrupt(t *testing.T) {
	f := newInlineFixture(t, 0)
	n := f.put(t, f.root(), "f", "content")
	key := inlineKey(f.rec(t, n.ID).Inline)
	err := f.s.update(func(tx *txn) error { return tx.inline().Delete(key) })
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = f.s.Open(ctx, f.space.ID, n.ID)
	wantErr(t, err, errCorrupt)
}

func TestCodecInline(t *testing.T) {
	f := newInlineFixture(t, 0)
	r := f.rec(t, f.put(t, f.root(), "f", "12345").ID)
	if !r.inlined() || r.Blob != "" {
		t.Fatalf("record = %+v", r)
	}
	enc := encodeNode(&r)
	got, err := decodeNode(enc)
	r.SpaceID = "" // the node's ancestry says its space, not its record
	if err != nil || got != r {
		t.Fatalf("round trip = %+v, %v; want %+v", got, err, r)
	}
	for i := range enc {
		if _, err := decodeNode(enc[:i]); err == nil {
			t.Fatalf("decoding a record cut at %d succeeded", i)
		}
	}
	both := r
	both.Blob = newBlobID()
	if _, err := decodeNode(encodeNode(&both)); err == nil {
		t.Fatal("a file with both a content file and inline content decoded")
	}
}

// An upload stays in memory while it fits the limit and moves to a
// temporary file the moment it does not; either way the file has all the
// bytes, in order, and their checksums.
func TestUploadSpillsPastInlineLimit(t *testing.T) {
	tests := []struct {
		name   string
		writes []int
		inline bool
	}{
		{"nothing", nil, true},
		{"two writes up to the limit", []int{60, 40}, true},
		{"the second write crosses it", []int{60, 41}, false},
		{"one write past it", []int{101}, false},
		{"writes after crossing it", []int{99, 2, 1, 50}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newInlineFixture(t, 100)
			u, err := f.s.NewUpload(ctx, f.space.ID)
			if err != nil {
				t.Fatal(err)
			}
			var all strings.Builder
			for i, n := range tc.writes {
				p := strings.Repeat(string(rune('a'+i)), n)
				all.WriteString(p)
				if _, err := u.Write([]byte(p)); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
			}
			n, _, err := u.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "f"})
			if err != nil {
				t.Fatalf("Commit: %v", err)
			}
			if r := f.rec(t, n.ID); r.inlined() != tc.inline {
				t.Fatalf("inline = %v, want %v", r.inlined(), tc.inline)
			}
			w := checksum.NewWriter()
			w.Write([]byte(all.String()))
			if n.Checksums != w.Sums() || n.Size != int64(all.Len()) {
				t.Fatalf("node = %+v, want %d bytes with %v", n, all.Len(), w.Sums())
			}
			if got := f.read(t, n.ID); got != all.String() {
				t.Fatalf("content = %q", got)
			}
			if got := countFiles(t, filepath.Join(f.dir, "uploads")); got != 0 {
				t.Fatalf("%d files left in uploads/", got)
			}
		})
	}
}

// Discarding an upload, in memory or spilled, leaves nothing behind and
// finishes it.
func TestUploadDiscardInlineOrSpilled(t *testing.T) {
	for _, size := range []int{10, 200} {
		t.Run(fmt.Sprint(size, " bytes"), func(t *testing.T) {
			f := newInlineFixture(t, 100)
			u, err := f.s.NewUpload(ctx, f.space.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := u.Write(make([]byte, size)); err != nil {
				t.Fatal(err)
			}
			if err := u.Discard(); err != nil {
				t.Fatal(err)
			}
			if _, err := u.Write([]byte("x")); !errors.Is(err, errFinished) {
				t.Fatalf("Write after Discard = %v", err)
			}
			if _, _, err := u.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "f"}); !errors.Is(err, errFinished) {
				t.Fatalf("Commit after Discard = %v", err)
			}
			if got := countFiles(t, filepath.Join(f.dir, "uploads")); got != 0 {
				t.Fatalf("%d files left in uploads/", got)
			}
			f.wantStorage(t, 0, 0)
		})
	}
}
