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
//	previews/<xx>/<name> the preview cache (previews.go), xx = first two hex digits of the content's SHA1
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
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

var (
	_ storage.Store       = (*Store)(nil)
	_ storage.SpaceLister = (*Store)(nil)
)

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
	// Inspect opens the store for an administrator's check (Check): none
	// of the recovery at open (unfinished uploads, orphan session files
	// and chunk directories) and none of the background sweeps (orphan
	// content files, expired sessions, trash and versions) run, so that
	// the check sees the store as it is and changes only what it repairs.
	Inspect bool
	// PreviewCacheSize caps the preview cache (previews.go) in bytes; 0
	// means storage.DefaultPreviewCacheSize, a negative value no cache.
	// SetPreviewCacheSize changes it while the store is open.
	PreviewCacheSize int64
	// MaxNodes is the node cap of a space without a quota
	// (storage.NodeCap); 0 means storage.DefaultMaxNodes. SetMaxNodes
	// changes it while the store is open.
	MaxNodes int64
	// DigestWorkers bounds how many contents have the digests their
	// upload left for later (storage.LaterDigests) computed at once; 0
	// means DefaultDigestWorkers. A negative value (NoLaterDigests) makes
	// every upload compute every digest while its bytes stream, and one
	// worker compute only those a restart left missing.
	DigestWorkers int
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
	// The trash and versions (trash.go, versions.go); new buckets, which
	// Open creates in a database from before them.
	bucketTrash       = []byte("trash")        // space id \0 trash key → encoded trash item
	bucketTrashPlaces = []byte("trash_places") // parent id / name \0 trash key → space id: the items deleted from a place
	bucketVersions    = []byte("versions")     // space id \0 file id \0 version key → encoded version

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
	// commits counts the write transactions update committed; the group's
	// count its own (WriteCommits).
	commits atomic.Uint64
	// written counts the records committed write transactions wrote.
	written atomic.Int64
	// versionSweep is where the next expiry pass reads versions from.
	versionSweep versionSweep

	personalQuota atomic.Int64 // 0: personal spaces have no quota
	// maxNodes is the node cap of a space without a quota; 0 is
	// storage.DefaultMaxNodes.
	maxNodes atomic.Int64
	// shareCap is how many shares one user may have; 0 is
	// storage.MaxSharesPerCreator (SetMaxSharesPerCreator).
	shareCap atomic.Int64
	// chunkCap is how many parts one chunked upload may have; 0 is
	// storage.MaxChunksPerUpload. Only tests lower it, to reach it
	// without putting ten thousand parts.
	chunkCap atomic.Int64
	// retention is what the trash and versions of each space keep
	// (SetRetention); a txn reads it once.
	retention atomic.Pointer[storage.RetentionPolicy]
	// SweepHook reports what the background sweeps removed (sweep.go).
	storage.SweepHook

	// sessionDir holds the bytes of resumable uploads; sessionLocks
	// serialises the calls that change one session; sessionSweep is the
	// period of the expired sessions cleanup, and sessionSweepDone is
	// closed when that cleanup has ended.
	sessionDir       string
	sessionLocks     keyedLocks
	sessionSweep     time.Duration
	sessionSweepDone chan struct{}
	// chainLocks lets one part at a time extend a chunked upload's digest
	// chain and staging file (chunks.go).
	chainLocks keyedLocks

	// chunkDir holds the parts of chunked uploads, which the sessions'
	// sweep also clears of expired ones.
	chunkDir string

	// previews is the preview cache, files beside the database.
	previews *previewCache

	// pending keeps the orphan sweep from deleting a content file between
	// the moment it is put in place and the commit of the transaction that
	// references it (or its removal when that fails). A set rather than a
	// lock, so that a long COPY preparing many files never makes a waiting
	// sweep hold up other writers.
	pending pendingBlobs

	// digests computes the digests uploads left for later (digests.go);
	// nil with Inspect.
	digests *digester
	// laterDigests: uploads may leave digests for later (HashInline);
	// false with NoLaterDigests.
	laterDigests bool

	closing   chan struct{} // closed by Close to stop the sweeps
	sweepDone chan struct{} // closed when the sweep has ended
	trimDone  chan struct{} // closed when trimming the mapping has ended (trim.go)
	scans     *scanMeter    // what scans read since the last trim (trim.go); nil with Inspect
	files     fileGrowth    // the process's file pages at the last trim (trim.go)
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
		noSync:    opts.NoSync || benchNoSync,

		inlineLimit: inlineLimit(opts.InlineLimit),

		pending:   pendingBlobs{ids: map[string]struct{}{}},
		closing:   make(chan struct{}),
		sweepDone: make(chan struct{}),
		trimDone:  make(chan struct{}),
		scans:     newScanMeter(),

		sessionDir:       filepath.Join(dir, sessionsDir),
		sessionSweep:     opts.SessionSweep,
		sessionSweepDone: make(chan struct{}),

		chunkDir: filepath.Join(dir, chunksDir),
	}
	s.SetPersonalQuota(opts.PersonalQuota)
	s.SetMaxNodes(opts.MaxNodes)
	s.SetRetention(storage.RetentionPolicy{Default: storage.DefaultRetention})
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if benchNoSync {
		s.log.Warn("this build of the store never fsyncs (tag davspaces_nosync): for benchmarks only")
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
	db, err := bolt.Open(dbPath, 0o600, &bolt.Options{Timeout: lockTimeout, NoSync: s.noSync, InitialMmapSize: initialMapSize})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("open store: database %s is locked by another process: %w", dbPath, ErrLocked)
		}
		return nil, fmt.Errorf("open store: database %s: %w", dbPath, err)
	}
	s.db = db
	s.group.db = db
	if err := s.init(opts.StorageID); err != nil {
		db.Close()
		return nil, err
	}
	if opts.Inspect {
		s.scans = nil // nobody trims
		// The check leaves the preview cache as it is, unread.
		s.previews = newPreviewCache(filepath.Join(dir, previewsDir), s.now, s.log)
		close(s.sweepDone)
		close(s.sessionSweepDone)
		close(s.trimDone)
		return s, nil
	}
	// Before the recovery, whose commits may drop contents and so their
	// previews.
	if s.previews, err = openPreviewCache(filepath.Join(dir, previewsDir), opts.PreviewCacheSize, s.now, s.log); err != nil {
		db.Close()
		return nil, err
	}
	// The recovery. We hold the database lock, so nothing in uploads/
	// belongs to a live upload: it was never acknowledged (clearUploads).
	for _, recovery := range []func() error{s.clearUploads, s.recoverSessions, s.recoverChunkedUploads} {
		if err := recovery(); err != nil {
			db.Close()
			return nil, err
		}
	}
	s.laterDigests = opts.DigestWorkers >= 0
	s.digests = startDigester(max(cmp.Or(opts.DigestWorkers, DefaultDigestWorkers), 1), s.runDigestJob)
	if err := s.queueMissingDigests(); err != nil {
		s.digests.close()
		db.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	go s.sweep()
	go s.sweepSessions()
	go s.trimLoop()
	return s, nil
}

