package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

var _ storage.ChunkedUploads = (*Store)(nil)

// Chunked uploads (chunking NG, ownCloud v1 chunks) keep their records in
// the buckets
//
//	chunked_uploads  upload id → encoded upload (user, times, claim, directory, part count)
//	chunk_parts      upload id → bucket of part name → encoded part (size, file)
//
// and the bytes of their parts in chunks/<dir>/<file>, outside uploads/,
// where dir and file are random ids the records name: upload ids and part
// names come from clients and never reach a path. Every upload gets a
// directory of its own, so one created again under an old id never meets
// the old one's files. A part's file is written and synced before the
// record that names it and never changed after: a replaced part gets a new
// file, the record switches to it in one transaction, and a reader of the
// old part keeps its open file; a removed part loses its record first and
// its file after. Parts that continue the digest chain (PutChunkAfter) are
// instead appended to the chain's staging file, which they share (a part
// is then the range Off, Size of it), so that an assembly of them links
// that one file as the content instead of copying the parts: a staged
// part is never rewritten either, and its file goes once no part and no
// chain names it. Files no record names (a crash between writing and
// recording, or between a removal's two steps) are removed when the store
// opens.
var (
	bucketChunkedUploads = []byte("chunked_uploads")
	bucketChunkParts     = []byte("chunk_parts")
)

const (
	chunksDir           = "chunks"
	chunkedUploadFormat = 1
	chunkFormat         = 1
)

// chunkedUploadRec is a chunked upload as stored.
type chunkedUploadRec struct {
	storage.ChunkedUpload
	Dir    string // directory of its parts under chunks/
	Parts  int    // number of parts, kept so a PutChunk need not count them
	Stored int64  // bytes of its parts, which its reservation covers
	Chain  digestChain
}

// digestChain is the digests of the whole file carried from part to part
// (PutChunkAfter): State covers, in order, the Len parts recorded with
// Epoch and the sequence numbers 1 to Len, the last of them named Last.
// Replacing or removing one of them starts a new Epoch with no parts, so
// that a part of an older chain is never taken for one of the current.
type digestChain struct {
	Epoch uint64
	Len   uint64
	Last  string
	State []byte // a marshaled checksum.Writer; nil while Len is 0
	// File is the staging file the chain's parts were appended to, Bytes
	// bytes of them, when they all were; "" when none was or a part was
	// stored in a file of its own (as stores before staging did).
	File  string
	Bytes int64
}

// staging returns the staging file a part continuing c is appended to and
// where: c's own, or a new one for a new chain; "" when c's parts are in
// files of their own.
func (c digestChain) staging() (file string, off int64, created bool) {
	switch {
	case c.Len == 0:
		return newBlobID(), 0, true
	case c.File != "":
		return c.File, c.Bytes, false
	}
	return "", 0, false
}

// restarted is the chain after one of its parts changed.
func (c digestChain) restarted() digestChain { return digestChain{Epoch: c.Epoch + 1} }

// covers reports whether part p is one of the chain's parts.
func (c digestChain) covers(p chunkRec) bool { return p.Seq > 0 && p.Epoch == c.Epoch }

// reservation is what r holds in its space's counters, claimed or not:
// the commit that assembles it ends it before its quota check
// (endAssembly).
func (r chunkedUploadRec) reservation() int64 {
	if r.SpaceID == "" {
		return 0
	}
	return storage.ChunkedReservation(r.Length, r.Stored, r.Replaces)
}

// updateChunkedUpload records next in place of prev, reserving what next
// holds more (checked against the quota) or releasing what it holds less.
func (t *txn) updateChunkedUpload(prev, next *chunkedUploadRec) error {
	delta := next.reservation() - prev.reservation()
	var err error
	if delta > 0 {
		err = t.reserve(next.SpaceID, delta)
	} else {
		err = t.release(next.SpaceID, -delta)
	}
	if err != nil {
		return err
	}
	return t.putChunkedUpload(next)
}

// chunkRec is a part as stored.
type chunkRec struct {
	Size int64
	File string // file in the upload's directory
	// Epoch and Seq place the part in the upload's digest chain: Seq is
	// its position, 0 when it is in none.
	Epoch, Seq uint64
	// Staged: the part is bytes Off to Off+Size of File, a staging file
	// it shares with the parts before it in its chain.
	Staged bool
	Off    int64
}

// end is the size File must have at least to hold the part.
func (c chunkRec) end() int64 { return c.Off + c.Size }

