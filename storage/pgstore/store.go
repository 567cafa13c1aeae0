// Package pgstore is the distributed storage.Store: metadata, dead
// properties, locks and upload sessions in PostgreSQL (through pgx), file
// content as immutable objects in an S3-compatible bucket (s3content).
// Several Caddy nodes open the same database and bucket and behave as one
// server: every change is one PostgreSQL transaction, and a node keeps no
// state that another would need.
//
// Changes to the tree of a space serialise on the space's row (SELECT …
// FOR UPDATE), so that size, etag and mtime propagation to the root never
// loses an update when two nodes write into one folder, and no two
// transactions lock rows in different orders.
package pgstore

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// Options configure a Store.
type Options struct {
	// DSN is the PostgreSQL connection string (pgx's format: a URL or
	// key=value pairs; pool_max_conns and the like apply).
	DSN string
	// MaxConns bounds the node's connections to the database; 0 means the
	// DSN's pool_max_conns, or else DefaultMaxConns.
	MaxConns int32
	// S3 names the bucket holding file content.
	S3 s3content.Config
	// StorageID prefixes resource ids; when empty, a UUID is generated once
	// and kept in the database, so every node agrees on it.
	StorageID string
	// Logger for background problems (the object sweep); nil discards.
	Logger *zap.Logger
	// Now returns the current time (tests inject it); nil means time.Now.
	Now func() time.Time
	// PersonalQuota is the quota in bytes of every personal space without
	// a quota of its own; 0 means none.
	PersonalQuota int64
	// Sweep is how often expired sessions, chunked uploads and
	// unreferenced objects are removed in the background; 0 means every
	// minute.
	Sweep time.Duration
	// ObjectGrace is how long an object no node references any more stays
	// readable, for readers that opened it before it was replaced or
	// removed; 0 means 15 minutes.
	ObjectGrace time.Duration
	// UploadGrace is how long an object being written may stay
	// unreferenced before the sweep takes it for the orphan of a crashed
	// upload, and aborts its incomplete multipart upload; 0 means 24
	// hours.
	UploadGrace time.Duration
	// PreviewCacheSize caps the preview cache (previews.go) in bytes; 0
	// means storage.DefaultPreviewCacheSize, a negative value no cache.
	// SetPreviewCacheSize changes it while the store is open.
	PreviewCacheSize int64
	// MaxNodes is the node cap of a space without a quota
	// (storage.NodeCap); 0 means storage.DefaultMaxNodes.
	MaxNodes int64
	// CountWrites makes the store count the rows its committed
	// transactions write (RecordsWritten), at the cost of one more
	// statement per transaction: for tests and benchmarks.
	CountWrites bool

	// layoutBatch is migrateLayout's batch; 0 means layoutBatch. Tests
	// lower it to see a migration in several batches.
	layoutBatch int
	// emptyBudget is EmptyTrash's time per transaction; 0 means
	// emptyBudget. Tests lower it to see a trash emptied in parts.
	emptyBudget time.Duration
	// purgeBatch is the nodes one step of a purge deletes; 0 means
	// purgeBatch. Tests lower it to see an item purged in parts.
	purgeBatch int
	// inlineLimit is the largest file kept in its row (upload.go); 0
	// means inlineLimit, a negative value none. Tests that follow the
	// objects of small files turn it off.
	inlineLimit int64
	// claimLease is how long a chunked upload's claim outlives its node
	// (chunks.go); 0 means claimLease. Tests shorten it to see a claim
	// lapse.
	claimLease time.Duration
}

// DefaultMaxConns is the pool size of a node whose settings name none. A
// request holds a connection only while its transaction runs, never while
// it waits for a client, so the pool bounds concurrent database work, not
// concurrent requests: 16 leaves room for bursts of short transactions,
// and six nodes at the default stay within PostgreSQL's default
// max_connections of 100 (less the 3 it keeps for superusers).
const DefaultMaxConns = 16

// The interfaces the protocol layer takes from a store.
var (
	_ storage.Store          = (*Store)(nil)
	_ storage.SpaceLister    = (*Store)(nil)
	_ storage.LockStore      = (*Store)(nil)
	_ storage.UploadSessions = (*Store)(nil)
	_ storage.ChunkedUploads = (*Store)(nil)
	_ storage.Trash          = (*Store)(nil)
	_ storage.Versions       = (*Store)(nil)
	_ storage.Retainer       = (*Store)(nil)
)

