package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/davspaces/davspaces/storage"
)

var _ storage.AttemptBudgets = (*Store)(nil)

// The budgets of attempts (storage.AttemptBudgets) are kept in two
// buckets, made at the first attempt:
//
//	attempts        key → expiry, then the times of its attempts (8 bytes each, Unix ns)
//	attempt_expiry  expiry (8 bytes, big-endian Unix ns) + key → nothing
//
// and the number of keys under attempt_keys in the meta bucket. A key's
// expiry is when its last attempt leaves the window: from then on it
// counts nothing and may go. Every write removes a batch of the keys
// that expired, and the store keeps at most maxAttemptKeys keys: a new
// key beyond them first forgets the key that expires first, the one whose
// last attempt is the oldest. So the buckets stay bounded whatever the
// number of clients, at the price that, past the cap, a client that made
// its attempts long enough ago gets a fresh budget early.
var (
	bucketAttempts      = []byte("attempts")
	bucketAttemptExpiry = []byte("attempt_expiry")
	keyAttemptKeys      = []byte("attempt_keys")
)

const (
	// maxAttemptKeys bounds the keys kept, about 10,000 × (key + 10 ×
	// 8 bytes + 8 bytes): a megabyte or two.
	maxAttemptKeys = 10_000
	// attemptPruneBatch bounds the expired keys one write removes, so
	// that a write after a long quiet time stays short.
	attemptPruneBatch = 64
)

// AttemptWait is how long key has no attempt left (storage.AttemptBudgets).
func (s *Store) AttemptWait(ctx context.Context, key string, b storage.AttemptBudget, now time.Time) (time.Duration, error) {
	if err := validAttemptCall(ctx, key, b); err != nil {
		return 0, err
	}
	var wait time.Duration
	err := s.view(func(t *txn) error {
		times, _ := attemptsOf(t.tx.Bucket(bucketAttempts), key)
		wait = storage.AttemptWaitOf(storage.RecentAttempts(times, b, now), b, now)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("attempt wait: %w", err)
	}
	return wait, nil
}

// TakeAttempt takes one of key's attempts (storage.AttemptBudgets). A key
// with none left is answered from a read transaction: a burst of refused
// attempts costs no commit.
func (s *Store) TakeAttempt(ctx context.Context, key string, b storage.AttemptBudget, now time.Time) (bool, time.Duration, error) {
	wait, err := s.AttemptWait(ctx, key, b, now)
	if err != nil || wait > 0 {
		return false, wait, err
	}
	var taken bool
	err = s.updateGrouped(func(t *txn) error {
		ab, err := openAttemptBuckets(t.tx)
		if err != nil {
			return err
		}
		if err := ab.prune(now); err != nil {
			return err
		}
		old, expiry := attemptsOf(ab.attempts, key)
		if expiry == 0 {
			if err := ab.makeRoom(); err != nil {
				return err
			}
		}
		var kept []time.Time
		kept, taken, wait = storage.TakeAttemptFrom(old, b, now)
		if !taken {
			return nil
		}
		return ab.put(key, kept, max(expiry, now.Add(b.Window).UnixNano()), expiry)
	})
	if err != nil {
		return false, 0, fmt.Errorf("take attempt: %w", err)
	}
	return taken, wait, nil
}

// ReturnAttempt gives back the attempt of key taken at taken
// (storage.AttemptBudgets).
func (s *Store) ReturnAttempt(ctx context.Context, key string, taken time.Time) error {
	if err := validAttemptCall(ctx, key, storage.AttemptBudget{Limit: 1, Window: 1}); err != nil {
		return err
	}
	err := s.updateGrouped(func(t *txn) error {
		ab, err := openAttemptBuckets(t.tx)
		if err != nil {
			return err
		}
		old, expiry := attemptsOf(ab.attempts, key)
		kept := storage.ReturnAttemptFrom(old, taken)
		if len(kept) == len(old) {
			return nil
		}
		if len(kept) == 0 {
			return ab.remove(key, expiry)
		}
		return ab.put(key, kept, expiry, expiry)
	})
	if err != nil {
		return fmt.Errorf("return attempt: %w", err)
	}
	return nil
}

func validAttemptCall(ctx context.Context, key string, b storage.AttemptBudget) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return storage.ValidAttempt(key, b)
}

