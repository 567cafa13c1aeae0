package localtree

import (
	"cmp"
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
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/davspaces/davspaces/storage"
)

// ImportOptions say how to import.
type ImportOptions struct {
	// Workers is how many files are imported at once; 0 means
	// DefaultWorkers. A store makes every commit durable before it
	// answers, and commits that arrive together share that wait, so
	// several files in flight import a tree of small files many times
	// faster than one at a time.
	Workers int
	Observer
}

// DefaultWorkers is how many files an import has in flight by default.
const DefaultWorkers = 16

// Import brings the tree below the local folder srcDir into the space,
// below the folder at destPath (slash-separated from the space's root;
// missing folders are created). Every file is streamed into an upload and
// committed with its modification time, as a PUT is: checksums are
// computed while it streams, the quota is checked, and a WebDAV lock that
// someone holds on the target is respected.
//
// Folders keep no modification time of their own: in a store, a folder's
// is the time of the latest change below it.
//
// A file already in the space with the same size and SHA1 is left as it
// is, its modification time too (Summary.Unchanged), so an import that was
// interrupted can simply be run again; one that differs is replaced (its old content becomes a
// version). Import never replaces a file that changed in the space while
// it was compared, and never one created there meanwhile.
//
// What cannot be imported is reported through opts.Report and left out,
// and the import goes on: symbolic links and special files, names the
// store refuses, files the quota cannot hold, locked files, a file where
// the space has a folder (or the reverse), and local files that cannot be
// read or that change while they are read. It stops with an error when
// the store cannot go on at all (its storage full, its backend
// unreachable) or ctx ends; the summary then says what was done.
func Import(ctx context.Context, store storage.Store, spaceID, srcDir, destPath string, opts ImportOptions) (Summary, error) {
	root, err := sourceRoot(srcDir)
	if err != nil {
		return Summary{}, err
	}
	space, err := store.Space(ctx, spaceID)
	if err != nil {
		return Summary{}, fmt.Errorf("import: space %s: %w", spaceID, err)
	}
	dest, created, err := makeFolders(ctx, store, spaceID, destPath)
	if err != nil {
		return Summary{}, fmt.Errorf("import: destination %s: %w", destPath, err)
	}
	im := &importer{store: store, space: space, root: root, obs: opts.Observer}
	im.sum.Folders = created
	im.done.TotalFiles, im.done.TotalBytes = countTree(ctx, root)
	im.obs.progress(im.done)
	im.folders = []folderAt{{rel: ".", id: dest.ID}}
	// The walk creates the folders in order and hands the files to the
	// workers; the first error of either ends both.
	files, fctx := errgroup.WithContext(ctx)
	files.SetLimit(cmp.Or(opts.Workers, DefaultWorkers))
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, walkErr error) error {
		return im.visit(fctx, files, p, d, walkErr)
	})
	if ferr := files.Wait(); ferr != nil {
		err = ferr // the cause; the walk only saw fctx end
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return im.summary(), fmt.Errorf("import %s: %w", srcDir, err)
	}
	return im.summary(), nil
}

// sourceRoot returns the folder an import walks: srcDir, with a symbolic
// link to a folder resolved (only below it are links left out).
func sourceRoot(srcDir string) (string, error) {
	root, err := filepath.EvalSymlinks(srcDir)
	if err != nil {
		return "", fmt.Errorf("import: %w", err)
	}
	info, err := os.Stat(root)
	if err != nil {
		return "", fmt.Errorf("import: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("import: %s is not a folder: %w", srcDir, storage.ErrInvalid)
	}
	return root, nil
}

// countTree counts the regular files below root and their bytes: a quick
// first pass that gives the progress its totals. What it cannot read it
// leaves out; the import proper reports it.
func countTree(ctx context.Context, root string) (files, bytes int64) {
	filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if ctx.Err() != nil {
			return filepath.SkipAll
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				files++
				bytes += info.Size()
			}
		}
		return nil
	})
	return files, bytes
}

// importer is the state of one Import.
type importer struct {
	store storage.Store
	space storage.Space
	root  string
	// folders is the chain of folders from the import's root to the one
	// being walked: a file's folder is always on it, since WalkDir goes
	// depth first. Only the walk uses it.
	folders []folderAt

	// mu guards what the walk and the workers share, and makes the calls
	// of obs one at a time.
	mu   sync.Mutex
	obs  Observer
	done Progress
	sum  Summary
}

// folderAt is a local folder (relative to the import's root) and the
// folder of the space it is imported into.
type folderAt struct {
	rel string
	id  string
}

// visit imports one entry of the walk: a folder at once, a regular file
// on one of the workers of files.
func (im *importer) visit(ctx context.Context, files *errgroup.Group, p string, d fs.DirEntry, walkErr error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rel, err := filepath.Rel(im.root, p)
	if err != nil {
		return err
	}
	rel = filepath.ToSlash(rel)
	if walkErr != nil {
		if rel == "." {
			return walkErr
		}
		// A folder that cannot be listed is visited a second time with
		// the error (it was created already, and stays empty).
		im.skip(rel, ReasonUnreadable, walkErr)
		return nil
	}
	if rel == "." {
		return nil
	}
	parent := im.folderOf(path.Dir(rel))
	name := d.Name()
	switch {
	case d.IsDir():
		return im.folder(ctx, parent, p, rel, name)
	case d.Type().IsRegular():
		files.Go(func() error { return im.file(ctx, parent, p, rel, name, d) })
		return nil
	}
	im.skip(rel, ReasonSpecial, fmt.Errorf("a %s", typeName(d.Type())))
	return nil
}