// CreateChunkedUpload starts u with an empty directory for its parts. An
// expired upload of the same id is dropped.
func (s *Store) CreateChunkedUpload(ctx context.Context, u storage.ChunkedUpload) (storage.ChunkedUpload, error) {
	if err := ctx.Err(); err != nil {
		return storage.ChunkedUpload{}, err
	}
	if err := storage.ValidChunkedUpload(u, nil); err != nil {
		return storage.ChunkedUpload{}, fmt.Errorf("create chunked upload: %w", err)
	}
	limit := u.OpenLimit
	u.OpenLimit = 0 // not kept
	r := chunkedUploadRec{ChunkedUpload: u, Dir: newBlobID()}
	r.Claimed = false
	// The directory comes first: a crash before the record is written
	// leaves a directory without a record, which the next open removes.
	if err := s.createChunkDir(r.Dir); err != nil {
		return storage.ChunkedUpload{}, fmt.Errorf("create chunked upload %.64q: %w", u.ID, diskFull(err))
	}
	var stale string
	err := s.update(func(t *txn) error {
		old, ok, err := t.chunkedUpload(u.ID)
		if err != nil {
			return err
		}
		if ok && isLiveChunkedUpload(old, t.now) {
			return storage.ErrExists
		}
		if ok {
			stale = old.Dir
			if err := t.dropChunkedUpload(u.ID); err != nil {
				return err
			}
		}
		if err := s.openChunkedUpload(t, &r, limit); err != nil {
			return err
		}
		r.Created = t.now.Round(0).UTC()
		if _, err := t.chunkParts().CreateBucket([]byte(u.ID)); err != nil {
			return err
		}
		return t.putChunkedUpload(&r)
	})
	if err != nil {
		s.removeChunkDir(r.Dir)
		return storage.ChunkedUpload{}, fmt.Errorf("create chunked upload %.64q: %w", u.ID, err)
	}
	if stale != "" {
		s.removeChunkDir(stale)
	}
	return r.ChunkedUpload, nil
}

// openChunkedUpload counts the new upload r in: one more unfinished upload
// of its user, within limit, and its reservation, within its space's quota
// and the disk.
func (s *Store) openChunkedUpload(t *txn, r *chunkedUploadRec, limit int) error {
	if r.SpaceID != "" {
		if _, err := t.space(r.SpaceID); err != nil {
			return err
		}
	}
	if err := t.openUpload(r.User, limit); err != nil {
		return err
	}
	if err := s.checkDisk(t, r.reservation()); err != nil {
		return err
	}
	return t.reserve(r.SpaceID, r.reservation())
}

// ChunkedUpload returns the live upload id.
func (s *Store) ChunkedUpload(ctx context.Context, id string) (storage.ChunkedUpload, error) {
	if err := ctx.Err(); err != nil {
		return storage.ChunkedUpload{}, err
	}
	r, err := s.liveChunkedUpload(id)
	if err != nil {
		return storage.ChunkedUpload{}, fmt.Errorf("chunked upload: %w", err)
	}
	return r.ChunkedUpload, nil
}

func (s *Store) liveChunkedUpload(id string) (chunkedUploadRec, error) {
	var r chunkedUploadRec
	err := s.view(func(t *txn) (err error) {
		r, err = t.liveChunkedUpload(id, s.now())
		return err
	})
	return r, err
}

// PutChunk streams r into a new file of the upload's directory, syncs it
// and then records it as part name, replacing the file of an earlier part
// of that name in the same transaction. Parts of one upload are written in
// parallel: the transaction that records a part checks again that the
// upload is live and unclaimed, so after a claim no part changes.
func (s *Store) PutChunk(ctx context.Context, id, name string, r io.Reader) (storage.Chunk, error) {
	c, err := s.putChunk(ctx, id, name, nil, r)
	if err != nil {
		return storage.Chunk{}, fmt.Errorf("put part %.64q of chunked upload %.64q: %w", name, id, err)
	}
	return c, nil
}

// PutChunkAfter is PutChunk hashing the part into the upload's digest
// chain when the chain ends with part prev, as the contract describes.
func (s *Store) PutChunkAfter(ctx context.Context, id, name, prev string, r io.Reader) (storage.Chunk, error) {
	c, err := s.putChunk(ctx, id, name, &prev, r)
	if err != nil {
		return storage.Chunk{}, fmt.Errorf("put part %.64q of chunked upload %.64q: %w", name, id, err)
	}
	return c, nil
}

