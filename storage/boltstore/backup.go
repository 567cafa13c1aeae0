package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// A backup of the embedded store is a data directory of its own: meta.db,
// a copy of the database made in one read transaction (bbolt's
// Tx.WriteTo), and blobs/, the content files that copy references. Content
// files are immutable and only removed after the transaction that stops
// referencing them has committed, so they can be hard-linked rather than
// copied when the backup is on the same file system, and a backup into
// the directory of an earlier one only adds the content files it lacks.
//
// The database copy and the content files must agree although the server
// keeps serving: a content file the copy references may be removed (a
// purge, a replaced file) before it is linked. The link is then missing,
// and Backup takes a fresh copy of the database, which no longer
// references it, and links again: what was linked stays, so a retry costs
// only the database copy.
//
// Unfinished uploads (upload sessions, chunked uploads) are not backed
// up: their records are in the copy, their bytes are not, and the store
// ends such uploads when it is opened, as after losing their files.

// ErrLocked is returned by SnapshotOf when another process has the store
// open: a running server, which SnapshotTo is asked of instead.
var ErrLocked = errors.New("the store is open in another process")

// snapshotLockWait is how long SnapshotOf waits for the database lock
// before it concludes that a server holds it.
const snapshotLockWait = 200 * time.Millisecond

// SnapshotTo writes a consistent copy of the database to w, made in one
// read transaction, while the store serves. It returns the bytes written.
func (s *Store) SnapshotTo(w io.Writer) (n int64, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		n, err = snapshotOf(tx, w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("snapshot of %s: %w", s.dir, err)
	}
	return n, nil
}

// snapshotOf writes tx's copy of the database to w, reading the file past
// the page cache (snapshotReadFlag) where its file system allows.
func snapshotOf(tx *bolt.Tx, w io.Writer) (int64, error) {
	tx.WriteFlag = snapshotReadFlag
	n, err := tx.WriteTo(w)
	if n == 0 && errors.Is(err, syscall.EINVAL) {
		// A file system without direct reads (tmpfs) refuses the flag
		// when the file is opened, before anything is written.
		tx.WriteFlag = 0
		n, err = tx.WriteTo(w)
	}
	return n, err
}

// SnapshotSource is a store's database opened read-only by a process
// that is not serving it, to take snapshots of.
type SnapshotSource struct{ db *bolt.DB }

// OpenSnapshotSource opens the database of the store in dir read-only,
// or returns ErrLocked when a server has it open. While the source is
// open, no server can open the store.
func OpenSnapshotSource(dir string) (*SnapshotSource, error) {
	path := filepath.Join(dir, dbFile)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no store in %s: %w", dir, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: snapshotLockWait})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%s: %w", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return &SnapshotSource{db: db}, nil
}

// SnapshotTo writes a copy of the database to w.
func (src *SnapshotSource) SnapshotTo(w io.Writer) (n int64, err error) {
	err = src.db.View(func(tx *bolt.Tx) error {
		n, err = snapshotOf(tx, w)
		return err
	})
	return n, err
}

// Close releases the database.
func (src *SnapshotSource) Close() error { return src.db.Close() }

// BackupStats say what a backup did.
type BackupStats struct {
	// DatabaseBytes is the size of the database copy.
	DatabaseBytes int64
	// Linked and Copied count the content files added to the backup, over
	// all its passes; Skipped those of the last database copy that the
	// backup had already, from an earlier backup or an earlier pass of
	// this one. The Bytes count their sizes.
	Linked, Copied, Skipped                int
	LinkedBytes, CopiedBytes, SkippedBytes int64
	// Removed counts the content files of an earlier backup that the new
	// database copy no longer references.
	Removed int
	// Snapshots is how many database copies were taken: more than one when
	// content files went away while they were linked.
	Snapshots int
}

// BackupOptions say where a backup comes from.
type BackupOptions struct {
	// Snapshot writes a consistent copy of the store's database to w:
	// Store.SnapshotTo of the serving store, or SnapshotSource.SnapshotTo.
	Snapshot func(w io.Writer) (int64, error)
	// Progress, when set, is called after each content file with how many
	// of how many were settled.
	Progress func(done, total int64)
}