// init creates the buckets and settles the storage id.
func (s *Store) init(storageID string) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketSpaces, bucketPersonal, bucketNodes, bucketChildren, bucketProps, bucketBlobs, bucketInline, bucketLocks, bucketLockTokens, bucketSessions, bucketChunkedUploads, bucketChunkParts, bucketTrash, bucketTrashPlaces, bucketPurging, bucketVersions,
			bucketShares, bucketShareTokens, bucketShareItems, bucketShareCreators, bucketShareGrantees,
			bucketDirectory, bucketDirectoryGroups} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if err := migrateLayout(tx); err != nil {
			return err
		}
		if err := buildNameIndex(tx); err != nil {
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
	if err := buildVersionAges(s.db, versionAgeBatch); err != nil {
		return fmt.Errorf("open store: migrate database to layout %d: %w", layoutVersion, err)
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

// Close stops background work and closes the database. Uploads and open
// contents must not be used after Close.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		if s.digests != nil {
			s.digests.close()
		}
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

// SetMaxNodes sets the node cap of a space without a quota; n <= 0
// restores storage.DefaultMaxNodes. A configuration reload keeps the store
// open, so the cap can change while it is.
func (s *Store) SetMaxNodes(n int64) { s.maxNodes.Store(max(n, 0)) }

// StorageID returns the id that prefixes resource ids of this store.
func (s *Store) StorageID() string { return s.id }
