package localtree

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// ExportOptions say how to export.
type ExportOptions struct {
	// Overwrite lets an export write into a destination that holds
	// something already: files of the same names are replaced, anything
	// else there is left as it is.
	Overwrite bool
	Observer
}

// An export holds a space's files, which only its members may read: what
// it creates is for the user who runs it alone (before the umask), and
// the administrator hands it on.
const (
	exportFileMode   = 0o600
	exportFolderMode = 0o700
)

// exportPage is how many children of a folder an export lists at a time.
const exportPage = 1000

// Export writes the node at srcPath in the space (slash-separated from
// its root; "" for the whole space) into the local folder destDir, which
// it creates when missing: a folder's tree as plain folders and files, a
// file as a file of its name, readable by the user who runs it only
// (0600 files, 0700 folders). Only the live tree is written, not the
// trash or versions. Every file is streamed from the store, checked
// against its SHA1 and given its modification time; a folder gets its own
// once everything below it is written.
//
// A destDir that holds anything is refused with ErrDestNotEmpty unless
// opts.Overwrite. What is removed from the space while it is exported is
// reported (ReasonGone) and left out, as is content that does not match
// its checksum (ReasonChecksum); any other error ends the export.
func Export(ctx context.Context, store storage.Store, spaceID, srcPath, destDir string, opts ExportOptions) (Summary, error) {
	src, err := lookupPath(ctx, store, spaceID, srcPath)
	if err != nil {
		return Summary{}, fmt.Errorf("export: space %s: %w", spaceID, err)
	}
	if err := prepareDest(destDir, opts.Overwrite); err != nil {
		return Summary{}, err
	}
	ex := &exporter{store: store, spaceID: spaceID, obs: opts.Observer}
	ex.done.TotalBytes = src.Size
	ex.obs.progress(ex.done)
	if src.IsFolder() {
		err = ex.folder(ctx, src, destDir, "")
	} else {
		err = ex.file(ctx, src, filepath.Join(destDir, src.Name), src.Name)
	}
	if err != nil {
		return ex.sum, fmt.Errorf("export to %s: %w", destDir, err)
	}
	return ex.sum, nil
}

// prepareDest makes sure the local folder dir exists and, unless
// overwrite, is empty.
func prepareDest(dir string, overwrite bool) error {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, exportFolderMode); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.IsDir() {
		return fmt.Errorf("export: %s is not a folder: %w", dir, storage.ErrInvalid)
	}
	if overwrite {
		return nil
	}
	if _, err := f.Readdirnames(1); !errors.Is(err, io.EOF) {
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return fmt.Errorf("export: %s: %w", dir, ErrDestNotEmpty)
	}
	return nil
}

// exporter is the state of one Export.
type exporter struct {
	store   storage.Store
	spaceID string
	obs     Observer
	done    Progress
	sum     Summary
}

// folder writes the children of the space's folder n into the local
// folder dir, page by page, and then gives dir n's modification time. rel
// names n in reports.
func (ex *exporter) folder(ctx context.Context, n storage.Node, dir, rel string) error {
	for after := ""; ; {
		page, err := ex.store.ReadDir(ctx, ex.spaceID, n.ID, after, exportPage)
		if err != nil {
			return ex.gone(rel, err)
		}
		for _, child := range page {
			if err := ex.child(ctx, child, filepath.Join(dir, child.Name), path.Join(rel, child.Name)); err != nil {
				return err
			}
		}
		if len(page) < exportPage {
			break
		}
		after = page[len(page)-1].Name
	}
	if err := os.Chtimes(dir, time.Time{}, n.ModTime); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return nil
}

// child writes one node of a folder to the local path target.
func (ex *exporter) child(ctx context.Context, n storage.Node, target, rel string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !n.IsFolder() {
		return ex.file(ctx, n, target, rel)
	}
	if err := makeLocalFolder(target); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	ex.sum.Folders++
	return ex.folder(ctx, n, target, rel)
}

// makeLocalFolder creates the local folder p, or accepts one that is there
// (an export that overwrites); a symbolic link is not one, lest the export
// write somewhere else.
func makeLocalFolder(p string) error {
	err := os.Mkdir(p, exportFolderMode)
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	if info, lerr := os.Lstat(p); lerr == nil && info.IsDir() {
		return nil
	}
	return fmt.Errorf("%s is in the way of a folder: %w", p, err)
}

// file writes the space's file n to the local path target, replacing what
// is there.
func (ex *exporter) file(ctx context.Context, n storage.Node, target, rel string) error {
	start := ex.done.Bytes
	defer func() {
		ex.done.Files++
		ex.done.Bytes = start + n.Size
		ex.obs.progress(ex.done)
	}()
	n, content, err := ex.store.Open(ctx, ex.spaceID, n.ID)
	if err != nil {
		return ex.gone(rel, err)
	}
	defer content.Close()
	if err := removeLocalFile(target); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	// O_EXCL: what was removed stays removed, and a link put there
	// meanwhile is not followed.
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, exportFileMode)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	sum, err := ex.copyContent(f, content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n.Checksums.SHA1 != "" && sum != n.Checksums.SHA1 {
		os.Remove(target)
		ex.skip(rel, ReasonChecksum, fmt.Errorf("the store records SHA1 %s, its content has %s", n.Checksums.SHA1, sum))
		return nil
	}
	if err == nil {
		err = os.Chtimes(target, time.Time{}, n.ModTime)
	}
	if err != nil {
		os.Remove(target)
		return fmt.Errorf("%s: %w", rel, err)
	}
	ex.sum.Files++
	ex.sum.Bytes += n.Size
	return nil
}

// copyContent streams content into f and returns its SHA1.
func (ex *exporter) copyContent(f *os.File, content io.Reader) (string, error) {
	h := sha1.New()
	w := &progressWriter{w: io.MultiWriter(f, h), done: &ex.done, obs: ex.obs}
	if _, err := io.Copy(w, content); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// removeLocalFile removes what is at the local path p unless it is a
// folder, so that an export that overwrites creates a fresh file.
func removeLocalFile(p string) error {
	info, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case info.IsDir():
		return fmt.Errorf("%s is a folder in the way of a file: %w", p, fs.ErrExist)
	}
	return os.Remove(p)
}

// gone reports a node removed from the space while it was exported, or
// returns any other error.
func (ex *exporter) gone(rel string, err error) error {
	if !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("%s: %w", rel, err)
	}
	ex.skip(rel, ReasonGone, nil)
	return nil
}

func (ex *exporter) skip(rel string, reason Reason, err error) {
	ex.sum.Skipped++
	ex.obs.report(Skip{Path: rel, Reason: reason, Err: err})
}

// progressWriter counts the bytes written into the progress.
type progressWriter struct {
	w       io.Writer
	done    *Progress
	obs     Observer
	pending int64
}

func (pw *progressWriter) Write(p []byte) (int, error) {
	n, err := pw.w.Write(p)
	pw.done.Bytes += int64(n)
	if pw.pending += int64(n); pw.pending >= progressStep {
		pw.pending = 0
		pw.obs.progress(*pw.done)
	}
	return n, err
}