// putChunk stores part name; prev, when set, names the part it follows.
func (s *Store) putChunk(ctx context.Context, id, name string, prev *string, r io.Reader) (storage.Chunk, error) {
	if err := ctx.Err(); err != nil {
		return storage.Chunk{}, err
	}
	if err := storage.ValidChunkName(name); err != nil {
		return storage.Chunk{}, err
	}
	if prev != nil {
		// One part at a time extends the chain (and its staging file);
		// one that finds another doing so is stored as PutChunk does.
		unlock, ok := s.chainLocks.tryLock(id)
		if !ok {
			prev = nil
		} else {
			defer unlock()
		}
	}
	u, exists, err := s.writableChunkedUpload(id, name)
	if err != nil {
		return storage.Chunk{}, err
	}
	link := chainLink(u.Chain, prev, exists, s.inlineWriter(storage.PartDigests()))
	part := chunkRec{File: newBlobID()}
	staged, created := false, true
	if link.sum != nil {
		file, off, fresh := u.Chain.staging()
		if file != "" {
			part.File, part.Off, part.Staged = file, off, true
			staged, created = true, fresh
		}
	}
	path := s.chunkPath(u.Dir, part.File)
	if staged {
		part.Size, err = s.writeStagedChunk(path, part.Off, created, r, link.sum)
	} else {
		part.Size, err = s.writeChunkFile(path, r, link.sum)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil && link.sum != nil {
		link.state, err = link.sum.MarshalBinary()
	}
	var replaced string
	if err == nil {
		replaced, err = s.recordChunk(id, u.Dir, name, part, link)
	}
	if err != nil {
		if created {
			s.removeChunkFile(path)
		}
		if errors.Is(err, storage.ErrNotFound) {
			// The upload ended meanwhile; its removal may have missed
			// the directory while this part was being written.
			os.Remove(s.chunkDirPath(u.Dir))
		}
		return storage.Chunk{}, err
	}
	if replaced != "" {
		s.removeChunkFile(s.chunkPath(u.Dir, replaced))
	}
	return storage.Chunk{Name: name, Size: part.Size}, nil
}

// writeStagedChunk appends r at off to the staging file at path, created
// there when created, cutting off what a failed part left past off, and
// syncs it (with its directory entry when new). On a failure the file is
// cut back to off (the caller removes a new one); a failure of r is
// returned wrapped.
func (s *Store) writeStagedChunk(path string, off int64, created bool, r io.Reader, sum *checksum.Writer) (int64, error) {
	flags := os.O_WRONLY
	if created {
		flags |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return 0, chunkDirGone(err)
	}
	err = diskFull(f.Truncate(off))
	var n int64
	if err == nil {
		n, err = s.copyChunkAt(f, off, r, sum)
	}
	if err == nil {
		err = diskFull(s.sync(f))
	}
	if err != nil {
		f.Truncate(off)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && created {
		err = chunkDirGone(s.syncDir(filepath.Dir(path)))
	}
	return n, err
}

// writableChunkedUpload returns upload id if part name may be put into it
// now, and whether a part of that name exists; recordChunk checks again
// when the part is in.
func (s *Store) writableChunkedUpload(id, name string) (chunkedUploadRec, bool, error) {
	var u chunkedUploadRec
	exists := false
	err := s.view(func(t *txn) (err error) {
		u, err = t.liveChunkedUpload(id, s.now())
		if err != nil {
			return err
		}
		parts, err := t.partsOf(id)
		if err != nil {
			return err
		}
		exists = parts.Get([]byte(name)) != nil
		return s.roomForChunk(u, parts, name)
	})
	return u, exists, err
}

// link is how a part being stored joins the digest chain: sum, when set,
// continues the chain the upload had when the part started (epoch, len)
// and hashes the part; state is sum marshaled once the part is in.
type link struct {
	sum        *checksum.Writer
	epoch, len uint64
	state      []byte
}

// chainLink returns how a new part following part prev joins chain c: it
// continues c only when c ends with prev, or is empty and prev is "",
// starting with fresh, an empty Writer of the digests a chain carries. A
// replacement (exists) or a part without prev joins nothing.
func chainLink(c digestChain, prev *string, exists bool, fresh *checksum.Writer) link {
	l := link{epoch: c.Epoch, len: c.Len}
	switch {
	case prev == nil || exists:
	case c.Len == 0 && *prev == "":
		l.sum = fresh
	case c.Len > 0 && c.Last == *prev:
		sum := checksum.NewWriter()
		if sum.UnmarshalBinary(c.State) == nil {
			l.sum = sum
		}
	}
	return l
}

// joined returns the chain after part name, stored with l, was recorded
// in upload u as part p: it extends u's chain when l continued it and
// nothing recorded meanwhile changed it.
func (l link) joined(u chunkedUploadRec, name string, p *chunkRec) digestChain {
	c := u.Chain
	if l.sum == nil || l.state == nil || c.Epoch != l.epoch || c.Len != l.len {
		return c
	}
	p.Epoch, p.Seq = c.Epoch, c.Len+1
	next := digestChain{Epoch: c.Epoch, Len: c.Len + 1, Last: name, State: l.state}
	if p.Staged && (c.Len == 0 || c.File == p.File) {
		next.File, next.Bytes = p.File, p.end()
	}
	return next
}

// writeChunkFile streams r into a new file at path and syncs it with its
// directory entry. On any failure the file is gone; a failure of r is
// returned wrapped.
func (s *Store) writeChunkFile(path string, r io.Reader, sum *checksum.Writer) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, chunkDirGone(err)
	}
	n, err := s.copyChunk(f, r, sum)
	if err == nil {
		err = diskFull(s.sync(f))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = chunkDirGone(s.syncDir(filepath.Dir(path)))
	}
	if err != nil {
		os.Remove(path)
		return 0, err
	}
	return n, nil
}

// chunkDirGone marks the error of a file operation in the directory of an
// upload that was removed meanwhile (the directory went with it) as
// ErrNotFound.
func chunkDirGone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %w", storage.ErrNotFound, err)
	}
	return diskFull(err)
}

// copyChunk copies r to f through one buffer, so that memory stays flat
// whatever the size of a part, starting the writeback as bytes collect,
// and feeds the bytes to sum, when set, as they are written.
func (s *Store) copyChunk(f *os.File, r io.Reader, sum *checksum.Writer) (int64, error) {
	return s.copyChunkAt(f, 0, r, sum)
}