// backupAttempts bounds the fresh snapshots taken when content files go
// away during a backup: each attempt only has to link what changed since
// the one before, so several in a row mean a store that removes content
// faster than a snapshot is taken, or a content file missing for good.
const backupAttempts = 10

// Backup copies the store in dir into dest, a directory that is empty or
// holds an earlier backup of the store: a copy of the database, and the
// content files it references, hard-linked when dest is on the same file
// system, copied otherwise.
func Backup(ctx context.Context, dir, dest string, opts BackupOptions) (BackupStats, error) {
	var stats BackupStats
	b := backup{src: dir, dest: dest, stats: &stats, progress: opts.Progress}
	if err := b.prepare(); err != nil {
		return stats, err
	}
	partial := filepath.Join(dest, dbFile+".partial")
	defer os.Remove(partial)
	var missing missingContent
	for stats.Snapshots < backupAttempts {
		stats.Snapshots++
		stats.Skipped, stats.SkippedBytes = 0, 0
		n, err := writeSnapshotFile(partial, opts.Snapshot)
		if err != nil {
			return stats, err
		}
		stats.DatabaseBytes = n
		missing, err = b.fromCopy(ctx, partial)
		if err != nil {
			return stats, err
		}
		if missing.count > 0 {
			continue // removed since the snapshot: take a fresh one
		}
		if err := b.syncDirs(); err != nil {
			return stats, err
		}
		if err := os.Rename(partial, filepath.Join(dest, dbFile)); err != nil {
			return stats, fmt.Errorf("backup: %w", err)
		}
		return stats, syncDir(dest)
	}
	return stats, fmt.Errorf("backup: %d content files the database references are missing from %s after %d snapshots (the first: %s): run caddy davspaces check", missing.count, dir, stats.Snapshots, missing.first)
}

// missingContent counts the content files a database copy references that
// the store does not have, and names the first.
type missingContent struct {
	count int
	first string
}

// fromCopy settles the backup's content files with the database copy at
// path: it adds those missing and, when none is missing from the store,
// drops those the copy does not reference.
func (b *backup) fromCopy(ctx context.Context, path string) (missingContent, error) {
	var missing missingContent
	err := viewCopy(path, func(blobs *bolt.Bucket) error {
		var err error
		if missing, err = b.addContent(ctx, blobs); err != nil || missing.count > 0 {
			return err
		}
		b.stats.Removed, err = b.removeUnreferenced(blobs)
		return err
	})
	return missing, err
}

// viewCopy opens the database copy at path read-only and calls fn with
// its bucket of referenced content files (empty when it has none). The
// copy must not be open elsewhere.
func viewCopy(path string, fn func(blobs *bolt.Bucket) error) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: snapshotLockWait})
	if err != nil {
		return fmt.Errorf("opening the database copy %s: %w", path, err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		blobs := tx.Bucket(bucketBlobs)
		if blobs == nil {
			return fmt.Errorf("%s is no database of the embedded store", path)
		}
		return fn(blobs)
	})
}

// backup is one run of Backup.
type backup struct {
	src, dest string
	stats     *BackupStats
	progress  func(done, total int64)
	// copyOnly is set once a link failed across file systems.
	copyOnly bool
	// touched are the content directories given new entries, to flush.
	touched map[string]bool
}

// prepare makes the backup's directories.
func (b *backup) prepare() error {
	if err := os.MkdirAll(filepath.Join(b.dest, blobsDir), 0o700); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}

// writeSnapshotFile writes a snapshot into path, durably.
func writeSnapshotFile(path string, snapshot func(io.Writer) (int64, error)) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	n, err := snapshot(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("backup: database copy: %w", err)
	}
	return n, nil
}

// ReferencedContent returns the ids of the content files the database
// copy at path references (files, their versions, the trash), in order.
// It holds them all in memory: for tests and small stores; Backup walks
// them instead.
func ReferencedContent(path string) ([]string, error) {
	var ids []string
	err := viewCopy(path, func(blobs *bolt.Bucket) error {
		return blobs.ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		})
	})
	return ids, err
}

// validBlobID reports whether id can name a content file: long enough for
// its directory, and no path of its own.
func validBlobID(id string) bool {
	return len(id) > 2 && filepath.Base(id) == id && id != ".." && id != "."
}

