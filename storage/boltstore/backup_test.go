package boltstore

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// backupOf backs the fixture's store up into dest while it serves.
func (f *fixture) backupInto(t *testing.T, dest string) BackupStats {
	t.Helper()
	stats, err := Backup(ctx, f.dir, dest, BackupOptions{Snapshot: f.s.SnapshotTo})
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	return stats
}

// restored restores the backup in src into a fresh directory and opens it.
func restored(t *testing.T, src string) *Store {
	t.Helper()
	dir := t.TempDir()
	if _, err := Restore(ctx, src, dir, RestoreOptions{}); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return openStore(t, dir, nil)
}

func readFile(t *testing.T, s *Store, spaceID, nodeID string) string {
	t.Helper()
	_, c, err := s.Open(ctx, spaceID, nodeID)
	if err != nil {
		t.Fatalf("Open %s: %v", nodeID, err)
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A backup holds the files, their versions and the trash, and restores
// into a store that opens with all of them.
func TestBackupRestoresFilesVersionsAndTrash(t *testing.T) {
	f := newFixture(t)
	dir := f.mkdir(t, f.root(), "dir")
	a := f.put(t, dir.ID, "a.txt", "first")
	a = f.put(t, dir.ID, "a.txt", "second") // a version of "first"
	gone := f.put(t, f.root(), "gone.txt", "in the trash")
	if err := f.s.Remove(ctx, f.space.ID, gone.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	stats := f.backupInto(t, dest)
	if stats.Linked != 3 || stats.Copied != 0 || stats.Skipped != 0 || stats.Snapshots != 1 {
		t.Fatalf("stats %+v, want 3 content files linked in one snapshot", stats)
	}
	s := restored(t, dest)
	if got := readFile(t, s, f.space.ID, a.ID); got != "second" {
		t.Fatalf("restored a.txt holds %q", got)
	}
	versions, err := s.FileVersions(ctx, f.space.ID, a.ID)
	if err != nil || len(versions) != 1 {
		t.Fatalf("restored versions %v, %v", versions, err)
	}
	items, err := storage.AllTrashItems(ctx, s, f.space.ID)
	if err != nil || len(items) != 1 {
		t.Fatalf("restored trash %v, %v", items, err)
	}
}

// A backup into the directory of an earlier one adds only the content
// files it lacks and drops those no longer referenced.
func TestBackupIsIncremental(t *testing.T) {
	f := newFixture(t)
	f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{VersionsOff: true}})
	f.put(t, f.root(), "a.txt", "aaa")
	b := f.put(t, f.root(), "b.txt", "bbbb")
	dest := t.TempDir()
	f.backupInto(t, dest)
	f.put(t, f.root(), "c.txt", "ccccc")
	if err := f.s.Remove(ctx, f.space.ID, b.ID, storage.Conditions{}); err != nil {
		t.Fatal(err)
	}
	stats := f.backupInto(t, dest)
	if stats.Linked != 1 || stats.LinkedBytes != 5 || stats.Skipped != 1 || stats.SkippedBytes != 3 || stats.Removed != 1 {
		t.Fatalf("stats %+v, want c.txt linked, a.txt skipped, b.txt removed", stats)
	}
}

// Content files on another file system are copied; simulated by a link
// that fails as across file systems.
func TestBackupCopiesWhenLinksFail(t *testing.T) {
	f := newFixture(t)
	n := f.put(t, f.root(), "a.txt", "copied")
	dest := t.TempDir()
	b := backup{src: f.dir, dest: dest, stats: new(BackupStats), copyOnly: true}
	if err := b.prepare(); err != nil {
		t.Fatal(err)
	}
	if gone, err := b.addBlob(f.blobOf(t, n.ID)); gone || err != nil {
		t.Fatalf("addBlob: %v, %v", gone, err)
	}
	got, err := os.ReadFile(blobPathIn(dest, f.blobOf(t, n.ID)))
	if err != nil || string(got) != "copied" || b.stats.Copied != 1 {
		t.Fatalf("copy %q, %v, stats %+v", got, err, b.stats)
	}
	src, _ := os.Stat(blobPathIn(f.dir, f.blobOf(t, n.ID)))
	dst, _ := os.Stat(blobPathIn(dest, f.blobOf(t, n.ID)))
	if os.SameFile(src, dst) {
		t.Fatal("a copy is a link")
	}
}

// A content file removed between the database copy and its link (a file
// deleted while the backup runs) makes the backup take a fresh copy,
// which no longer references it.
func TestBackupRetriesWhenContentGoes(t *testing.T) {
	f := newFixture(t)
	f.s.SetRetention(storage.RetentionPolicy{Default: storage.Retention{VersionsOff: true}})
	keep := f.put(t, f.root(), "keep.txt", "kept")
	gone := f.put(t, f.root(), "gone.txt", "deleted during the backup")
	snapshots := 0
	snapshot := func(w io.Writer) (int64, error) {
		n, err := f.s.SnapshotTo(w)
		snapshots++
		if snapshots == 1 {
			// Deleted with no trash: its content file goes at once.
			if err := f.s.Remove(ctx, f.space.ID, gone.ID, storage.Conditions{}); err != nil {
				t.Error(err)
			}
		}
		return n, err
	}
	dest := t.TempDir()
	stats, err := Backup(ctx, f.dir, dest, BackupOptions{Snapshot: snapshot})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Snapshots != 2 {
		t.Fatalf("stats %+v, want a second snapshot", stats)
	}
	s := restored(t, dest)
	if got := readFile(t, s, f.space.ID, keep.ID); got != "kept" {
		t.Fatalf("keep.txt holds %q", got)
	}
	if _, err := s.Node(ctx, f.space.ID, gone.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("gone.txt in the restored store: %v", err)
	}
}

// A content file missing for good fails the backup after a bounded number
// of snapshots, leaving no database in the backup.
func TestBackupFailsOnMissingContent(t *testing.T) {
	f := newFixture(t)
	n := f.put(t, f.root(), "a.txt", "lost")
	if err := os.Remove(blobPathIn(f.dir, f.blobOf(t, n.ID))); err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	stats, err := Backup(ctx, f.dir, dest, BackupOptions{Snapshot: f.s.SnapshotTo})
	if err == nil || stats.Snapshots != backupAttempts {
		t.Fatalf("Backup: %v, stats %+v", err, stats)
	}
	if _, err := os.Stat(filepath.Join(dest, dbFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed backup left a database: %v", err)
	}
}

// A restore refuses a directory holding a store unless told to replace
// it, and never touches a store that is open.
func TestRestoreRefusesAStore(t *testing.T) {
	f := newFixture(t)
	f.put(t, f.root(), "a.txt", "a")
	dest := t.TempDir()
	f.backupInto(t, dest)
	if _, err := Restore(ctx, dest, f.dir, RestoreOptions{Replace: true}); !errors.Is(err, ErrLocked) {
		t.Fatalf("restore into an open store: %v, want ErrLocked", err)
	}
	other := newFixture(t)
	other.put(t, other.root(), "b.txt", "b")
	other.s.Close()
	if _, err := Restore(ctx, dest, other.dir, RestoreOptions{}); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("restore into a store: %v, want ErrNotEmpty", err)
	}
	if _, err := Restore(ctx, dest, other.dir, RestoreOptions{Replace: true}); err != nil {
		t.Fatalf("restore replacing a store: %v", err)
	}
	s := openStore(t, other.dir, nil)
	if _, err := s.Space(ctx, other.space.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("the replaced store's space is still there: %v", err)
	}
	if _, err := s.Space(ctx, f.space.ID); err != nil {
		t.Fatalf("the restored space: %v", err)
	}
}

// A store that was opened once but holds nothing is no store to keep.
func TestRestoreIntoAnEmptyStore(t *testing.T) {
	f := newFixture(t)
	f.put(t, f.root(), "a.txt", "a")
	dest := t.TempDir()
	f.backupInto(t, dest)
	empty := t.TempDir()
	s, err := Open(empty, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Restore(ctx, dest, empty, RestoreOptions{}); err != nil {
		t.Fatalf("restore into an empty store: %v", err)
	}
}

// blobOf returns the content file id of a file.
func (f *fixture) blobOf(t *testing.T, id string) string {
	t.Helper()
	var blob string
	err := f.s.view(func(tx *txn) error {
		r, _, err := tx.node(id)
		blob = r.Blob
		return err
	})
	if err != nil || blob == "" {
		t.Fatalf("content file of %s: %q, %v", id, blob, err)
	}
	return blob
}