// copyChunkAt is copyChunk writing from offset off of f on.
func (s *Store) copyChunkAt(f *os.File, off int64, r io.Reader, sum *checksum.Writer) (int64, error) {
	buf := make([]byte, appendBufferSize)
	wb := s.newWriteback(f, off)
	write := func(p []byte, off int64) (int, error) { return f.WriteAt(p, off) }
	if sum != nil {
		write = func(p []byte, off int64) (int, error) { return writeHashed(f, off, p, sum) }
	}
	var n int64
	for {
		m, rerr := r.Read(buf)
		if m > 0 {
			if _, err := write(buf[:m], off+n); err != nil {
				return n, fmt.Errorf("write part: %w", diskFull(err))
			}
			n += int64(m)
			wb.wrote(off + n)
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, fmt.Errorf("read part: %w", rerr)
		}
	}
}

// recordChunk records part as part name of upload id, whose directory must
// still be dir, and returns the file of the part it replaced, if any.
func (s *Store) recordChunk(id, dir, name string, part chunkRec, l link) (replaced string, err error) {
	err = s.update(func(t *txn) error {
		u, err := t.liveChunkedUpload(id, t.now)
		if err != nil {
			return err
		}
		if u.Dir != dir {
			// Removed and started again while the part was written.
			return storage.ChunkedUploadNotFound(id)
		}
		parts, err := t.partsOf(id)
		if err != nil {
			return err
		}
		if err := s.roomForChunk(u, parts, name); err != nil {
			return err
		}
		next := u
		next.Stored += part.Size
		if old := parts.Get([]byte(name)); old != nil {
			prev, err := decodeChunk(id, name, old)
			if err != nil {
				return err
			}
			replaced = prev.File
			next.Stored -= prev.Size
			if u.Chain.covers(prev) {
				next.Chain = u.Chain.restarted()
			}
		} else {
			next.Parts++
			next.Chain = l.joined(u, name, &part)
		}
		if err := t.updateChunkedUpload(&u, &next); err != nil {
			return err
		}
		if err := parts.Put([]byte(name), encodeChunk(part)); err != nil {
			return err
		}
		if replaced != "" && fileNamed(id, parts, next.Chain, replaced) {
			replaced = "" // a staging file other parts still share
		}
		return nil
	})
	return replaced, err
}

// Chunks lists the parts of the live upload id by name.
func (s *Store) Chunks(ctx context.Context, id string) ([]storage.Chunk, error) {
	chunks, err := inTxn(ctx, s.view, func(t *txn) ([]storage.Chunk, error) {
		if _, err := t.liveChunkedUpload(id, s.now()); err != nil {
			return nil, err
		}
		return t.chunks(id)
	})
	if err != nil {
		return nil, fmt.Errorf("parts of chunked upload: %w", err)
	}
	return chunks, nil
}

// ClaimChunkedUpload marks the live upload id claimed in one transaction,
// which bolt runs one at a time: of two claims the second finds the mark.
func (s *Store) ClaimChunkedUpload(ctx context.Context, id string) ([]storage.Chunk, error) {
	chunks, err := inTxn(ctx, s.update, func(t *txn) ([]storage.Chunk, error) {
		u, err := t.liveChunkedUpload(id, t.now)
		if err != nil {
			return nil, err
		}
		if u.Claimed {
			return nil, storage.ChunkedUploadClaimedTwice(id)
		}
		next := u
		next.Claimed = true
		if err := t.updateChunkedUpload(&u, &next); err != nil {
			return nil, err
		}
		return t.chunks(id)
	})
	if err != nil {
		return nil, fmt.Errorf("claim chunked upload: %w", err)
	}
	return chunks, nil
}

// OpenChunk opens the file of part name. A part replaced between the
// lookup and the open had its old file removed: it is looked up again, as
// long as each lookup finds another file (each one a replacement that
// completed). The same file missing twice was lost.
func (s *Store) OpenChunk(ctx context.Context, id, name string) (io.ReadCloser, error) {
	missing := ""
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		path, part, err := s.chunkFile(id, name)
		if err != nil {
			return nil, fmt.Errorf("open part %.64q of chunked upload: %w", name, err)
		}
		f, err := os.Open(path)
		if err == nil && part.Staged {
			return stagedPart{io.NewSectionReader(f, part.Off, part.Size), f}, nil
		}
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || path == missing {
			return nil, fmt.Errorf("open part %.64q of chunked upload %.64q: %w", name, id, err)
		}
		missing = path
	}
}

// stagedPart reads a part's range of its staging file.
type stagedPart struct {
	*io.SectionReader
	f *os.File
}

func (p stagedPart) Close() error { return p.f.Close() }

// chunkFile returns the path of the file of part name of the live upload
// id, and the part.
func (s *Store) chunkFile(id, name string) (string, chunkRec, error) {
	var path string
	var part chunkRec
	err := s.view(func(t *txn) error {
		u, err := t.liveChunkedUpload(id, s.now())
		if err != nil {
			return err
		}
		parts, err := t.partsOf(id)
		if err != nil {
			return err
		}
		part, err = partNamed(parts, id, name)
		if err != nil {
			return err
		}
		path = s.chunkPath(u.Dir, part.File)
		return nil
	})
	return path, part, err
}

