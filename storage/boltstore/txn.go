package boltstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

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
	// spaceOf is the space of every folder whose ancestry the txn walked
	// (layout.go: spaceBelow).
	spaceOf map[string]string
	// personalQuota is the store's default quota of personal spaces.
	personalQuota int64
	// maxNodes is the store's node cap of a space without a quota.
	maxNodes int64
	// retention is the store's retention policy when the txn began.
	retention *storage.RetentionPolicy
	// garbage are the content files the transaction no longer references,
	// removed once it has committed (update, updateGrouped): before, a
	// crash or a rollback would leave metadata pointing at nothing.
	garbage []string
	// laterDigests are the content files this transaction gave a record
	// whose digests are still being computed (a copy of a file just
	// uploaded): their jobs are queued once it has committed.
	laterDigests []digestJob
	// scans counts the records that scans read, for trimming the mapping;
	// scanned is what this txn's scans read.
	scans   *scanMeter
	scanned int64
	// walk is set in a txn of viewWalk, which its scans trim (trim_walk.go).
	walk *walk
	// trim trims the mapping until a write txn has committed, once the
	// txn has scanned much (trim.go); nil in a read txn.
	trim *commitTrim
	// dropped are the checksums of the contents the transaction deleted,
	// whose previews go once it has committed.
	dropped []string
	// written counts the records the txn put or deleted
	// (Store.RecordsWritten).
	written int64
	// purges are the trash items of trees a remove destroys, which go
	// in parts once the transaction has committed (discard).
	purges []trashPurge
}

// openBuckets are the buckets a txn has opened so far; nil is not yet.
type openBuckets struct {
	spaces, personal, nodes, children, props, blobs, inline *bolt.Bucket
	locks, lockTokens                                       *bolt.Bucket
	sessions, chunkedUploads, chunkParts                    *bolt.Bucket
	trash, trashPlaces, purging, versions, versionAges      *bolt.Bucket
	names                                                   *bolt.Bucket
	share                                                   shareBuckets
}

func (s *Store) newTxn(tx *bolt.Tx) *txn {
	return &txn{tx: tx, personalQuota: s.personalQuota.Load(), maxNodes: s.maxNodes.Load(), retention: s.retention.Load(), scans: s.scans}
}

// retentionOf returns the retention of space spaceID.
func (t *txn) retentionOf(spaceID string) storage.Retention {
	return t.retention.For(spaceID)
}

// discardContent marks a content file for removal once the transaction
// has committed.
func (t *txn) discardContent(blob string) {
	if blob != "" {
		t.garbage = append(t.garbage, blob)
	}
}

// bucket returns the bucket called name, opening it into *open on first
// use.
func (t *txn) bucket(open **bolt.Bucket, name []byte) countedBucket {
	if *open == nil {
		*open = t.tx.Bucket(name)
	}
	return t.counted(*open)
}

// counted returns b counting its puts and deletes into the txn's.
func (t *txn) counted(b *bolt.Bucket) countedBucket {
	return countedBucket{boltBucket: b, written: &t.written}
}

// boltBucket names bolt's bucket for embedding: embedded as *bolt.Bucket,
// the field would hide the method Bucket that opens a nested bucket.
type boltBucket = bolt.Bucket

// countedBucket is a bucket of a txn that counts the records its puts
// and deletes write, so that a test can show what a change costs
// whatever the size of the tree it changes (storetest.WriteCounter).
type countedBucket struct {
	*boltBucket
	written *int64
}

func (b countedBucket) Put(key, value []byte) error {
	*b.written++
	return b.boltBucket.Put(key, value)
}

func (b countedBucket) Delete(key []byte) error {
	*b.written++
	return b.boltBucket.Delete(key)
}

// raw returns the bucket itself, for reads.
func (b countedBucket) raw() *bolt.Bucket { return b.boltBucket }