// folderOf returns the space's folder for the local folder rel, which is
// on the chain of folders being walked, and drops the ones the walk has
// left.
func (im *importer) folderOf(rel string) string {
	for len(im.folders) > 1 && im.folders[len(im.folders)-1].rel != rel {
		im.folders = im.folders[:len(im.folders)-1]
	}
	return im.folders[len(im.folders)-1].id
}

// folder imports the local folder rel as name in folder parentID, or
// leaves it out, with everything below it, when it cannot.
func (im *importer) folder(ctx context.Context, parentID, p, rel, name string) error {
	if err := storage.ValidName(name, nil); err != nil {
		im.skipFolder(ctx, p, rel, ReasonName, err)
		return filepath.SkipDir
	}
	n, made, err := ensureFolder(ctx, im.store, im.space.ID, parentID, name)
	if err != nil {
		reason, ok := refusalReason(err)
		if !ok {
			return fmt.Errorf("%s: %w", rel, err)
		}
		im.skipFolder(ctx, p, rel, reason, err)
		return filepath.SkipDir
	}
	if made {
		im.mu.Lock()
		im.sum.Folders++
		im.mu.Unlock()
	}
	im.folders = append(im.folders, folderAt{rel: rel, id: n.ID})
	return nil
}

// file imports the local file p (rel) as name in folder parentID, unless
// the space has it already. Whatever comes of it, the file is done for the
// progress.
func (im *importer) file(ctx context.Context, parentID, p, rel, name string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		im.skip(rel, ReasonUnreadable, err)
		return nil
	}
	read, err := im.importFile(ctx, parentID, p, rel, name, info)
	im.mu.Lock()
	defer im.mu.Unlock()
	im.done.Files++
	im.done.Bytes += info.Size() - read
	im.obs.progress(im.done)
	return err
}

// importFile is file's work. It returns how many bytes of the file it
// counted into the progress as it read them.
func (im *importer) importFile(ctx context.Context, parentID, p, rel, name string, info fs.FileInfo) (read int64, err error) {
	if err := storage.ValidName(name, nil); err != nil {
		im.skip(rel, ReasonName, err)
		return 0, nil
	}
	place, replaced, err := im.placeFor(ctx, parentID, p, rel, name, info)
	if err != nil || place == nil {
		return 0, err
	}
	if err := im.checkRoom(ctx, info.Size()-replaced); err != nil {
		return 0, im.refused(rel, err, nil)
	}
	n, read, err := im.upload(ctx, p, rel, info, *place)
	if err != nil || n == nil {
		return read, err
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	im.sum.Files++
	im.sum.Bytes += n.Size
	return read, nil
}

// placeFor returns where the local file p goes: a new file, or the one of
// that name it replaces, with the conditions that make the commit fail
// rather than overwrite a change made in the space meanwhile, and the
// size the commit frees. A nil place means the file is done with: found
// unchanged, or left out.
func (im *importer) placeFor(ctx context.Context, parentID, p, rel, name string, info fs.FileInfo) (*storage.Commit, int64, error) {
	// No lock is held: a lock someone took refuses the commit.
	noLocks := &storage.LockTokens{}
	existing, err := im.store.Child(ctx, im.space.ID, parentID, name)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return &storage.Commit{ParentID: parentID, Name: name,
			Conditions: storage.Conditions{IfNoneMatch: true, Locks: noLocks}}, 0, nil
	case err != nil:
		return nil, 0, im.refused(rel, err, nil)
	case existing.IsFolder():
		im.skip(rel, ReasonConflict, errors.New("the space has a folder of that name"))
		return nil, 0, nil
	}
	if existing.Size == info.Size() {
		same, err := hasSHA1(p, existing.Checksums.SHA1)
		if err != nil {
			im.skip(rel, ReasonUnreadable, err)
			return nil, 0, nil
		}
		if same {
			im.unchanged(info.Size())
			return nil, 0, nil
		}
	}
	return &storage.Commit{NodeID: existing.ID,
		Conditions: storage.Conditions{IfMatch: existing.ETag, Locks: noLocks}}, existing.Size, nil
}