// attemptBuckets are the two buckets of the budgets in a write txn.
type attemptBuckets struct {
	attempts, expiry, meta *bolt.Bucket
}

func openAttemptBuckets(tx *bolt.Tx) (attemptBuckets, error) {
	attempts, err := tx.CreateBucketIfNotExists(bucketAttempts)
	if err != nil {
		return attemptBuckets{}, err
	}
	expiry, err := tx.CreateBucketIfNotExists(bucketAttemptExpiry)
	if err != nil {
		return attemptBuckets{}, err
	}
	return attemptBuckets{attempts: attempts, expiry: expiry, meta: tx.Bucket(bucketMeta)}, nil
}

// attemptsOf decodes key's record in bucket b (nil before the first
// attempt): its attempts and expiry, 0 when it has none.
func attemptsOf(b *bolt.Bucket, key string) ([]time.Time, int64) {
	if b == nil {
		return nil, 0
	}
	v := b.Get([]byte(key))
	if len(v) < 8 {
		return nil, 0
	}
	expiry := int64(binary.BigEndian.Uint64(v))
	times := make([]time.Time, 0, len(v)/8)
	for v = v[8:]; len(v) >= 8; v = v[8:] {
		times = append(times, time.Unix(0, int64(binary.BigEndian.Uint64(v))))
	}
	return times, expiry
}

// put records key's attempts with expiry, replacing its record of
// oldExpiry (0: none).
func (ab attemptBuckets) put(key string, times []time.Time, expiry, oldExpiry int64) error {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+8*len(times)), uint64(expiry))
	for _, t := range times {
		v = binary.BigEndian.AppendUint64(v, uint64(t.UnixNano()))
	}
	if err := ab.attempts.Put([]byte(key), v); err != nil {
		return err
	}
	if expiry == oldExpiry {
		return nil
	}
	if oldExpiry == 0 {
		if err := ab.count(+1); err != nil {
			return err
		}
	} else if err := ab.expiry.Delete(expiryKey(oldExpiry, key)); err != nil {
		return err
	}
	return ab.expiry.Put(expiryKey(expiry, key), nil)
}

// remove forgets key, whose record has expiry.
func (ab attemptBuckets) remove(key string, expiry int64) error {
	if err := ab.attempts.Delete([]byte(key)); err != nil {
		return err
	}
	if err := ab.count(-1); err != nil {
		return err
	}
	return ab.expiry.Delete(expiryKey(expiry, key))
}

// prune removes up to attemptPruneBatch keys that expired by now.
func (ab attemptBuckets) prune(now time.Time) error {
	c := ab.expiry.Cursor()
	for range attemptPruneBatch {
		k, _ := c.First()
		if k == nil || int64(binary.BigEndian.Uint64(k)) > now.UnixNano() {
			return nil
		}
		if err := ab.dropIndexed(c, k); err != nil {
			return err
		}
	}
	return nil
}

// makeRoom makes room for a new key: at the cap, the key that expires
// first goes.
func (ab attemptBuckets) makeRoom() error {
	if ab.keys() < maxAttemptKeys {
		return nil
	}
	c := ab.expiry.Cursor()
	k, _ := c.First()
	if k == nil {
		return nil
	}
	return ab.dropIndexed(c, k)
}

// dropIndexed removes the key of expiry index entry k, where c is.
func (ab attemptBuckets) dropIndexed(c *bolt.Cursor, k []byte) error {
	if err := ab.attempts.Delete(bytes.Clone(k[8:])); err != nil {
		return err
	}
	if err := ab.count(-1); err != nil {
		return err
	}
	return c.Delete()
}

// keys is how many keys are kept.
func (ab attemptBuckets) keys() int64 {
	v := ab.meta.Get(keyAttemptKeys)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// count adds delta to the number of keys kept.
func (ab attemptBuckets) count(delta int64) error {
	return ab.meta.Put(keyAttemptKeys, binary.BigEndian.AppendUint64(nil, uint64(max(ab.keys()+delta, 0))))
}

func expiryKey(expiry int64, key string) []byte {
	return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(key)), uint64(expiry)), key...)
}
