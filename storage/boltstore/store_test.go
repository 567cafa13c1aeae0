package boltstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/davspaces/davspaces/storage"
)

func TestOpenCreatesLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "nested")
	openStore(t, dir, nil)
	for _, p := range []string{"meta.db", "blobs", "uploads"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	openStore(t, dir, nil)
	s, err := Open(dir, Options{})
	if err == nil {
		s.Close()
		t.Fatal("second Open succeeded")
	}
	if !strings.Contains(err.Error(), "is locked by another process") {
		t.Fatalf("error = %v", err)
	}
}

func TestCloseTwice(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestStorageID(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := s.StorageID()
	if _, err := uuid.Parse(id); err != nil {
		t.Fatalf("generated storage id %q: %v", id, err)
	}
	s.Close()

	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.StorageID(); got != id {
		t.Fatalf("storage id after reopen = %q, want %q", got, id)
	}
	s.Close()

	s2, err := Open(t.TempDir(), Options{StorageID: "mystorage"})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := s2.StorageID(); got != "mystorage" {
		t.Fatalf("explicit storage id = %q", got)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	f := newFixture(t)
	a := f.mkdir(t, f.root(), "a")
	file := f.put(t, a.ID, "f.txt", "hello")
	if err := f.s.PatchProps(ctx, f.space.ID, file.ID, []storage.PropPatch{{Property: storage.Property{
		Name: storage.PropName{Space: "urn:x", Local: "p"}, Value: "v"}}}); err != nil {
		t.Fatal(err)
	}
	moved, _, err := f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: "g.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if moved.ID != file.ID {
		t.Fatalf("move changed the id: %s → %s", file.ID, moved.ID)
	}
	storageID := f.s.StorageID()
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, f.dir, f.clk)
	<-s.sweepDone
	f.s = s
	if s.StorageID() != storageID {
		t.Fatal("storage id changed")
	}
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "einstein", DisplayName: "Albert Einstein"})
	if err != nil || sp.ID != f.space.ID {
		t.Fatalf("personal space after reopen = %v, %v; want %s", sp.ID, err, f.space.ID)
	}
	got := f.node(t, file.ID)
	if got != moved {
		t.Fatalf("node after reopen = %+v, want %+v", got, moved)
	}
	if c := f.read(t, file.ID); c != "hello" {
		t.Fatalf("content after reopen = %q", c)
	}
	props, err := s.Props(ctx, f.space.ID, file.ID, "")
	if err != nil || len(props) != 1 || props[0].Value != "v" {
		t.Fatalf("props after reopen = %v, %v", props, err)
	}
	if got := f.node(t, a.ID); got.ID != a.ID || got.Name != "a" {
		t.Fatalf("folder after reopen = %+v", got)
	}
}

func TestReopenClearsUploads(t *testing.T) {
	f := newFixture(t)
	u, err := f.s.NewUpload(ctx, f.space.ID)
	if err != nil {
		t.Fatal(err)
	}
	u.Write([]byte("never committed"))
	entries, _ := os.ReadDir(filepath.Join(f.dir, "uploads"))
	if len(entries) != 1 {
		t.Fatalf("uploads/ holds %d entries during the upload, want 1", len(entries))
	}
	// Simulate a crash: the process goes away without Discard.
	f.s.Close()
	if err := os.WriteFile(filepath.Join(f.dir, "uploads", "stray"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	openStore(t, f.dir, nil)
	entries, err = os.ReadDir(filepath.Join(f.dir, "uploads"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("uploads/ after reopen holds %v", entries)
	}
}

func TestReopenSweepsOrphanBlobs(t *testing.T) {
	f := newFixture(t)
	keep := f.put(t, f.root(), "keep.txt", "keep me")
	keepBlob := f.blob(t, keep.ID)
	f.s.Close()

	// A crash after putting content in place but before its metadata
	// committed leaves an unreferenced content file.
	orphan := newBlobID()
	orphanPath := filepath.Join(f.dir, "blobs", orphan[:2], orphan)
	if err := os.MkdirAll(filepath.Dir(orphanPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(orphanPath, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, f.dir, nil)
	<-s.sweepDone
	if _, err := os.Stat(orphanPath); !os.IsNotExist(err) {
		t.Fatalf("orphan content file still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "blobs", keepBlob[:2], keepBlob)); err != nil {
		t.Fatalf("referenced content file: %v", err)
	}
	f.s = s
	if got := f.read(t, keep.ID); got != "keep me" {
		t.Fatalf("content = %q", got)
	}
}

func TestNameValidationAtEveryEntry(t *testing.T) {
	f := newFixture(t)
	file := f.put(t, f.root(), "f", "x")
	for _, bad := range []string{"", ".", "..", "a/b", "a\x00", strings.Repeat("n", 256)} {
		_, err := f.s.Mkdir(ctx, f.space.ID, f.root(), bad)
		wantErr(t, err, storage.ErrInvalid)
		_, _, err = f.commit(f.root(), bad, "x", storage.Commit{})
		wantErr(t, err, storage.ErrInvalid)
		_, err = f.s.Child(ctx, f.space.ID, f.root(), bad)
		wantErr(t, err, storage.ErrInvalid)
		_, _, err = f.s.Move(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: bad})
		wantErr(t, err, storage.ErrInvalid)
		_, _, err = f.s.Copy(ctx, f.space.ID, storage.Transfer{NodeID: file.ID, NewParentID: f.root(), NewName: bad})
		wantErr(t, err, storage.ErrInvalid)
	}
	// Nothing leaked into uploads/ or blobs/.
	entries, _ := os.ReadDir(filepath.Join(f.dir, "uploads"))
	if len(entries) != 0 {
		t.Fatalf("uploads/ holds %d entries", len(entries))
	}
}

func TestCodecRoundTrip(t *testing.T) {
	f := newFixture(t)
	n := f.put(t, f.root(), "f", "12345")
	var r rec
	f.s.view(func(tx *txn) (err error) { r, err = tx.nodeIn(f.space.ID, n.ID); return err })
	got, err := decodeNode(encodeNode(&r))
	r.SpaceID = "" // the node's ancestry says its space, not its record
	if err != nil || got != r {
		t.Fatalf("round trip = %+v, %v; want %+v", got, err, r)
	}
	enc := encodeNode(&r)
	for i := range enc {
		if _, err := decodeNode(enc[:i]); err == nil {
			t.Fatalf("decoding a record cut at %d succeeded", i)
		}
	}
	sp := storage.Space{ID: "s", Type: storage.SpaceProject, Name: "n", Quota: 7, Members: map[string]storage.Role{"a": storage.RoleEditor, "b": storage.RoleViewer}}
	gotSp, err := decodeSpace("s", encodeSpace(&sp))
	if err != nil || gotSp.Name != "n" || gotSp.Quota != 7 || len(gotSp.Members) != 2 || gotSp.Members["a"] != storage.RoleEditor {
		t.Fatalf("space round trip = %+v, %v", gotSp, err)
	}
	encSp := encodeSpace(&sp)
	for i := range encSp {
		if _, err := decodeSpace("s", encSp[:i]); err == nil {
			t.Fatalf("decoding a space cut at %d succeeded", i)
		}
	}
}
