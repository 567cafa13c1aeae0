package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/google/uuid"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// NewUpload starts receiving the content of a file in the space: in memory
// while it can still be kept inline, then into a temporary file under
// uploads/.
func (s *Store) NewUpload(ctx context.Context, spaceID string) (storage.Upload, error) {
	if _, err := s.Space(ctx, spaceID); err != nil {
		return nil, fmt.Errorf("new upload: %w", err)
	}
	u := &upload{s: s, spaceID: spaceID, sum: checksum.NewWriter()}
	if !s.keepsInline(0) {
		if err := u.spill(); err != nil {
			return nil, fmt.Errorf("new upload: %w", err)
		}
	}
	return u, nil
}

// upload is a storage.Upload. Its content stays in memory (mem) while it is
// small enough to be kept inline: a small file then costs no temporary
// file, whose creation and removal would wait for the file system's
// journal. Past that it moves to a temporary file (f, at path).
type upload struct {
	s       *Store
	spaceID string
	sum     *checksum.Writer

	mu       sync.Mutex
	finished bool // committed or discarded
	mem      []byte
	f        *os.File // nil while the content is in mem
	path     string
	size     int64
	wb       writeback
	// failed is the error of a failed write: the checksums may then cover
	// bytes the file lacks, so the upload can only be discarded.
	failed error
	// later: sum computes only the digests asked for (HashInline); the
	// others are computed after the commit.
	later bool
}

var errFinished = errors.New("upload is finished")

// Write adds p to the content and the checksums.
func (u *upload) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.writable(); err != nil {
		return 0, err
	}
	return u.write(p)
}

// writable fails unless the upload takes more bytes: it is neither
// finished nor failed. The caller holds u.mu.
func (u *upload) writable() error {
	if u.finished {
		return fmt.Errorf("write: %w", errFinished)
	}
	return u.failed
}

// write is Write with u.mu held. The content goes to memory while it can
// still be kept inline, else to the temporary file, created when first
// needed.
func (u *upload) write(p []byte) (int, error) {
	if u.f == nil && u.s.keepsInline(u.size+int64(len(p))) {
		u.mem = append(u.mem, p...)
		u.sum.Write(p)
		u.size += int64(len(p))
		return len(p), nil
	}
	if err := u.ensureFile(); err != nil {
		return 0, err
	}
	n, err := writeHashed(u.f, u.size, p, u.sum)
	u.size += int64(n)
	u.wb.wrote(u.size)
	if err != nil {
		u.failed = fmt.Errorf("write upload: %w", diskFull(err))
		return n, u.failed
	}
	return n, nil
}

// ensureFile moves the content to the temporary file unless it is there
// already; a failure fails the upload.
func (u *upload) ensureFile() error {
	if u.f != nil {
		return nil
	}
	if err := u.spill(); err != nil {
		u.failed = fmt.Errorf("write upload: %w", diskFull(err))
		return u.failed
	}
	return nil
}

// spill moves the content held in memory to a new temporary file.
func (u *upload) spill() error {
	f, err := os.CreateTemp(u.s.uploadDir, "upload-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(u.mem); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	u.f, u.path, u.mem = f, f.Name(), nil
	u.wb = u.s.newWriteback(f, u.size)
	return nil
}

// parallelWriteMin is the smallest write hashed on another goroutine
// while it is written: below it, the hand-off costs more than it saves.
const parallelWriteMin = 16 << 10

// writeHashed writes p to f at off and feeds it to each of hashes,
// writing and hashing at the same time: on a disk that takes the bytes
// about as fast as they are hashed, doing one after the other would halve
// the speed of an upload. The hashes get all of p even when the write
// fails; the caller must then drop them.
func writeHashed(f *os.File, off int64, p []byte, hashes ...io.Writer) (int, error) {
	if len(p) < parallelWriteMin {
		n, err := f.WriteAt(p, off)
		for _, h := range hashes {
			h.Write(p[:n])
		}
		return n, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, h := range hashes {
			h.Write(p)
		}
	}()
	n, err := f.WriteAt(p, off)
	<-done
	return n, err
}

// Size is the number of bytes written so far.
func (u *upload) Size() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.size
}