// RemoveChunk drops the record of part name in one transaction, which
// finds the upload live and unclaimed, and then the part's file: a reader
// that opened it keeps its open file, and a crash in between leaves a file
// no record names, which the next open removes.
func (s *Store) RemoveChunk(ctx context.Context, id, name string) error {
	path, err := inTxn(ctx, s.update, func(t *txn) (string, error) { return s.dropChunk(t, id, name) })
	if err != nil {
		return fmt.Errorf("remove part %.64q of chunked upload: %w", name, err)
	}
	if path != "" {
		s.removeChunkFile(path)
	}
	return nil
}

// dropChunk deletes the record of part name of the live, unclaimed upload
// id, counting it out of the upload's parts, and returns the path of the
// part's file.
func (s *Store) dropChunk(t *txn, id, name string) (string, error) {
	u, err := t.liveChunkedUpload(id, t.now)
	if err != nil {
		return "", err
	}
	if u.Claimed {
		return "", storage.ChunkedUploadClaimed(id)
	}
	parts, err := t.partsOf(id)
	if err != nil {
		return "", err
	}
	part, err := partNamed(parts, id, name)
	if err != nil {
		return "", err
	}
	if err := parts.Delete([]byte(name)); err != nil {
		return "", err
	}
	next := u
	next.Parts--
	next.Stored -= part.Size
	if u.Chain.covers(part) {
		next.Chain = u.Chain.restarted()
	}
	if err := t.updateChunkedUpload(&u, &next); err != nil {
		return "", err
	}
	if fileNamed(id, parts, next.Chain, part.File) {
		return "", nil // a staging file other parts still share
	}
	return s.chunkPath(u.Dir, part.File), nil
}

// fileNamed reports whether file is the staging file of chain or the
// file of one of parts, the parts of upload id (any that cannot be read
// counts as naming it).
func fileNamed(id string, parts *bolt.Bucket, chain digestChain, file string) bool {
	if chain.File == file {
		return true
	}
	named := false
	parts.ForEach(func(k, v []byte) error {
		p, err := decodeChunk(id, string(k), v)
		if err != nil || p.File == file {
			named = true
		}
		return nil
	})
	return named
}

// RemoveChunkedUpload drops the records of the live upload id, then its
// directory.
func (s *Store) RemoveChunkedUpload(ctx context.Context, id string) error {
	dir, err := inTxn(ctx, s.update, func(t *txn) (string, error) {
		u, err := t.liveChunkedUpload(id, t.now)
		if err != nil {
			return "", err
		}
		return u.Dir, t.dropChunkedUpload(id)
	})
	if err != nil {
		return fmt.Errorf("remove chunked upload: %w", err)
	}
	s.removeChunkDir(dir)
	return nil
}

// endAssembly ends the chunked upload that commit c assembles, in the
// commit's transaction and before its quota check: the upload's
// reservation becomes the file's use in one step. It returns the
// directory of the upload's parts, to be removed once the transaction has
// committed. An upload gone meanwhile (removed, expired) reserves nothing
// any more, and one that is not claimed is not the one assembled
// (Commit.Ends): both are left alone.
func (t *txn) endAssembly(c storage.Commit) (string, error) {
	u, ok, err := t.chunkedUpload(c.Assembles)
	if err != nil || !ok || !c.Ends(u.ChunkedUpload) {
		return "", err
	}
	return u.Dir, t.dropChunkedUpload(u.ID)
}

// ReserveChunkedUpload raises the length the live, unclaimed upload id
// announces, reserving the difference in the same transaction.
func (s *Store) ReserveChunkedUpload(ctx context.Context, id string, length int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := s.update(func(t *txn) error {
		u, err := t.liveChunkedUpload(id, t.now)
		if err != nil {
			return err
		}
		if u.Claimed {
			return storage.ChunkedUploadClaimed(id)
		}
		if length <= u.Length {
			return nil
		}
		next := u
		next.Length = length
		return t.updateChunkedUpload(&u, &next)
	})
	if err != nil {
		return fmt.Errorf("reserve for chunked upload %.64q: %w", id, err)
	}
	return nil
}

// purgeChunkedUploads ends up to limit expired (or unreadable) uploads and
// reports how many it ended. The background sweep calls it.
func (s *Store) purgeChunkedUploads(limit int) (int, error) {
	now := s.now()
	expired := func(k, v []byte) bool {
		r, err := decodeChunkedUpload(string(k), v)
		return err != nil || !isLiveChunkedUpload(r, now)
	}
	return s.purgeExpired((*txn).chunkedUploads, limit, expired, func(id string) (bool, error) {
		return s.purgeChunkedUpload(id, now)
	})
}

// purgeChunkedUpload ends upload id if it is still expired at now (it may
// have been removed and started again since it was found).
func (s *Store) purgeChunkedUpload(id string, now time.Time) (bool, error) {
	var dir string
	ended := false
	err := s.update(func(t *txn) error {
		v := t.chunkedUploads().Get([]byte(id))
		if v == nil {
			return nil
		}
		r, err := decodeChunkedUpload(id, v)
		if err == nil && isLiveChunkedUpload(r, now) {
			return nil
		}
		// An unreadable record names no directory; the next open removes it.
		dir, ended = r.Dir, true
		return t.dropChunkedUpload(id)
	})
	if err != nil {
		return false, fmt.Errorf("expired chunked upload %.64q: %w", id, err)
	}
	if dir != "" {
		s.removeChunkDir(dir)
	}
	return ended, nil
}

