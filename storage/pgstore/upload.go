package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
	"github.com/google/uuid"
)

// memLimit is how many bytes an upload keeps in memory before it starts
// streaming them to an object of unknown size: a file up to this size
// costs one PUT of known size, a larger one a multipart upload.
const memLimit = 1 << 20

// inlineLimit is the largest file kept in its row instead of an object:
// a PUT to the bucket (and the pending row that guards it) costs far more
// than such a file's bytes in PostgreSQL, and listings leave the content
// column out, so these bytes are read only when the file is.
const inlineLimit = 1 << 10

// firstBytes recycles the memory of the first bytes of uploads.
var firstBytes = sync.Pool{New: func() any {
	b := make([]byte, 0, memLimit)
	return &b
}}

var (
	errFinished  = errors.New("upload is finished")
	errDiscarded = errors.New("upload discarded")
)

// NewUpload starts receiving the content of a file in the space. ctx bounds
// the upload's requests to the bucket until Commit or Discard.
func (s *Store) NewUpload(ctx context.Context, spaceID string) (storage.Upload, error) {
	if _, err := s.Space(ctx, spaceID); err != nil {
		return nil, fmt.Errorf("new upload: %w", err)
	}
	return &upload{s: s, ctx: ctx, spaceID: spaceID, sum: checksum.NewWriter()}, nil
}

// upload is a storage.Upload. Its first bytes stay in memory (mem, nil
// until the first write and once streaming); past
// memLimit they and all that follow stream to a new object as they come
// (stream), so no upload holds more than memLimit and a part in memory.
type upload struct {
	s       *Store
	ctx     context.Context
	spaceID string
	sum     *checksum.Writer

	mu       sync.Mutex
	finished bool // committed or discarded
	mem      *[]byte
	stream   *objectStream // nil while the content fits in mem
	size     int64
	// failed is the error of a failed write: the checksums may then cover
	// bytes the object lacks, so the upload can only be discarded.
	failed error
}

// Write adds p to the content and the checksums.
func (u *upload) Write(p []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.writable(); err != nil {
		return 0, err
	}
	if u.stream == nil && len(*u.memory())+len(p) <= memLimit {
		*u.mem = append(*u.mem, p...)
		u.sum.Write(p)
		u.size += int64(len(p))
		return len(p), nil
	}
	if err := u.startStream(); err != nil {
		return 0, err
	}
	n, err := u.stream.Write(p)
	u.sum.Write(p[:n])
	u.size += int64(n)
	if err != nil {
		u.failed = fmt.Errorf("write upload: %w", err)
		return n, u.failed
	}
	return n, nil
}

// writable fails once the upload is finished or a write failed.
func (u *upload) writable() error {
	if u.finished {
		return fmt.Errorf("write: %w", errFinished)
	}
	return u.failed
}

// startStream starts the object the content streams to, with the bytes
// held in memory, unless it is started already.
func (u *upload) startStream() error {
	if u.stream != nil {
		return nil
	}
	u.stream = u.s.newObjectStream(u.ctx, newObjectKey(prefixFile))
	_, err := u.stream.Write(*u.memory())
	u.releaseMem()
	if err != nil {
		u.failed = fmt.Errorf("write upload: %w", err)
	}
	return u.failed
}

// memory is the memory holding the first bytes, taken from the pool on
// first use, so that an upload that stays empty holds none.
func (u *upload) memory() *[]byte {
	if u.mem == nil {
		u.mem = firstBytes.Get().(*[]byte)
	}
	return u.mem
}