// Checksums of the bytes written so far.
func (u *upload) Checksums() checksum.Sums {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sum.Sums()
}

// Discard drops the content. It is safe to call more than once and after
// Commit.
func (u *upload) Discard() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.finished {
		return nil
	}
	u.finished, u.mem = true, nil
	if u.f == nil {
		return nil
	}
	u.f.Close()
	u.f = nil
	if err := os.Remove(u.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("discard upload: %w", err)
	}
	return nil
}

// Commit makes the content durable and visible as the file c.NodeID, or
// else c.Name in folder c.ParentID. The upload is finished afterwards,
// whether Commit succeeded or not.
func (u *upload) Commit(ctx context.Context, c storage.Commit) (storage.Node, bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.finished {
		return storage.Node{}, false, fmt.Errorf("commit %s: %w", c.Target(), errFinished)
	}
	u.finished = true
	f, data := u.f, u.mem
	u.f, u.mem = nil, nil
	err := u.failed
	if err == nil {
		err = storage.ValidCommit(c, nil)
	}
	if err == nil {
		err = ctx.Err()
	}
	if f != nil {
		err = u.closeFile(f, err)
	}
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("commit %s: %w", c.Target(), diskFull(err))
	}
	var (
		n        storage.Node
		created  bool
		partsDir string // of the chunked upload the commit ended
		also     func(*txn) error
	)
	if c.Assembles != "" {
		// It may run more than once (updateGrouped): the last run counts.
		also = func(t *txn) (err error) {
			partsDir, err = t.endAssembly(c)
			return err
		}
	}
	content := newContent{size: u.size, sums: u.sum.Sums()}
	if f == nil {
		content.inline = data
		if u.later {
			completeInline(&content)
		}
		n, created, err = u.s.commitInline(u.spaceID, content, c, also)
	} else {
		n, created, err = u.s.commitContentFile(u.spaceID, u.path, content, c, also)
	}
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("commit %s: %w", c.Target(), err)
	}
	if partsDir != "" {
		u.s.removeChunkDir(partsDir)
	}
	return n, created, nil
}

// closeFile syncs and closes the temporary file f of a commit that has not
// failed so far (err), and removes it when the commit fails.
func (u *upload) closeFile(f *os.File, err error) error {
	if err == nil {
		err = u.s.sync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(u.path)
	}
	return err
}

// commit records the complete, synced file at tmp, of content.size bytes
// with checksums content.sums, as the content of the target node: inline
// when it is small, else as a new content file. A resumable upload ends
// here; also, when set, runs in the transaction that records the content
// (a session ends with it) and may run more than once (updateGrouped). The
// file at tmp is gone afterwards, whether commit succeeded or not.
func (s *Store) commit(spaceID, tmp string, content newContent, c storage.Commit, also func(*txn) error) (storage.Node, bool, error) {
	if !s.keepsInline(content.size) {
		return s.commitContentFile(spaceID, tmp, content, c, also)
	}
	data, err := readInlineFile(tmp, content.size)
	os.Remove(tmp)
	if err != nil {
		return storage.Node{}, false, err
	}
	content.inline = data
	completeInline(&content)
	return s.commitInline(spaceID, content, c, also)
}

// inlineWriter returns a Writer of the digests of algs, to be computed
// while the bytes arrive, when the store computes the others after the
// commit; else, or for an algorithm it does not know, of all three.
func (s *Store) inlineWriter(algs []checksum.Algorithm) *checksum.Writer {
	if s.digests == nil || !s.laterDigests {
		return checksum.NewWriter()
	}
	w, err := checksum.NewWriterOf(algs...)
	if err != nil {
		return checksum.NewWriter()
	}
	return w
}