// recoverChunkedUploads brings the chunks directory in line with the
// records when the store opens: it ends expired uploads, removes
// directories and files no record names, and drops parts whose file a
// crash lost or left with another size (a disk that lied about fsync, a
// store run with NoSync), so the client sends them again. An upload whose
// whole directory is gone is ended.
func (s *Store) recoverChunkedUploads() error {
	if _, err := s.purgeChunkedUploads(int(^uint(0) >> 1)); err != nil {
		return fmt.Errorf("open store: expired chunked uploads: %w", err)
	}
	dirs := map[string]string{} // directory → upload id
	err := s.view(func(t *txn) error {
		return t.chunkedUploads().ForEach(func(k, v []byte) error {
			if r, err := decodeChunkedUpload(string(k), v); err == nil {
				dirs[r.Dir] = r.ID
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("open store: chunked uploads: %w", err)
	}
	entries, err := os.ReadDir(s.chunkDir)
	if err != nil {
		return fmt.Errorf("open store: chunked uploads: %w", err)
	}
	for _, e := range entries {
		id, ok := dirs[e.Name()]
		if !ok {
			if err := os.RemoveAll(s.chunkDirPath(e.Name())); err != nil {
				return fmt.Errorf("open store: chunked uploads: %w", err)
			}
			continue
		}
		delete(dirs, e.Name())
		if err := s.recoverChunkDir(id, e.Name()); err != nil {
			return fmt.Errorf("open store: chunked upload %.64q: %w", id, err)
		}
	}
	for _, id := range dirs { // records whose directory is gone
		s.log.Warn("chunked upload lost its parts", zap.String("upload", id))
		err := s.update(func(t *txn) error { return t.dropChunkedUpload(id) })
		if err != nil {
			return fmt.Errorf("open store: chunked upload %.64q: %w", id, err)
		}
	}
	return nil
}

// recoverChunkDir settles the directory dir of upload id: its claim is
// lifted, parts without their whole file are dropped, then files no part
// names are removed.
func (s *Store) recoverChunkDir(id, dir string) error {
	entries, err := os.ReadDir(s.chunkDirPath(dir))
	if err != nil {
		return err
	}
	sizes := make(map[string]int64, len(entries)) // file → size
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			return err
		}
		sizes[e.Name()] = info.Size()
	}
	err = s.update(func(t *txn) error {
		u, ok, err := t.chunkedUpload(id)
		if err != nil || !ok {
			return err
		}
		parts, err := t.partsOf(id)
		if err != nil {
			return err
		}
		lost, err := lostChunks(id, parts, sizes)
		if err != nil || (len(lost) == 0 && !u.Claimed) {
			return err
		}
		for _, name := range lost {
			s.log.Warn("chunked upload lost a part", zap.String("upload", id), zap.String("part", name))
			if err := parts.Delete([]byte(name)); err != nil {
				return err
			}
		}
		next := u
		// No assembly outlives the process: a claim found at open was cut
		// short by a crash, and the client's retry of its MOVE must find
		// the upload as it was before it.
		next.Claimed = false
		if len(lost) == 0 {
			return t.updateChunkedUpload(&u, &next)
		}
		next.Parts -= len(lost)
		next.Chain = u.Chain.restarted()
		if next.Stored, err = storedBytes(id, parts); err != nil {
			return err
		}
		return t.updateChunkedUpload(&u, &next)
	})
	if err != nil {
		return err
	}
	for file := range sizes {
		s.removeChunkFile(s.chunkPath(dir, file))
	}
	return nil
}

// lostChunks returns the names of the parts whose file is missing from
// sizes or has another size, and takes the files of all parts out of
// sizes, leaving those no part names.
func lostChunks(id string, parts *bolt.Bucket, sizes map[string]int64) ([]string, error) {
	var lost []string
	named := map[string]bool{}
	err := parts.ForEach(func(k, v []byte) error {
		part, err := decodeChunk(id, string(k), v)
		size, found := sizes[part.File]
		if err != nil || !found || !part.heldBy(size) {
			lost = append(lost, string(k))
		}
		named[part.File] = true
		return nil
	})
	for file := range named {
		delete(sizes, file)
	}
	return lost, err
}

// heldBy reports whether a file of size bytes holds the whole part: a
// staged part's range of its staging file (bytes past it are those of a
// part that failed), an own file exactly.
func (c chunkRec) heldBy(size int64) bool {
	if c.Staged {
		return size >= c.end()
	}
	return size == c.Size
}

func (s *Store) chunkDirPath(dir string) string { return filepath.Join(s.chunkDir, dir) }

func (s *Store) chunkPath(dir, file string) string { return filepath.Join(s.chunkDir, dir, file) }

// createChunkDir makes the directory of a new upload, durably.
func (s *Store) createChunkDir(dir string) error {
	if err := os.Mkdir(s.chunkDirPath(dir), 0o700); err != nil {
		return err
	}
	if err := s.syncDir(s.chunkDir); err != nil {
		os.Remove(s.chunkDirPath(dir))
		return err
	}
	return nil
}

// removeChunkDir deletes the directory of an upload that has ended. A
// failure leaves a directory without a record, which the next open
// removes.
func (s *Store) removeChunkDir(dir string) {
	if err := os.RemoveAll(s.chunkDirPath(dir)); err != nil {
		s.log.Warn("cannot remove chunked upload directory", zap.String("dir", dir), zap.Error(err))
	}
}

// removeChunkFile deletes the file of a part no record names (any more).
// A failure leaves a file the next open removes.
func (s *Store) removeChunkFile(path string) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("cannot remove chunked upload part", zap.String("file", path), zap.Error(err))
	}
}