func (u *upload) releaseMem() {
	if u.mem != nil {
		*u.mem = (*u.mem)[:0]
		firstBytes.Put(u.mem)
		u.mem = nil
	}
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

// Commit finishes the object and makes it the content of the file c.NodeID,
// or else c.Name in folder c.ParentID. The upload is finished afterwards,
// whether Commit succeeded or not.
func (u *upload) Commit(ctx context.Context, c storage.Commit) (storage.Node, bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.finished {
		return storage.Node{}, false, fmt.Errorf("commit %s: %w", c.Target(), errFinished)
	}
	u.finished = true
	err := u.failed
	if err == nil {
		err = storage.ValidCommit(c, utf8.ValidString)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		u.drop()
		return storage.Node{}, false, fmt.Errorf("commit %s: %w", c.Target(), err)
	}
	segments, err := u.finishObject(ctx)
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("commit %s: %w", c.Target(), err)
	}
	var also func(*change) error
	if c.Assembles != "" {
		also = func(ch *change) error { return u.s.endAssembly(ctx, ch.tx, c) }
	}
	content := newContent{segments: segments, size: u.size, sums: u.sum.Sums()}
	n, created, err := u.s.commitContent(ctx, u.spaceID, content, c, also)
	if err != nil && !errors.Is(err, storage.ErrUnavailable) && ctx.Err() == nil {
		// The transaction surely rolled back: nothing references the
		// object. Cut off by an outage or a cancellation, it may have
		// committed; the sweep decides then.
		u.s.removeObjects(segments)
	}
	return n, created, err
}

// finishObject ends the object the content went to, or writes the content
// held in memory as one; an empty file needs no object.
func (u *upload) finishObject(ctx context.Context) ([]s3content.Segment, error) {
	defer u.releaseMem()
	if u.stream != nil {
		n, err := u.stream.finish()
		if err == nil && n != u.size {
			err = fmt.Errorf("stored %d of %d bytes", n, u.size)
		}
		seg := []s3content.Segment{{Key: u.stream.key, Size: u.size}}
		if err != nil {
			u.s.removeObjects(seg)
			return nil, err
		}
		return seg, nil
	}
	if u.size == 0 {
		return nil, ctx.Err()
	}
	if u.size <= u.s.inlineLimit {
		return []s3content.Segment{s3content.InlineSegment(*u.mem)}, ctx.Err()
	}
	seg := []s3content.Segment{{Key: newObjectKey(prefixFile), Size: u.size}}
	if _, err := u.s.putObject(ctx, seg[0].Key, bytes.NewReader(*u.mem), u.size); err != nil {
		return nil, err
	}
	return seg, nil
}

// Discard drops the content. It is safe to call more than once and after
// Commit.
func (u *upload) Discard() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.finished {
		return nil
	}
	u.finished = true
	u.drop()
	return nil
}

// drop lets go of the content: the memory, and the object it was
// streaming to.
func (u *upload) drop() {
	u.releaseMem()
	if u.stream != nil {
		u.stream.abort()
		u.s.removeObjects([]s3content.Segment{{Key: u.stream.key}})
	}
}

// removeObjects deletes objects nothing references, best effort: the
// sweep removes what this leaves behind, as their pending rows remain.
func (s *Store) removeObjects(segments []s3content.Segment) {
	keys := segmentKeys(segments)
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.objects.Remove(ctx, keys...); err != nil {
		s.log.Info("removing the objects of an upload that failed; the sweep will")
	}
}

// objectStream writes an object of unknown size as its bytes come: Write
// feeds a pipe the PUT reads from on its own goroutine.
type objectStream struct {
	key  string
	pw   *io.PipeWriter
	done chan struct{}
	n    int64 // set when done is closed
	err  error
}

