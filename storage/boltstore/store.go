// Package boltstore is the embedded default storage.Store: one data
// directory holding a bbolt database for all metadata and plain files for
// file content.
//
// Layout under the data directory:
//
//	meta.db              bbolt database (spaces, nodes by place in the tree, properties,
//	                     the content of small files)
//	blobs/<xx>/<blobid>  immutable content files, xx = first two hex digits of the id
//	uploads/             content being received, renamed into blobs/ on commit
//	sessions/<id>        bytes of resumable uploads (sessions.go), kept across restarts
//	chunks/<dir>/<file>  parts of chunked uploads (chunks.go), kept across restarts
//
// Content files are written completely and fsynced before the metadata
// transaction that references them commits, and are never modified
// afterwards, so a crash leaves every committed write intact and no partial
// content visible. Files a crash leaves behind (unfinished uploads,
// unreferenced blobs) are removed when the store is opened again. Files up
// to Options.InlineLimit keep their content in the database instead
// (inline.go), written by the transaction that records them, and commits
// that arrive together share one transaction (groupcommit.go): a small file
// is durable with one bolt commit, shared with its concurrent peers.
package boltstore

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.Store = (*Store)(nil)

// Options configure a Store.
type Options struct {
	// StorageID prefixes resource ids; when empty, a UUID is generated once
	// and persisted in the database.
	StorageID string
	// Logger for background problems (orphan cleanup); nil discards.
	Logger *zap.Logger
	// Now returns the current time (tests inject it); nil means time.Now.
	Now func() time.Time
	// NoSync skips every fsync. For tests and benchmarks only: a crash can
	// then lose acknowledged writes.
	NoSync bool
	// PersonalQuota is the quota in bytes of every personal space without
	// a quota of its own; 0 means none. SetPersonalQuota changes it while
	// the store is open.
	PersonalQuota int64
	// SessionSweep is how often expired upload sessions and chunked
	// uploads are removed in the background; 0 means every minute. Expired
	// ones are never returned meanwhile.
	SessionSweep time.Duration
	// InlineLimit is the size in bytes up to which a file's content is kept
	// in the database instead of a content file of its own (see inline.go);
	// 0 means DefaultInlineLimit, a negative value keeps every file in a
	// content file.
	InlineLimit int64
}

// Bucket names.
var (
	bucketMeta     = []byte("meta")     // settings: storage id
	bucketSpaces   = []byte("spaces")   // space id → encoded space
	bucketPersonal = []byte("personal") // user id → personal space id
	bucketNodes    = []byte("places")   // node id → key of its record in bucketChildren (layout.go)
	bucketChildren = []byte("tree")     // parent id + "/" + name → encoded node; a space root: "\x00" + id
	bucketProps    = []byte("props")    // node id \0 user \0 namespace \0 local → value
	bucketBlobs    = []byte("blobs")    // blob id → node id (references of content files)
	bucketInline   = []byte("inline")   // inline key → content of a small file

	keyStorageID = []byte("storage_id")
)

const (
	dbFile      = "meta.db"
	blobsDir    = "blobs"
	uploadsDir  = "uploads"
	lockTimeout = time.Second
)