// commitInline records content.inline as the content of the target node,
// inline.
func (s *Store) commitInline(spaceID string, content newContent, c storage.Commit, also func(*txn) error) (storage.Node, bool, error) {
	if content.inline == nil {
		// Only non-nil content is inline content (newContent).
		content.inline = []byte{}
	}
	content.blob, content.size = "", int64(len(content.inline))
	done, err := s.recordContent(spaceID, content, c, also)
	if err != nil {
		return storage.Node{}, false, err
	}
	return done.node.Node, done.created, nil
}

// commitContentFile puts the complete, synced file at tmp in place as a new
// content file and records it as the content of the target node, of
// content.size bytes with checksums content.sums. The file at tmp is gone
// afterwards, whether it succeeded or not.
func (s *Store) commitContentFile(spaceID, tmp string, content newContent, c storage.Commit, also func(*txn) error) (storage.Node, bool, error) {
	blob, err := s.placeContent(tmp)
	if err != nil {
		return storage.Node{}, false, err
	}
	defer s.pending.done(blob)
	content.blob, content.inline = blob, nil
	done, err := s.recordContent(spaceID, content, c, also)
	if err != nil || done.unchanged {
		s.removeBlobs([]string{blob})
	}
	if err != nil {
		return storage.Node{}, false, err
	}
	if !done.unchanged {
		s.queueDigests(done.node)
	}
	return done.node.Node, done.created, nil
}

// placeContent moves the file at tmp into place as a new content file,
// durably, and returns its id. The file is pending: the caller calls
// s.pending.done once metadata references it or it is removed.
func (s *Store) placeContent(tmp string) (string, error) {
	blob := newBlobID()
	if err := s.prepareBlobDir(blob); err != nil {
		os.Remove(tmp)
		return "", diskFull(err)
	}
	s.pending.add(blob)
	path := s.blobPath(blob)
	err := s.rename(tmp, path)
	if err == nil {
		err = s.syncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(tmp)
		os.Remove(path)
		s.pending.done(blob)
		return "", diskFull(err)
	}
	return blob, nil
}

// newContent is the content a commit records: a content file put in place
// (blob), or the bytes themselves, to be kept inline (inline, non-nil);
// size bytes with checksums sums either way.
type newContent struct {
	blob   string
	inline []byte
	size   int64
	sums   checksum.Sums
}

// committed is what recording a commit did: the file, and whether the
// commit created it. The content file it replaced, unless kept as a
// version, is removed once the commit is durable (txn.discardContent).
type committed struct {
	node    rec
	created bool
	// unchanged is a commit that wrote nothing (storage.Commit.Unchanged):
	// its content file is nobody's.
	unchanged bool
}

// store records c as the content of the file r in t.
func (c newContent) store(t *txn, r *rec) error {
	r.Blob, r.Inline = "", 0
	if c.inline != nil {
		k, err := t.putInline(c.inline)
		r.Inline = k
		return err
	}
	r.Blob = c.blob
	return t.blobs().Put([]byte(c.blob), []byte(r.ID))
}

// recordContent makes content the content of the file c names, creating
// the file if needed, in one transaction, with also when set. The
// transaction is grouped with concurrent ones, so that many small files
// are made durable by one commit.
func (s *Store) recordContent(spaceID string, content newContent, c storage.Commit, also func(*txn) error) (committed, error) {
	var done committed
	err := s.updateGrouped(func(t *txn) (err error) {
		done, err = t.recordContent(spaceID, content, c, also)
		return err
	})
	return done, err
}