// newObjectStream starts the PUT of object key.
func (s *Store) newObjectStream(ctx context.Context, key string) *objectStream {
	pr, pw := io.Pipe()
	st := &objectStream{key: key, pw: pw, done: make(chan struct{})}
	go func() {
		defer close(st.done)
		st.n, st.err = s.putObject(ctx, key, pr, -1)
		// A PUT that ended early fails the writes still waiting.
		pr.CloseWithError(cmpErr(st.err, io.ErrClosedPipe))
	}()
	return st
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// Write sends p to the object.
func (st *objectStream) Write(p []byte) (int, error) {
	n, err := st.pw.Write(p)
	if err != nil {
		<-st.done
		return n, cmpErr(st.err, err)
	}
	return n, nil
}

// finish ends the object and returns how many bytes it holds.
func (st *objectStream) finish() (int64, error) {
	st.pw.Close()
	<-st.done
	return st.n, st.err
}

// abort makes the PUT fail, leaving no object.
func (st *objectStream) abort() {
	st.pw.CloseWithError(errDiscarded)
	<-st.done
}

// newContent is the content a commit records: the finished objects of
// segments, size bytes with checksums sums.
type newContent struct {
	segments []s3content.Segment
	size     int64
	sums     checksum.Sums
}

// committed is what recording a commit did: the file, and whether the
// commit created it.
type committed struct {
	node    nodeRow
	created bool
}

// commitContent makes content the content of the file c names, creating
// it if needed, in one transaction (maybe shared with other commits to the
// space, groupChange) that takes its objects off the sweep's
// list and hands the content it replaces to the sweep. It reports whether
// the file was created. An upload ends here, and so does a resumable
// upload session: also, when set, runs in the commit's transaction before
// its quota check and ends the session whose parts the segments are, so
// that its reservation passes to the file in one step and is never free
// between.
func (s *Store) commitContent(ctx context.Context, spaceID string, content newContent, c storage.Commit, also func(*change) error) (storage.Node, bool, error) {
	if err := storage.ValidCommit(c, utf8.ValidString); err != nil {
		return storage.Node{}, false, fmt.Errorf("commit %s: %w", c.Target(), err)
	}
	if content.segments == nil {
		content.segments = []s3content.Segment{} // jsonb '[]', not null
	}
	var done committed
	err := s.groupChange(ctx, spaceID, func(ch *change) (err error) {
		if also != nil {
			if err := also(ch); err != nil {
				return err
			}
		}
		done, err = s.recordContent(ctx, ch, spaceID, content, c)
		return err
	})
	if err != nil {
		return storage.Node{}, false, fmt.Errorf("commit %s: %w", c.Target(), err)
	}
	return done.node.node(), done.created, nil
}

// recordContent is the transaction of commitContent. A file created
// where a file was deleted is that file revived first (storage.Reviving);
// the content a commit replaces is kept as a version of the file.
func (s *Store) recordContent(ctx context.Context, ch *change, spaceID string, content newContent, c storage.Commit) (committed, error) {
	target, err := commitTargetIn(ctx, ch, spaceID, c)
	if err != nil {
		return committed{}, err
	}
	if err := s.checkHeld(ctx, ch.tx, spaceID, c.Locks, target.written()); err != nil {
		return committed{}, err
	}
	if err := c.CheckReplace(target.old.node(), target.exists); err != nil {
		return committed{}, err
	}
	if c.Unchanged(target.old.node(), target.exists, content.size, content.sums) {
		// The new objects stay on the sweep's list, which deletes them.
		return committed{node: target.old}, nil
	}
	created := !target.exists
	if created {
		if target, err = s.revive(ctx, ch, spaceID, target, c.Name); err != nil {
			return committed{}, err
		}
	}
	old := target.old
	// The files are checked as if nothing were kept: a replacement is
	// refused only when its growth does not fit without any undo.
	if err := s.makeRoom(ctx, ch, spaceID, content.size-old.Size); err != nil {
		return committed{}, err
	}
	if !target.exists {
		if err := s.addNodes(ctx, ch.tx, spaceID, 1); err != nil {
			return committed{}, err
		}
	}
	kept := false
	if target.exists {
		if kept, err = s.keepVersion(ctx, ch, spaceID, old); err != nil {
			return committed{}, err
		}
	}
	n, err := ch.writeContent(ctx, target, content, c)
	if err != nil {
		return committed{}, err
	}
	if err := adopt(ctx, ch.tx, segmentKeys(content.segments)...); err != nil {
		return committed{}, fmt.Errorf("adopting the content: %w", err)
	}
	// A kept version still holds the old objects; release leaves them.
	if err := s.release(ctx, ch.tx, old.Content); err != nil {
		return committed{}, err
	}
	if target.exists && !kept {
		if err := s.dropPreviews(ctx, ch.tx, old.SHA1); err != nil {
			return committed{}, err
		}
	}
	if err := ch.propagate(ctx, target.parentID, content.size-old.Size); err != nil {
		return committed{}, err
	}
	if kept {
		// The version stays only where the quota has room for it: the
		// newest of what the space keeps, it goes last.
		if err := s.trimUndo(ctx, ch, spaceID); err != nil {
			return committed{}, err
		}
	}
	return committed{node: n, created: created}, nil
}

// revive restores, as the file a commit replaces, the newest file the
// trash keeps that was deleted as name from the folder of target, which
// does not exist (storage.Reviving); target is returned as it is when
// there is none.
func (s *Store) revive(ctx context.Context, ch *change, spaceID string, tg target, name string) (target, error) {
	rows, err := queryTrash(ctx, ch.tx, `WHERE t.space_id = $1 AND t.parent_id = $2 AND t.name = $3
		AND NOT t.purging`, spaceID, tg.parentID, name)
	if err != nil {
		return tg, fmt.Errorf("looking for a deleted %q: %w", name, err)
	}
	r := s.retentionFor(spaceID)
	var items []storage.TrashItem
	byKey := map[string]trashRow{}
	for _, row := range rows {
		if !r.TrashExpired(row.deleted(), ch.now) {
			items = append(items, row.item(spaceID))
			byKey[row.Key] = row
		}
	}
	it, ok := storage.Reviving(items, tg.parentID, name)
	if !ok {
		return tg, nil
	}
	old, err := s.restoreNode(ctx, ch, spaceID, byKey[it.Key].nodeRow, tg.parentID, name)
	if err != nil {
		return tg, err
	}
	tg.old, tg.exists = old, true
	return tg, nil
}

// writeContent writes the row of the file c names, with content, in place
// of target.old or as a new file.
func (ch *change) writeContent(ctx context.Context, target target, content newContent, c storage.Commit) (nodeRow, error) {
	mtime := c.ModTime
	if mtime.IsZero() {
		mtime = ch.now
	}
	id := target.old.ID
	if !target.exists {
		id = uuid.NewString()
	}
	n, _, err := queryNode(ctx, ch.tx, `
		INSERT INTO nodes (id, space_id, parent_id, name, kind, size, mtime, etag, content_type, sha1, md5, adler32, content)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (id) DO UPDATE SET size = excluded.size, mtime = excluded.mtime, etag = excluded.etag,
			content_type = excluded.content_type, sha1 = excluded.sha1, md5 = excluded.md5,
			adler32 = excluded.adler32, content = excluded.content
		RETURNING `+nodeColumns,
		id, target.spaceID, target.parentID, c.Name, storage.KindFile, content.size, mtime.UTC(), ch.etag(id),
		c.ContentType, content.sums.SHA1, content.sums.MD5, content.sums.Adler32, content.segments)
	return n, err
}

// target is the node a commit writes: the space and folder it is in, and
// the node itself (old) when it exists already.
type target struct {
	spaceID  string
	parentID string
	old      nodeRow
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

// commitTargetIn resolves the node a commit replaces: c.NodeID wherever it
// is now, or the child c.Name of c.ParentID, which need not exist.
func commitTargetIn(ctx context.Context, ch *change, spaceID string, c storage.Commit) (target, error) {
	if c.NodeID != "" {
		old, err := nodeIn(ctx, ch.tx, spaceID, c.NodeID)
		if err != nil {
			return target{}, err
		}
		return target{spaceID: spaceID, parentID: old.ParentID, old: old, exists: true}, nil
	}
	p, err := folderIn(ctx, ch.tx, spaceID, c.ParentID, storage.ErrConflict)
	if err != nil {
		return target{}, err
	}
	old, exists, err := child(ctx, ch.tx, p.ID, c.Name)
	if err != nil {
		return target{}, err
	}
	return target{spaceID: spaceID, parentID: p.ID, old: old, exists: exists}, nil
}

// segmentKeys returns the objects segments name; inline segments have none.
func segmentKeys(segments []s3content.Segment) []string {
	keys := make([]string, 0, len(segments))
	for _, seg := range segments {
		if !seg.Inline() {
			keys = append(keys, seg.Key)
		}
	}
	return keys
}