// Store is the PostgreSQL + S3 storage.Store. It is safe for concurrent
// use, by any number of processes sharing the database and bucket.
type Store struct {
	pool *pgxpool.Pool
	// objects is set, with id, before reached turns true; nothing reads it
	// before.
	objects *s3content.Bucket
	id      atomic.Pointer[string]
	// reached is whether the database and the bucket have been reached and
	// the schema is in place; until then every method is ErrUnavailable.
	reached atomic.Bool
	log     *zap.Logger
	now     func() time.Time

	objectGrace time.Duration
	uploadGrace time.Duration
	sweepEvery  time.Duration
	emptyBudget time.Duration
	purgeBatch  int
	inlineLimit int64
	claimLease  time.Duration

	personalQuota atomic.Int64
	// maxNodes is the node cap of a space without a quota; 0 is
	// storage.DefaultMaxNodes.
	maxNodes atomic.Int64
	// previewCacheSize is the cap of the preview cache in bytes; 0: none.
	previewCacheSize atomic.Int64
	// shareCap is how many shares one user may have; 0 is
	// storage.MaxSharesPerCreator. Only tests lower it, to reach it
	// without making ten thousand shares.
	shareCap atomic.Int64
	// chunkCap is how many parts one chunked upload may have; 0 is
	// storage.MaxChunksPerUpload. Only tests lower it, to reach it
	// without putting ten thousand parts.
	chunkCap atomic.Int64
	// countWrites is Options.CountWrites; written counts the rows,
	// commits the write transactions.
	countWrites bool
	written     atomic.Int64
	commits     atomic.Int64
	retention   atomic.Pointer[storage.RetentionPolicy]
	// recountVersions asks ExpireUndo to look for files with more
	// versions than the policy keeps, after the policy was set.
	recountVersions atomic.Bool
	// SweepHook reports what the background sweep removed (sweep.go).
	storage.SweepHook
	// groups gathers the file commits that queue for a space's lock
	// (groupcommit.go).
	groups commitGroups

	// purges are the purges transactions leave to do after they commit
	// (purger.go).
	purges purgesAfter

	closing chan struct{}
	loops   sync.WaitGroup // the sweep, the attempts to reach the backends, the claims held
	// loopsMu orders a loop started while the store serves (startLoop)
	// before Close's wait for the loops.
	loopsMu   sync.Mutex
	closeOnce sync.Once
}

//go:embed schema.sql
var schema string

// Open connects to the database and the bucket, creates or migrates the
// schema, and starts the background sweep.
//
// A database or bucket that cannot be reached does not stop it: the store
// answers ErrUnavailable (503) and tries again in the background until it
// reaches both, so that a Caddy serving other sites starts with them, and
// a node comes back by itself after its backends. Any other failure (a
// malformed DSN, a storage id the database does not hold) is returned.
func Open(ctx context.Context, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(opts.DSN)
	if err != nil {
		return nil, fmt.Errorf("open store: %w: %w", storage.ErrInvalid, err)
	}
	switch {
	case opts.MaxConns > 0:
		cfg.MaxConns = opts.MaxConns
	case !strings.Contains(opts.DSN, "pool_max_conns"):
		// pgxpool's own default, max(4, cores), is too few for a node
		// whose requests each take a connection for a moment.
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// A database that does not answer is an outage to report (503),
		// not a request to hold.
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", classify(err))
	}
	s := &Store{
		pool:        pool,
		log:         opts.Logger,
		now:         opts.Now,
		objectGrace: orDefault(opts.ObjectGrace, 15*time.Minute),
		uploadGrace: orDefault(opts.UploadGrace, 24*time.Hour),
		sweepEvery:  orDefault(opts.Sweep, time.Minute),
		emptyBudget: orDefault(opts.emptyBudget, emptyBudget),
		purgeBatch:  orDefault(opts.purgeBatch, purgeBatch),
		inlineLimit: cmp.Or(opts.inlineLimit, inlineLimit),
		claimLease:  orDefault(opts.claimLease, claimLease),
		closing:     make(chan struct{}),
		countWrites: opts.CountWrites,
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.personalQuota.Store(max(opts.PersonalQuota, 0))
	s.SetMaxNodes(opts.MaxNodes)
	s.SetPreviewCacheSize(opts.PreviewCacheSize)
	s.SetRetention(storage.RetentionPolicy{Default: storage.DefaultRetention})
	if opts.StorageID != "" {
		s.id.Store(&opts.StorageID)
	}
	switch err := s.open(ctx, opts); {
	case err == nil:
		s.reached.Store(true)
	case errors.Is(err, storage.ErrUnavailable):
		s.log.Warn("the store's backends cannot be reached: answering 503 and trying again", zap.Error(err))
		s.loops.Add(1)
		go s.reachLoop(opts)
	default:
		pool.Close()
		return nil, err
	}
	s.loops.Add(1)
	go s.sweepLoop()
	return s, nil
}

// open reaches the database and the bucket and readies the schema.
func (s *Store) open(ctx context.Context, opts Options) error {
	if err := s.migrate(ctx); err != nil {
		return err
	}
	if err := s.migrateLayout(ctx, cmp.Or(opts.layoutBatch, layoutBatch)); err != nil {
		return err
	}
	id, err := s.storageID(ctx, opts.StorageID)
	if err != nil {
		return err
	}
	s.id.Store(&id)
	s.objects, err = s3content.Open(ctx, opts.S3)
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	return nil
}

// Bounds of the wait between two attempts to reach the backends.
const (
	reachFirstWait = 250 * time.Millisecond
	reachMaxWait   = 5 * time.Second
	reachTimeout   = 30 * time.Second // of one attempt
)

// reachLoop tries to open the store until it succeeds or the store closes.
func (s *Store) reachLoop(opts Options) {
	defer s.loops.Done()
	wait := reachFirstWait
	for {
		select {
		case <-s.closing:
			return
		case <-time.After(wait):
		}
		ctx, cancel := context.WithTimeout(context.Background(), reachTimeout)
		err := s.open(ctx, opts)
		cancel()
		if err == nil {
			s.reached.Store(true)
			s.log.Info("the store's backends are reached")
			return
		}
		if !errors.Is(err, storage.ErrUnavailable) {
			// Reached, but refused: only a new configuration mends it.
			s.log.Error("the store cannot be opened", zap.Error(err))
		}
		wait = min(2*wait, reachMaxWait)
	}
}

// errNotReached answers every method until the backends are reached.
var errNotReached = fmt.Errorf("the store's database and bucket have not been reached yet: %w", storage.ErrUnavailable)

// db returns the connection pool once the backends are reached.
func (s *Store) db() (*pgxpool.Pool, error) {
	if !s.reached.Load() {
		return nil, errNotReached
	}
	return s.pool, nil
}

// schemaLock is the advisory lock key under which nodes migrate the
// schema one at a time.
const schemaLock = 0x64617673 // "davs"

// migrate creates the schema, or brings an older one up to date.
func (s *Store) migrate(ctx context.Context) error {
	return runTx(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", schemaLock); err != nil {
			return err
		}
		for _, step := range []string{schema, directorySchema, previewSchema, attemptSchema, appPasswordSchema, loginFlowSchema, massDeleteSchema} {
			if _, err := tx.Exec(ctx, step); err != nil {
				return err
			}
		}
		return migrateSearch(ctx, tx, s.log)
	})
}