// Store is the embedded storage.Store. It is safe for concurrent use.
type Store struct {
	dir       string
	blobDir   string
	uploadDir string
	db        *bolt.DB
	id        string
	log       *zap.Logger
	now       func() time.Time
	link      func(oldname, newname string) error // os.Link; tests replace it
	rename    func(oldpath, newpath string) error // os.Rename; tests replace it
	noSync    bool

	// inlineLimit is the largest content kept inline; negative: none is.
	inlineLimit int64
	// group lets concurrent commits share one bolt commit.
	group groupCommit

	personalQuota atomic.Int64 // 0: personal spaces have no quota

	// sessionDir holds the bytes of resumable uploads; sessionLocks
	// serialises the calls that change one session; sessionSweep is the
	// period of the expired sessions cleanup, and sessionSweepDone is
	// closed when that cleanup has ended.
	sessionDir       string
	sessionLocks     keyedLocks
	sessionSweep     time.Duration
	sessionSweepDone chan struct{}

	// chunkDir holds the parts of chunked uploads, which the sessions'
	// sweep also clears of expired ones.
	chunkDir string

	// pending keeps the orphan sweep from deleting a content file between
	// the moment it is put in place and the commit of the transaction that
	// references it (or its removal when that fails). A set rather than a
	// lock, so that a long COPY preparing many files never makes a waiting
	// sweep hold up other writers.
	pending pendingBlobs

	closing   chan struct{} // closed by Close to stop the sweeps
	sweepDone chan struct{} // closed when the sweep has ended
	trimDone  chan struct{} // closed when trimming the mapping has ended (trim.go)
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the store in dir. Only one process may
// have a store open at a time.
func Open(dir string, opts Options) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("open store: empty directory: %w", storage.ErrInvalid)
	}
	s := &Store{
		dir:       dir,
		blobDir:   filepath.Join(dir, blobsDir),
		uploadDir: filepath.Join(dir, uploadsDir),
		log:       opts.Logger,
		now:       opts.Now,
		link:      os.Link,
		rename:    os.Rename,
		noSync:    opts.NoSync,

		inlineLimit: inlineLimit(opts.InlineLimit),

		pending:   pendingBlobs{ids: map[string]struct{}{}},
		closing:   make(chan struct{}),
		sweepDone: make(chan struct{}),
		trimDone:  make(chan struct{}),

		sessionDir:       filepath.Join(dir, sessionsDir),
		sessionSweep:     opts.SessionSweep,
		sessionSweepDone: make(chan struct{}),

		chunkDir: filepath.Join(dir, chunksDir),
	}
	s.SetPersonalQuota(opts.PersonalQuota)
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.sessionSweep <= 0 {
		s.sessionSweep = time.Minute
	}
	for _, d := range []string{dir, s.blobDir, s.uploadDir, s.sessionDir, s.chunkDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	}
	dbPath := filepath.Join(dir, dbFile)
	db, err := bolt.Open(dbPath, 0o600, &bolt.Options{Timeout: lockTimeout, NoSync: opts.NoSync})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("open store: database %s is locked by another process", dbPath)
		}
		return nil, fmt.Errorf("open store: database %s: %w", dbPath, err)
	}
	s.db = db
	s.group.db = db
	if err := s.init(opts.StorageID); err != nil {
		db.Close()
		return nil, err
	}
	// We hold the database lock, so nothing in uploads/ belongs to a live
	// upload: it was never acknowledged.
	if err := s.clearUploads(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.recoverSessions(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.recoverChunkedUploads(); err != nil {
		db.Close()
		return nil, err
	}
	go s.sweep()
	go s.sweepSessions()
	go s.trimLoop()
	return s, nil
}

// init creates the buckets and settles the storage id.
func (s *Store) init(storageID string) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketSpaces, bucketPersonal, bucketNodes, bucketChildren, bucketProps, bucketBlobs, bucketInline, bucketLocks, bucketLockTokens, bucketSessions, bucketChunkedUploads, bucketChunkParts} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if err := migrateLayout(tx); err != nil {
			return err
		}
		if err := s.newTxn(tx).initUsage(); err != nil {
			return err
		}
		// Locks that expired while the store was closed would otherwise
		// stay until their space takes or changes locks again.
		if err := s.newTxn(tx).purgeLocks(s.now(), s.log); err != nil {
			return err
		}
		if storageID != "" {
			s.id = storageID
			return nil
		}
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keyStorageID); v != nil {
			s.id = string(v)
			return nil
		}
		s.id = uuid.NewString()
		return meta.Put(keyStorageID, []byte(s.id))
	})
	if err != nil {
		return fmt.Errorf("open store: initialize database: %w", err)
	}
	return nil
}

func (s *Store) clearUploads() error {
	entries, err := os.ReadDir(s.uploadDir)
	if err != nil {
		return fmt.Errorf("open store: clear uploads: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(s.uploadDir, e.Name())); err != nil {
			return fmt.Errorf("open store: clear uploads: %w", err)
		}
	}
	if len(entries) > 0 {
		s.log.Info("removed unfinished uploads", zap.Int("count", len(entries)))
	}
	return nil
}