// decodeUnder decodes the records of b whose keys start with prefix, in
// key order, each by decode given the rest of its key.
func decodeUnder[T any](b countedBucket, prefix []byte, decode func(key string, v []byte) (T, error)) ([]T, error) {
	var out []T
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		r, err := decode(string(k[len(prefix):]), v)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (t *txn) spaces() countedBucket { return t.bucket(&t.open.spaces, bucketSpaces) }

func (t *txn) personal() countedBucket { return t.bucket(&t.open.personal, bucketPersonal) }

func (t *txn) nodes() countedBucket { return t.bucket(&t.open.nodes, bucketNodes) }

func (t *txn) children() countedBucket { return t.bucket(&t.open.children, bucketChildren) }

func (t *txn) props() countedBucket { return t.bucket(&t.open.props, bucketProps) }

func (t *txn) blobs() countedBucket { return t.bucket(&t.open.blobs, bucketBlobs) }

func (t *txn) inline() countedBucket { return t.bucket(&t.open.inline, bucketInline) }

func (t *txn) trash() countedBucket { return t.bucket(&t.open.trash, bucketTrash) }

func (t *txn) trashPlaces() countedBucket { return t.bucket(&t.open.trashPlaces, bucketTrashPlaces) }

func (t *txn) versions() countedBucket { return t.bucket(&t.open.versions, bucketVersions) }

// locks holds the lock records by space, lockTokens the space of each
// token.
func (t *txn) locks() countedBucket { return t.bucket(&t.open.locks, bucketLocks) }

func (t *txn) lockTokens() countedBucket { return t.bucket(&t.open.lockTokens, bucketLockTokens) }

func (s *Store) view(fn func(t *txn) error) error {
	defer s.trimIfGrown()
	return s.db.View(func(tx *bolt.Tx) error { return fn(s.newTxn(tx)) })
}

// changeGrouped runs fn in a grouped write transaction (updateGrouped)
// once ctx and the caller's validation (invalid: its error, nil when the
// input is valid) pass. The failure of either of those or of fn says what
// the change was; ctx's is returned as it is.
func (s *Store) changeGrouped(ctx context.Context, what string, invalid error, fn func(t *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if invalid != nil {
		return fmt.Errorf("%s: %w", what, invalid)
	}
	if err := s.updateGrouped(fn); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// inTxn checks ctx, then returns what fn returns from the transaction run
// runs it in (s.view, s.update or s.updateGrouped): the zero T when
// either fails, so that no half-read value escapes a failed transaction.
func inTxn[T any](ctx context.Context, run func(func(*txn) error) error, fn func(*txn) (T, error)) (T, error) {
	var out, zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	err := run(func(t *txn) (err error) {
		out, err = fn(t)
		return err
	})
	if err != nil {
		return zero, err
	}
	return out, nil
}

// update runs fn in a write transaction. The change time and the sequence
// number that makes etags unique are taken once the write lock is held.
// The content files fn discards are removed once it has committed.
func (s *Store) update(fn func(t *txn) error) error {
	var left leftovers
	var trim commitTrim
	defer s.trimIfGrown()
	defer trim.end()
	err := diskFull(s.db.Update(s.writeTxn(fn, &left, &trim)))
	if err == nil {
		s.commits.Add(1)
		s.clear(left)
	}
	return err
}

// WriteCommits is how many write transactions the store has committed
// since it opened. Each costs its fsyncs whatever it holds, so the count
// shows how well concurrent writes share their commits (groupcommit.go).
func (s *Store) WriteCommits() uint64 {
	return s.commits.Load() + s.group.committed.Load()
}

// RecordsWritten is how many records (puts and deletes of keys) the
// store's committed write transactions have written to the buckets of the
// tree, the trash, versions, shares, locks, uploads and usage since it
// opened (storetest.WriteCounter); the records of sign-ins (app
// passwords, login flows, attempts, the directory) are not counted.
func (s *Store) RecordsWritten() int64 { return s.written.Load() }

// updateGrouped runs fn like update, but in a transaction it may share with
// other concurrent updateGrouped calls (groupcommit.go), so that they are
// made durable together. fn may run more than once and must leave nothing
// behind outside the transaction but what its last run sets.
func (s *Store) updateGrouped(fn func(t *txn) error) error {
	var left leftovers
	var trim commitTrim
	defer s.trimIfGrown()
	defer trim.end()
	err := diskFull(s.group.update(s.writeTxn(fn, &left, &trim)))
	if err == nil {
		s.clear(left)
	}
	return err
}

// leftovers are what a committed transaction leaves to remove: the
// content files it no longer references and the previews of the contents
// it deleted.
type leftovers struct {
	garbage, dropped []string
	written          int64 // the records it wrote
	purges           []trashPurge
}

func (s *Store) clear(left leftovers) {
	s.written.Add(left.written)
	s.removeBlobs(left.garbage)
	s.previews.drop(left.dropped)
	s.purgeAll(left.purges)
}

// writeTxn turns fn into a bolt write function with the store's buckets,
// its own etag sequence number and the change time. The content files the
// last run of fn discarded and the contents it deleted are left in *left.
// Once fn has scanned much, trim trims the mapping until it ends, after the
// commit.
func (s *Store) writeTxn(fn func(t *txn) error, left *leftovers, trim *commitTrim) func(*bolt.Tx) error {
	return func(tx *bolt.Tx) error {
		*left = leftovers{}
		t := s.newTxn(tx)
		trim.store = s
		t.trim = trim
		seq, err := t.nodes().NextSequence()
		if err != nil {
			return err
		}
		t.seq = seq
		t.now = s.now()
		err = fn(t)
		*left = leftovers{t.garbage, t.dropped, t.written, t.purges}
		return err
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

// propagate records a change below parentID: every folder from parentID up
// to the space root gets a new etag, its modification time raised to the
// change time and its size changed by delta. In a space's trash it stops
// at the top node of the trash item (below the trash root, trash.go).
func (t *txn) propagate(parentID string, delta int64) error {
	for id := parentID; id != "" && !isTrashRoot(id); {
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