// blobPath is where content file id lives under the data directory dir.
func blobPathIn(dir, id string) string {
	return filepath.Join(dir, blobsDir, id[:2], id)
}

// addContent puts every content file the bucket references into the
// backup, unless it is there already, and counts those missing from the
// store.
func (b *backup) addContent(ctx context.Context, blobs *bolt.Bucket) (missing missingContent, err error) {
	total, done := int64(blobs.Stats().KeyN), int64(0)
	err = blobs.ForEach(func(k, _ []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := string(k)
		if !validBlobID(id) {
			return fmt.Errorf("backup: the database references a content file named %q", id)
		}
		gone, err := b.addBlob(id)
		if err != nil {
			return err
		}
		if gone {
			if missing.count == 0 {
				missing.first = id
			}
			missing.count++
		}
		done++
		if b.progress != nil {
			b.progress(done, total)
		}
		return nil
	})
	return missing, err
}

// addBlob links or copies one content file into the backup, unless the
// backup has it; gone is true when the store does not have it (any more).
// A content file in the backup is whole (a link, or a copy renamed into
// place once written) and never changes, so having its name is enough:
// a pass over a fresh database copy costs one look-up in the backup per
// content file, which keeps the window in which a content file can go
// between the copy and its link short.
func (b *backup) addBlob(id string) (gone bool, err error) {
	src, dst := blobPathIn(b.src, id), blobPathIn(b.dest, id)
	if have, err := os.Stat(dst); err == nil && have.Mode().IsRegular() {
		b.skipped(have.Size())
		return false, nil
	}
	info, err := os.Stat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("backup: content file %s: %w", id, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return false, fmt.Errorf("backup: %w", err)
	}
	if b.touched == nil {
		b.touched = map[string]bool{}
	}
	b.touched[filepath.Dir(dst)] = true
	return b.place(id, src, dst, info.Size())
}

func (b *backup) skipped(size int64) {
	b.stats.Skipped++
	b.stats.SkippedBytes += size
}

// place links src to dst, or copies it when they are on different file
// systems. gone is true when src was removed meanwhile.
func (b *backup) place(id, src, dst string, size int64) (gone bool, err error) {
	if !b.copyOnly {
		os.Remove(dst) // a partial copy of an interrupted run
		err := os.Link(src, dst)
		switch {
		case err == nil:
			b.stats.Linked++
			b.stats.LinkedBytes += size
			return false, nil
		case errors.Is(err, fs.ErrNotExist):
			return true, nil
		case !crossDevice(err):
			return false, fmt.Errorf("backup: linking content file %s: %w", id, err)
		}
		b.copyOnly = true
	}
	err = copyContent(src, dst)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("backup: copying content file %s: %w", id, err)
	}
	b.stats.Copied++
	b.stats.CopiedBytes += size
	return false, nil
}

// crossDevice reports whether a link failed because its ends are on
// different file systems (or one that has no hard links).
func crossDevice(err error) bool {
	return errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP)
}