// isLiveChunkedUpload reports whether r has not expired at now; an upload
// without an expiry lives until it is removed.
func isLiveChunkedUpload(r chunkedUploadRec, now time.Time) bool {
	return r.Expires.IsZero() || now.Before(r.Expires)
}

func (t *txn) chunkedUploads() countedBucket {
	return t.bucket(&t.open.chunkedUploads, bucketChunkedUploads)
}

func (t *txn) chunkParts() countedBucket { return t.bucket(&t.open.chunkParts, bucketChunkParts) }

// partsOf returns the bucket of the parts of upload id, which exists as
// long as the upload's record.
func (t *txn) partsOf(id string) (*bolt.Bucket, error) {
	b := t.chunkParts().Bucket([]byte(id))
	if b == nil {
		return nil, fmt.Errorf("chunked upload %.64q without parts bucket: %w", id, errCorrupt)
	}
	return b, nil
}

// partNamed returns part name of upload id from parts, its parts bucket:
// storage.ChunkNotFound's error when there is none.
func partNamed(parts *bolt.Bucket, id, name string) (chunkRec, error) {
	v := parts.Get([]byte(name))
	if v == nil {
		return chunkRec{}, storage.ChunkNotFound(id, name)
	}
	return decodeChunk(id, name, v)
}

// chunkedUpload returns upload id, live or not, and whether it exists.
func (t *txn) chunkedUpload(id string) (chunkedUploadRec, bool, error) {
	if id == "" || len(id) > storage.MaxChunkedUploadIDBytes {
		return chunkedUploadRec{}, false, nil // no such upload can be created
	}
	v := t.chunkedUploads().Get([]byte(id))
	if v == nil {
		return chunkedUploadRec{}, false, nil
	}
	r, err := decodeChunkedUpload(id, v)
	return r, err == nil, err
}

// liveChunkedUpload returns upload id unless it is unknown or expired at
// now.
func (t *txn) liveChunkedUpload(id string, now time.Time) (chunkedUploadRec, error) {
	r, ok, err := t.chunkedUpload(id)
	switch {
	case err != nil:
		return chunkedUploadRec{}, err
	case !ok:
		return chunkedUploadRec{}, storage.ChunkedUploadNotFound(id)
	case !isLiveChunkedUpload(r, now):
		return chunkedUploadRec{}, fmt.Errorf("chunked upload %.64q expired: %w", id, storage.ErrNotFound)
	}
	return r, nil
}

// SetMaxChunksPerUpload lowers (or raises) how many parts one chunked
// upload may have, n <= 0 restoring storage.MaxChunksPerUpload: tests
// reach the cap without putting ten thousand parts.
func (s *Store) SetMaxChunksPerUpload(n int) { s.chunkCap.Store(int64(n)) }

// roomForChunk says why part name may not be put into u, whose parts are
// in the bucket parts, or nil.
func (s *Store) roomForChunk(u chunkedUploadRec, parts *bolt.Bucket, name string) error {
	return storage.CheckChunkRoom(u.ID, u.Claimed, u.Parts, storage.ChunkCap(s.chunkCap.Load()), func() (bool, error) {
		return parts.Get([]byte(name)) != nil, nil
	})
}

// chunks lists the parts of upload id; bolt keeps keys in byte order.
func (t *txn) chunks(id string) ([]storage.Chunk, error) {
	parts, err := t.partsOf(id)
	if err != nil {
		return nil, err
	}
	var chunks []storage.Chunk
	err = parts.ForEach(func(k, v []byte) error {
		part, err := decodeChunk(id, string(k), v)
		if err != nil {
			return err
		}
		chunks = append(chunks, storage.Chunk{Name: string(k), Size: part.Size})
		return nil
	})
	return chunks, err
}

func (t *txn) putChunkedUpload(r *chunkedUploadRec) error {
	return t.chunkedUploads().Put([]byte(r.ID), encodeChunkedUpload(r))
}

// storedBytes adds up the sizes of the parts in the bucket parts.
func storedBytes(id string, parts *bolt.Bucket) (int64, error) {
	var n int64
	err := parts.ForEach(func(k, v []byte) error {
		part, err := decodeChunk(id, string(k), v)
		n += part.Size
		return err
	})
	return n, err
}