// sweepSessions removes expired upload sessions and chunked uploads in the
// background, a bounded batch of each every sessionSweep, until the store
// closes. Expired ones are never returned meanwhile; this only frees their
// space.
func (s *Store) sweepSessions() {
	defer close(s.sessionSweepDone)
	tick := time.NewTicker(s.sessionSweep)
	defer tick.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-tick.C:
		}
		n, err := s.purgeSessions(sessionPurgeBatch)
		if err != nil {
			s.log.Error("expired upload session cleanup failed", zap.Error(err))
		}
		if n > 0 {
			s.log.Info("removed expired upload sessions", zap.Int("count", n))
		}
		n, err = s.purgeChunkedUploads(sessionPurgeBatch)
		if err != nil {
			s.log.Error("expired chunked upload cleanup failed", zap.Error(err))
		}
		if n > 0 {
			s.log.Info("removed expired chunked uploads", zap.Int("count", n))
		}
	}
}

// sweep removes content files no node references (left by a crash between
// putting a blob in place and committing its metadata, or between
// committing a replacement and deleting the old blob). It runs in the
// background, one blob directory at a time.
func (s *Store) sweep() {
	defer close(s.sweepDone)
	removed := 0
	for i := 0; i < 256; i++ {
		select {
		case <-s.closing:
			return
		default:
		}
		n, err := s.sweepDir(filepath.Join(s.blobDir, fmt.Sprintf("%02x", i)))
		removed += n
		if err != nil {
			s.log.Error("orphan content cleanup failed", zap.Error(err))
			return
		}
	}
	if removed > 0 {
		s.log.Info("removed unreferenced content files", zap.Int("count", removed))
	}
}

func (s *Store) sweepDir(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	// Pending files are looked up before the references: a file no longer
	// pending by then had its transaction committed before the snapshot
	// below starts, so the snapshot sees its reference.
	candidates := s.pending.without(entries)
	var orphans []string
	err = s.db.View(func(tx *bolt.Tx) error {
		blobs := tx.Bucket(bucketBlobs)
		for _, name := range candidates {
			if blobs.Get([]byte(name)) == nil {
				orphans = append(orphans, name)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, name := range orphans {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return 0, err
		}
	}
	return len(orphans), nil
}

// pendingBlobs is the set of content files written but not yet referenced
// by committed metadata.
type pendingBlobs struct {
	mu  sync.Mutex
	ids map[string]struct{} // content file ids are never reused
}

// add marks blob as pending; call it before the file is created.
func (p *pendingBlobs) add(blob string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids[blob] = struct{}{}
}

// done unmarks blobs; call it once their transaction has committed or the
// files are removed.
func (p *pendingBlobs) done(blobs ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range blobs {
		delete(p.ids, b)
	}
}

// without returns the names of the entries that are not pending.
func (p *pendingBlobs) without(entries []fs.DirEntry) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if _, ok := p.ids[e.Name()]; !ok {
			names = append(names, e.Name())
		}
	}
	return names
}

// Close stops background work and closes the database. Uploads and open
// contents must not be used after Close.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		<-s.sweepDone
		<-s.sessionSweepDone
		<-s.trimDone
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("close store: %w", err)
		}
	})
	return s.closeErr
}

// SetPersonalQuota sets the quota of every personal space, in bytes; 0
// means none. A configuration reload keeps the store open, so the quota can
// change while it is.
func (s *Store) SetPersonalQuota(bytes int64) { s.personalQuota.Store(max(bytes, 0)) }

// diskFull marks the error of a full disk or an exhausted disk quota as
// storage.ErrNoSpace: the client is told 507, not 500.
func diskFull(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", storage.ErrNoSpace, err)
	}
	return err
}

// StorageID returns the id that prefixes resource ids of this store.
func (s *Store) StorageID() string { return s.id }