// storageID returns the id kept in the database, recording want (or a new
// UUID) when there is none yet. A different want is refused: resource ids
// clients hold would break.
func (s *Store) storageID(ctx context.Context, want string) (string, error) {
	var id string
	err := runTx(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		candidate := want
		if candidate == "" {
			candidate = uuid.NewString()
		}
		_, err := tx.Exec(ctx, `INSERT INTO meta (key, value) VALUES ('storage_id', $1) ON CONFLICT (key) DO NOTHING`, candidate)
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT value FROM meta WHERE key = 'storage_id'`).Scan(&id)
	})
	if err != nil {
		return "", fmt.Errorf("open store: storage id: %w", err)
	}
	if want != "" && id != want {
		return "", fmt.Errorf("open store: storage id %q differs from %q kept in the database: %w", want, id, storage.ErrInvalid)
	}
	return id, nil
}

// Close stops the sweep and closes the connections. The database and the
// bucket are untouched.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.loopsMu.Lock()
		close(s.closing)
		s.loopsMu.Unlock()
		s.loops.Wait()
		s.pool.Close()
	})
	return nil
}

// startLoop counts a background loop that a request starts (holdClaim)
// in s.loops, unless the store is closing: then it reports false and the
// loop must not run.
func (s *Store) startLoop() bool {
	s.loopsMu.Lock()
	defer s.loopsMu.Unlock()
	select {
	case <-s.closing:
		return false
	default:
		s.loops.Add(1)
		return true
	}
}

// StorageID is the id that prefixes resource ids of this store; "" while
// the database that keeps it has not been reached.
func (s *Store) StorageID() string {
	if id := s.id.Load(); id != nil {
		return *id
	}
	return ""
}

// SetPersonalQuota sets the quota of every personal space without one of
// its own, in bytes; 0 means none. It applies to this process only: every
// node of a cluster is configured alike.
func (s *Store) SetPersonalQuota(bytes int64) { s.personalQuota.Store(max(bytes, 0)) }

// SetMaxNodes sets the node cap of a space without a quota; n <= 0
// restores storage.DefaultMaxNodes. It applies to this process only, as
// the personal quota does.
func (s *Store) SetMaxNodes(n int64) { s.maxNodes.Store(max(n, 0)) }

func orDefault[T time.Duration | int](d, def T) T {
	if d <= 0 {
		return def
	}
	return d
}