// hasSHA1 reports whether the content of the local file p has the SHA1
// want (lower-case hex).
func hasSHA1(p, want string) (bool, error) {
	if want == "" {
		return false, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := sha1.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	return hex.EncodeToString(h.Sum(nil)) == want, nil
}

// checkRoom refuses, before any byte is read, a file that would grow the
// space by growth bytes past what its quota can hold even once the trash
// and versions are given up: as a PUT that announces its length is.
func (im *importer) checkRoom(ctx context.Context, growth int64) error {
	if im.space.Quota < 0 || growth <= 0 {
		return nil
	}
	u, err := im.store.Usage(ctx, im.space.ID)
	if err != nil {
		return fmt.Errorf("usage of space %s: %w", im.space.ID, err)
	}
	return u.CheckRoom(im.space.Quota, growth)
}

// upload streams the local file p into an upload and commits it at place
// with the file's modification time, and returns the node and how many
// bytes it read. A nil node means the file was left out and reported.
func (im *importer) upload(ctx context.Context, p, rel string, info fs.FileInfo, place storage.Commit) (*storage.Node, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		im.skip(rel, ReasonUnreadable, err)
		return nil, 0, nil
	}
	defer f.Close()
	up, err := im.store.NewUpload(ctx, im.space.ID)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: new upload: %w", rel, err)
	}
	defer up.Discard()
	src := &progressReader{r: f, im: im}
	if _, err := io.Copy(up, src); err != nil {
		if src.err != nil {
			im.skip(rel, ReasonUnreadable, src.err)
			return nil, src.read, nil
		}
		return nil, src.read, fmt.Errorf("%s: storing: %w", rel, err)
	}
	if changed, err := changedSince(f, info, up.Size()); changed {
		im.skip(rel, ReasonChanged, err)
		return nil, src.read, nil
	}
	place.ModTime = info.ModTime()
	n, _, err := up.Commit(ctx, place)
	if err != nil {
		return nil, src.read, im.refused(rel, err, nil)
	}
	return &n, src.read, nil
}

// changedSince reports whether the open file f, of which read bytes were
// read, is no longer as info described it when the import found it.
func changedSince(f *os.File, info fs.FileInfo, read int64) (bool, error) {
	now, err := f.Stat()
	switch {
	case err != nil:
		return true, err
	case read != info.Size() || now.Size() != info.Size() || !now.ModTime().Equal(info.ModTime()):
		return true, fmt.Errorf("%d bytes when found, %d read, %d now", info.Size(), read, now.Size())
	}
	return false, nil
}

// progressReader reads a local file for an upload, counting its bytes into
// the progress and remembering why reading failed, so that a local read
// error can be told from one of the store.
type progressReader struct {
	r       io.Reader
	im      *importer
	err     error
	read    int64 // counted into the progress
	pending int64 // read since the progress was last told
}

func (pr *progressReader) Read(p []byte) (int, error) {
	n, err := pr.r.Read(p)
	if err != nil && err != io.EOF {
		pr.err = err
	}
	pr.pending += int64(n)
	if pr.pending >= progressStep {
		pr.im.addBytes(pr.pending)
		pr.read += pr.pending
		pr.pending = 0
	}
	return n, err
}

// addBytes counts n bytes read into the progress and tells it.
func (im *importer) addBytes(n int64) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.done.Bytes += n
	im.obs.progress(im.done)
}

// refused reports a refusal of the store that concerns one file or folder
// and returns then (nil for a file, filepath.SkipDir for a folder); any
// other error is the import's end.
func (im *importer) refused(rel string, err error, then error) error {
	reason, ok := refusalReason(err)
	if !ok {
		return fmt.Errorf("%s: %w", rel, err)
	}
	im.skip(rel, reason, err)
	return then
}

// refusalReason tells a store's refusal of one file or folder, after which
// the import goes on, from an error that ends it: a full backing storage
// or an unreachable backend fails every later file as well.
func refusalReason(err error) (Reason, bool) {
	switch {
	case errors.Is(err, storage.ErrNoSpace), errors.Is(err, storage.ErrUnavailable):
		return "", false
	case errors.Is(err, storage.ErrInsufficientStorage):
		return ReasonQuota, true
	case errors.Is(err, storage.ErrLocked):
		return ReasonLocked, true
	case errors.Is(err, storage.ErrInvalid):
		return ReasonName, true
	case errors.Is(err, storage.ErrConflict), errors.Is(err, storage.ErrExists),
		errors.Is(err, storage.ErrPrecondition), errors.Is(err, storage.ErrNotFound):
		return ReasonConflict, true
	}
	return "", false
}

// unchanged counts a file the space has already.
func (im *importer) unchanged(size int64) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.sum.Unchanged++
	im.sum.UnchangedBytes += size
}

// skip reports something left out.
func (im *importer) skip(rel string, reason Reason, err error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.sum.Skipped++
	im.obs.report(Skip{Path: rel, Reason: reason, Err: err})
}

// summary returns what the import has done so far.
func (im *importer) summary() Summary {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.sum
}

// skipFolder reports the local folder p (rel) left out, and counts the
// files below it as done for the progress.
func (im *importer) skipFolder(ctx context.Context, p, rel string, reason Reason, err error) {
	im.skip(rel, reason, err)
	files, bytes := countTree(ctx, p)
	im.mu.Lock()
	defer im.mu.Unlock()
	im.done.Files += files
	im.done.Bytes += bytes
	im.obs.progress(im.done)
}

// typeName names the type of a file that is neither a regular file nor a
// folder.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