// newBlobID returns a fresh content file id: 32 lower-case hex digits.
func newBlobID() string {
	u := uuid.New()
	return hex.EncodeToString(u[:])
}

func (s *Store) blobPath(blob string) string {
	return filepath.Join(s.blobDir, blob[:2], blob)
}

// prepareBlobDir makes sure the directory of blob exists, durably.
func (s *Store) prepareBlobDir(blob string) error {
	err := os.Mkdir(filepath.Join(s.blobDir, blob[:2]), 0o700)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.syncDir(s.blobDir)
}

// removeBlobs deletes content files no longer referenced. Failures leave
// orphans the next sweep removes, so they are only logged.
func (s *Store) removeBlobs(blobs []string) {
	for _, b := range blobs {
		if err := os.Remove(s.blobPath(b)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("cannot remove content file", zap.String("blob", b), zap.Error(err))
		}
	}
}

// sync flushes f to stable storage unless the store runs without fsync.
func (s *Store) sync(f *os.File) error {
	if s.noSync {
		return nil
	}
	return f.Sync()
}

// syncDir flushes a directory's entries unless the store runs without fsync.
func (s *Store) syncDir(dir string) error {
	if s.noSync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// txn is a bolt transaction with the store's buckets at hand. A bucket is
// opened on first use and kept for the rest of the transaction: most
// transactions touch two or three of the store's buckets, and opening one
// costs a search of the root and a few allocations (a read-only bolt
// transaction does not keep the buckets it opened).
type txn struct {
	tx   *bolt.Tx
	now  time.Time
	seq  uint64
	open openBuckets
	look lookups // layout.go
	// personalQuota is the store's default quota of personal spaces.
	personalQuota int64
}

// openBuckets are the buckets a txn has opened so far; nil is not yet.
type openBuckets struct {
	spaces, personal, nodes, children, props, blobs, inline *bolt.Bucket
	locks, lockTokens                                       *bolt.Bucket
	sessions, chunkedUploads, chunkParts                    *bolt.Bucket
}

func (s *Store) newTxn(tx *bolt.Tx) *txn {
	return &txn{tx: tx, personalQuota: s.personalQuota.Load()}
}

// bucket returns the bucket called name, opening it into *open on first
// use.
func (t *txn) bucket(open **bolt.Bucket, name []byte) *bolt.Bucket {
	if *open == nil {
		*open = t.tx.Bucket(name)
	}
	return *open
}

func (t *txn) spaces() *bolt.Bucket   { return t.bucket(&t.open.spaces, bucketSpaces) }
func (t *txn) personal() *bolt.Bucket { return t.bucket(&t.open.personal, bucketPersonal) }
func (t *txn) nodes() *bolt.Bucket    { return t.bucket(&t.open.nodes, bucketNodes) }
func (t *txn) children() *bolt.Bucket { return t.bucket(&t.open.children, bucketChildren) }
func (t *txn) props() *bolt.Bucket    { return t.bucket(&t.open.props, bucketProps) }
func (t *txn) blobs() *bolt.Bucket    { return t.bucket(&t.open.blobs, bucketBlobs) }
func (t *txn) inline() *bolt.Bucket   { return t.bucket(&t.open.inline, bucketInline) }

// locks holds the lock records by space, lockTokens the space of each
// token.
func (t *txn) locks() *bolt.Bucket      { return t.bucket(&t.open.locks, bucketLocks) }
func (t *txn) lockTokens() *bolt.Bucket { return t.bucket(&t.open.lockTokens, bucketLockTokens) }

func (s *Store) view(fn func(t *txn) error) error {
	return s.db.View(func(tx *bolt.Tx) error { return fn(s.newTxn(tx)) })
}

// update runs fn in a write transaction. The change time and the sequence
// number that makes etags unique are taken once the write lock is held.
func (s *Store) update(fn func(t *txn) error) error {
	return diskFull(s.db.Update(s.writeTxn(fn)))
}

// updateGrouped runs fn like update, but in a transaction it may share with
// other concurrent updateGrouped calls (groupcommit.go), so that they are
// made durable together. fn may run more than once and must leave nothing
// behind outside the transaction but what its last run sets.
func (s *Store) updateGrouped(fn func(t *txn) error) error {
	return diskFull(s.group.update(s.writeTxn(fn)))
}

// writeTxn turns fn into a bolt write function with the store's buckets,
// its own etag sequence number and the change time.
func (s *Store) writeTxn(fn func(t *txn) error) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		t := s.newTxn(tx)
		seq, err := t.nodes().NextSequence()
		if err != nil {
			return err
		}
		t.seq = seq
		t.now = s.now()
		return fn(t)
	}
}