// recordContent is the transaction of s.recordContent; it may run more
// than once (updateGrouped).
func (t *txn) recordContent(spaceID string, content newContent, c storage.Commit, also func(*txn) error) (committed, error) {
	target, err := t.commitTarget(spaceID, c)
	if err != nil {
		return committed{}, err
	}
	if err := t.checkHeld(spaceID, c.Locks, target.written()); err != nil {
		return committed{}, err
	}
	old, exists := target.old, target.exists
	if err := c.CheckReplace(old.Node, exists); err != nil {
		return committed{}, err
	}
	if c.Unchanged(old.Node, exists, content.size, content.sums) {
		return committed{node: old, unchanged: true}, nil
	}
	var oldSize int64
	if exists {
		oldSize = old.Size
	}
	// also ends a session, releasing its reservation: the quota then
	// counts its bytes once, as the file's.
	if also != nil {
		if err := also(t); err != nil {
			return committed{}, err
		}
	}
	created := !exists
	if created {
		// A file deleted from this place comes back to be replaced, so
		// that its history stays (Reviving): it is still created. Its
		// bytes move from the trash to the files, so the quota sees the
		// same growth.
		if target.old, target.exists, err = t.revive(spaceID, target.parentID, c.Name); err != nil {
			return committed{}, err
		}
		if target.exists {
			oldSize = target.old.Size
		}
	}
	// The files are checked as if nothing were kept: a replacement that
	// shrinks a file passes even in a space over its quota.
	if err := t.makeRoom(spaceID, content.size-oldSize); err != nil {
		return committed{}, err
	}
	if err := t.checkQuota(spaceID, content.size-oldSize); err != nil {
		return committed{}, err
	}
	if !target.exists {
		if err := t.addNodes(spaceID, 1); err != nil {
			return committed{}, err
		}
	}
	if target.exists {
		if err := t.replaceContent(spaceID, target.old); err != nil {
			return committed{}, err
		}
	}
	done, err := t.writeContent(target, content, c)
	if err != nil {
		return committed{}, err
	}
	done.created = created
	if err := t.propagate(target.parentID, content.size-oldSize); err != nil {
		return committed{}, err
	}
	if !target.exists || !t.retentionOf(spaceID).KeepsVersions() {
		return done, nil
	}
	// The replaced content is kept as a version only where the quota has
	// room for it: the newest of what the space keeps, it goes last.
	return done, t.trimUndo(spaceID)
}

// writeContent writes the file c names, with content, in place of
// target.old, whose content the caller has let go of (replaceContent), or
// as a new file.
func (t *txn) writeContent(target target, content newContent, c storage.Commit) (committed, error) {
	done := committed{created: !target.exists}
	if target.exists {
		done.node = target.old
	} else {
		done.node = rec{Node: storage.Node{
			ID:       uuid.NewString(),
			SpaceID:  target.spaceID,
			ParentID: target.parentID,
			Name:     c.Name,
			Kind:     storage.KindFile,
		}}
	}
	n := &done.node
	mtime := c.ModTime
	if mtime.IsZero() {
		mtime = t.now
	}
	n.Size = content.size
	n.ModTime = mtime.UTC()
	n.ETag = t.etag(n.ID)
	n.ContentType = c.ContentType
	n.Checksums = content.sums
	if err := content.store(t, n); err != nil {
		return committed{}, err
	}
	if target.exists {
		return done, t.putNode(n) // where it was: its index entry stays
	}
	return done, t.placeNode(n)
}

// target is the node a commit writes: the space and folder it is in, and
// the node itself (old) when it exists already.
type target struct {
	spaceID  string
	parentID string
	old      rec
	exists   bool
}

// written is the node whose locks a commit to target must hold: the file
// it replaces, else the folder that gains it.
func (tg target) written() lockedNode {
	if tg.exists {
		return lockedNode{id: tg.old.ID}
	}
	return lockedNode{id: tg.parentID}
}

// commitTarget resolves the node a commit replaces: c.NodeID wherever it
// is now, or the child c.Name of c.ParentID, which need not exist.
func (t *txn) commitTarget(spaceID string, c storage.Commit) (target, error) {
	if c.NodeID != "" {
		old, err := t.nodeIn(spaceID, c.NodeID)
		if err != nil {
			return target{}, err
		}
		return target{spaceID: spaceID, parentID: old.ParentID, old: old, exists: true}, nil
	}
	p, err := t.folderIn(spaceID, c.ParentID, storage.ErrConflict)
	if err != nil {
		return target{}, err
	}
	old, exists, err := t.child(p.ID, c.Name)
	if err != nil {
		return target{}, err
	}
	return target{spaceID: spaceID, parentID: p.ID, old: old, exists: exists}, nil
}