// copyContent copies src to dst durably: into a temporary file first, so
// that an interrupted copy never passes for a whole one.
func copyContent(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".partial"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// removeUnreferenced removes the content files of an earlier backup that
// the bucket does not reference, and leftovers of interrupted copies.
func (b *backup) removeUnreferenced(blobs *bolt.Bucket) (int, error) {
	removed := 0
	root := filepath.Join(b.dest, blobsDir)
	dirs, err := os.ReadDir(root)
	if err != nil {
		return 0, fmt.Errorf("backup: %w", err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(root, d.Name()))
		if err != nil {
			return removed, fmt.Errorf("backup: %w", err)
		}
		for _, e := range entries {
			if blobs.Get([]byte(e.Name())) != nil {
				continue
			}
			if err := os.Remove(filepath.Join(root, d.Name(), e.Name())); err != nil {
				return removed, fmt.Errorf("backup: %w", err)
			}
			removed++
		}
	}
	return removed, nil
}

// syncDirs flushes the entries of the content directories the backup
// added to, so that the database copy never lands before its content.
func (b *backup) syncDirs() error {
	for dir := range b.touched {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	b.touched = nil
	return syncDir(filepath.Join(b.dest, blobsDir))
}

// syncDir flushes a directory's entries (a rename) to stable storage.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// ErrNotEmpty is returned by Restore into a data directory that holds a
// store, unless it may be replaced.
var ErrNotEmpty = errors.New("the data directory holds a store")

// RestoreOptions say how to restore.
type RestoreOptions struct {
	// Replace lets Restore replace a store the directory holds.
	Replace bool
	// Progress, when set, is called after each content file with how many
	// of how many were restored.
	Progress func(done, total int64)
}

// the data directory's entries that make a store, which a restore replaces.
var storeEntries = []string{dbFile, blobsDir, uploadsDir, sessionsDir, chunksDir}

// Restore makes the data directory dir hold the backup in src (made by
// Backup): its database copied, its content files linked (or copied
// across file systems). No process may have the store in dir open. A
// directory holding a store is refused with ErrNotEmpty unless
// opts.Replace. The database is put in place last, so an interrupted
// restore leaves no store that looks whole.
func Restore(ctx context.Context, src, dir string, opts RestoreOptions) (BackupStats, error) {
	var stats BackupStats
	srcDB := filepath.Join(src, dbFile)
	if _, err := os.Stat(srcDB); err != nil {
		return stats, fmt.Errorf("restore: no backup in %s: %w", src, err)
	}
	if err := clearForRestore(dir, opts.Replace); err != nil {
		return stats, err
	}
	b := backup{src: src, dest: dir, stats: &stats, progress: opts.Progress}
	if err := b.prepare(); err != nil {
		return stats, err
	}
	var missing missingContent
	err := viewCopy(srcDB, func(blobs *bolt.Bucket) (err error) {
		missing, err = b.addContent(ctx, blobs)
		return err
	})
	if err != nil {
		return stats, err
	}
	if missing.count > 0 {
		return stats, fmt.Errorf("restore: the backup in %s lacks %d content files its database references (the first: %s)", src, missing.count, missing.first)
	}
	if err := b.syncDirs(); err != nil {
		return stats, err
	}
	// The database changes once the store is open: a copy, never a link.
	partial := filepath.Join(dir, dbFile+".partial")
	if err := copyContent(srcDB, partial); err != nil {
		return stats, fmt.Errorf("restore: database: %w", err)
	}
	info, err := os.Stat(partial)
	if err != nil {
		return stats, fmt.Errorf("restore: database: %w", err)
	}
	stats.DatabaseBytes = info.Size()
	if err := os.Rename(partial, filepath.Join(dir, dbFile)); err != nil {
		return stats, fmt.Errorf("restore: database: %w", err)
	}
	return stats, syncDir(dir)
}

// clearForRestore checks that dir holds no store, or removes the one it
// holds when replace is set. A store that has no space and no content file
// yet (a server started once) counts as none. A store open in another
// process is never touched.
func clearForRestore(dir string, replace bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	held, err := holdsStore(dir)
	if err != nil {
		return fmt.Errorf("restore into %s: %w", dir, err)
	}
	if held && !replace {
		return fmt.Errorf("restore into %s: %w", dir, ErrNotEmpty)
	}
	for _, name := range storeEntries {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("restore: removing the store in %s: %w", dir, err)
		}
	}
	return nil
}

// holdsStore reports whether dir has a space in its database or a content
// file. It returns ErrLocked when a process has the store open.
func holdsStore(dir string) (bool, error) {
	spaces, err := countSpaces(dir)
	if err != nil || spaces > 0 {
		return spaces > 0, err
	}
	dirs, err := os.ReadDir(filepath.Join(dir, blobsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, d := range dirs {
		entries, err := os.ReadDir(filepath.Join(dir, blobsDir, d.Name()))
		if err == nil && len(entries) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// countSpaces counts the spaces of the database in dir, 0 when there is
// none; ErrLocked when a process has it open.
func countSpaces(dir string) (int, error) {
	if _, err := os.Stat(filepath.Join(dir, dbFile)); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	src, err := OpenSnapshotSource(dir)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	n := 0
	err = src.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketSpaces); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n, err
}