// etag returns the etag of node id changed in this transaction: hex md5 of
// the id and the transaction's sequence number.
func (t *txn) etag(id string) string {
	var seq [binary.MaxVarintLen64]byte
	h := md5.New()
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write(seq[:binary.PutUvarint(seq[:], t.seq)])
	return hex.EncodeToString(h.Sum(nil))
}

// node returns the node with id, and whether it exists.
func (t *txn) node(id string) (rec, bool, error) {
	k := t.look.get(&t.look.nodes, t.nodes, []byte(id))
	if k == nil {
		return rec{}, false, nil
	}
	v := t.look.get(&t.look.children, t.children, k)
	if v == nil {
		return rec{}, false, fmt.Errorf("node %s: dangling index entry: %w", id, errCorrupt)
	}
	r, err := decodeNode(v)
	return r, err == nil, err
}

// nodeIn returns node id of the space, or a wrapped ErrNotFound.
func (t *txn) nodeIn(spaceID, id string) (rec, error) {
	r, ok, err := t.node(id)
	if err != nil {
		return rec{}, err
	}
	if !ok || r.SpaceID != spaceID {
		return rec{}, storage.NodeNotFound(spaceID, id)
	}
	return r, nil
}

// folderIn returns the folder id of the space to put something in; a
// missing parent or a file is a wrapped ErrConflict, a node of another space
// a wrapped otherSpace.
func (t *txn) folderIn(spaceID, id string, otherSpace error) (rec, error) {
	r, ok, err := t.node(id)
	if err != nil {
		return rec{}, err
	}
	if err := storage.CheckParent(spaceID, id, r.Node, ok, otherSpace); err != nil {
		return rec{}, err
	}
	return r, nil
}

// putNode rewrites the record of r, which stays where it is: its parent
// and name are those it was stored with (placeNode puts it elsewhere).
func (t *txn) putNode(r *rec) error {
	return t.children().Put(recordKey(r), encodeNode(r))
}

func childKey(parentID, name string) []byte {
	k := make([]byte, 0, len(parentID)+1+len(name))
	k = append(k, parentID...)
	k = append(k, '/')
	return append(k, name...)
}

// child returns the child called name of parentID, and whether it exists.
func (t *txn) child(parentID, name string) (rec, bool, error) {
	v := t.look.get(&t.look.children, t.children, childKey(parentID, name))
	if v == nil {
		return rec{}, false, nil
	}
	r, err := decodeNode(v)
	return r, err == nil, err
}

// propagate records a change below parentID: every folder from parentID up
// to the space root gets a new etag, its modification time raised to the
// change time and its size changed by delta.
func (t *txn) propagate(parentID string, delta int64) error {
	for id := parentID; id != ""; {
		r, ok, err := t.node(id)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("ancestor %s missing: %w", id, errCorrupt)
		}
		r.Size += delta
		if t.now.After(r.ModTime) {
			r.ModTime = t.now
		}
		r.ETag = t.etag(r.ID)
		if err := t.putNode(&r); err != nil {
			return err
		}
		id = r.ParentID
	}
	return nil
}

// isAncestor reports whether ancestorID is id or one of its ancestors.
func (t *txn) isAncestor(ancestorID, id string) (bool, error) {
	for id != "" {
		if id == ancestorID {
			return true, nil
		}
		r, ok, err := t.node(id)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, fmt.Errorf("ancestor %s missing: %w", id, errCorrupt)
		}
		id = r.ParentID
	}
	return false, nil
}