// dropChunkedUpload deletes the records of upload id and of its parts,
// releasing what it reserved and counting it out of its user's uploads.
func (t *txn) dropChunkedUpload(id string) error {
	if v := t.chunkedUploads().Get([]byte(id)); v != nil {
		if r, err := decodeChunkedUpload(id, v); err == nil {
			if err := t.release(r.SpaceID, r.reservation()); err != nil {
				return err
			}
			if err := t.closeUpload(r.User); err != nil {
				return err
			}
		}
	}
	if err := t.chunkedUploads().Delete([]byte(id)); err != nil {
		return err
	}
	err := t.chunkParts().DeleteBucket([]byte(id))
	if errors.Is(err, bolterrors.ErrBucketNotFound) {
		return nil
	}
	return err
}

// encodeChunkedUpload encodes r without its id (the id is the key).
// Layout: format, user (string), created, expires (time), claimed (byte),
// directory (string), number of parts (uvarint), then, since uploads
// reserve, space (string), announced length, stored bytes and replaced
// bytes (varint).
func encodeChunkedUpload(r *chunkedUploadRec) []byte {
	b := make([]byte, 0, 96+len(r.User)+len(r.Dir)+len(r.SpaceID))
	b = append(b, chunkedUploadFormat)
	b = appendString(b, r.User)
	b = appendTime(b, r.Created)
	b = appendTime(b, r.Expires)
	b = append(b, boolByte(r.Claimed))
	b = appendString(b, r.Dir)
	b = binary.AppendUvarint(b, uint64(r.Parts))
	b = appendString(b, r.SpaceID)
	b = binary.AppendVarint(b, r.Length)
	b = binary.AppendVarint(b, r.Stored)
	b = binary.AppendVarint(b, r.Replaces)
	return appendChain(b, r.Chain)
}

// appendChain encodes a digest chain: epoch, length (uvarint), last part
// and state (string). Uploads stored before chains have none: epoch 0,
// empty.
func appendChain(b []byte, c digestChain) []byte {
	b = binary.AppendUvarint(b, c.Epoch)
	b = binary.AppendUvarint(b, c.Len)
	b = appendString(b, c.Last)
	b = appendString(b, string(c.State))
	b = appendString(b, c.File)
	return binary.AppendVarint(b, c.Bytes)
}

func decodeChunkedUpload(id string, v []byte) (chunkedUploadRec, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != chunkedUploadFormat {
		return chunkedUploadRec{}, fmt.Errorf("chunked upload %.64q: unknown format: %w", id, errCorrupt)
	}
	var r chunkedUploadRec
	r.ID = id
	r.User = d.str()
	r.Created = d.time()
	r.Expires = d.time()
	r.Claimed = d.byte() == 1
	r.Dir = d.str()
	parts := d.uvarint()
	if d.more() {
		r.SpaceID, r.Length, r.Stored, r.Replaces = d.str(), d.varint(), d.varint(), d.varint()
	}
	if d.more() {
		r.Chain = digestChain{Epoch: d.uvarint(), Len: d.uvarint(), Last: d.str(), State: []byte(d.str())}
	}
	if d.more() {
		r.Chain.File, r.Chain.Bytes = d.str(), d.varint()
	}
	// The directory becomes a path: only the shape the store makes.
	if d.err != nil || !storage.IsHexID(r.Dir) || parts > storage.MaxChunksPerUpload || r.Length < 0 || r.Stored < 0 || r.Replaces < 0 ||
		(r.Chain.File != "" && !storage.IsHexID(r.Chain.File)) || r.Chain.Bytes < 0 {
		return chunkedUploadRec{}, fmt.Errorf("chunked upload %.64q: %w", id, errCorrupt)
	}
	r.Parts = int(parts)
	return r, nil
}

// encodeChunk encodes a part. Layout: format, size (varint), file
// (string), then, since parts carry digests, its chain's epoch and its
// place in it (uvarint).
func encodeChunk(c chunkRec) []byte {
	b := make([]byte, 0, 32+len(c.File))
	b = append(b, chunkFormat)
	b = binary.AppendVarint(b, c.Size)
	b = appendString(b, c.File)
	b = binary.AppendUvarint(b, c.Epoch)
	b = binary.AppendUvarint(b, c.Seq)
	b = append(b, boolByte(c.Staged))
	return binary.AppendVarint(b, c.Off)
}

func decodeChunk(id, name string, v []byte) (chunkRec, error) {
	d := decoder{b: v, s: string(v)}
	if d.byte() != chunkFormat {
		return chunkRec{}, fmt.Errorf("part %.64q of %.64q: unknown format: %w", name, id, errCorrupt)
	}
	c := chunkRec{Size: d.varint(), File: d.str()}
	if d.more() {
		c.Epoch, c.Seq = d.uvarint(), d.uvarint()
	}
	if d.more() {
		c.Staged, c.Off = d.byte() == 1, d.varint()
	}
	if d.err != nil || c.Size < 0 || c.Off < 0 || !storage.IsHexID(c.File) {
		return chunkRec{}, fmt.Errorf("part %.64q of %.64q: %w", name, id, errCorrupt)
	}
	return c, nil
}
