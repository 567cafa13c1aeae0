package boltstore

import (
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sync/errgroup"

	"github.com/davspaces/davspaces/storage"
)

// attemptKeys counts the keys of the budgets and of their expiry index.
func attemptKeys(t *testing.T, s *Store) (keys, indexed int) {
	t.Helper()
	err := s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketAttempts); b != nil {
			keys = b.Stats().KeyN
		}
		if b := tx.Bucket(bucketAttemptExpiry); b != nil {
			indexed = b.Stats().KeyN
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, indexed
}

// TestAttemptKeysBounded makes attempts under more keys than the store
// keeps: the keys whose last attempt is oldest are forgotten, the newest
// still count, and the keys whose attempts left their window go.
func TestAttemptKeysBounded(t *testing.T) {
	s, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	b := storage.AttemptBudget{Limit: 1, Window: time.Hour}
	start := time.Now()
	key := func(i int) string { return fmt.Sprintf("link l 10.%d.%d.%d", i>>16, i>>8&255, i&255) }
	take := func(i int) error {
		if taken, _, err := s.TakeAttempt(ctx, key(i), b, start.Add(time.Duration(i)*time.Millisecond)); err != nil || !taken {
			return fmt.Errorf("attempt of key %d: taken %v, %v", i, taken, err)
		}
		return nil
	}
	// Up to the cap no key goes, whatever the order: concurrent takers
	// share their commits (groupcommit.go), one commit a key took most of
	// the test's time.
	var fill errgroup.Group
	const takers = 16
	for w := range takers {
		fill.Go(func() error {
			for i := w; i < maxAttemptKeys; i += takers {
				if err := take(i); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := fill.Wait(); err != nil {
		t.Fatal(err)
	}
	const over = 10
	for i := maxAttemptKeys; i < maxAttemptKeys+over; i++ {
		if err := take(i); err != nil {
			t.Fatal(err)
		}
	}
	if keys, indexed := attemptKeys(t, s); keys != maxAttemptKeys || indexed != maxAttemptKeys {
		t.Fatalf("%d keys, %d indexed; want the cap %d", keys, indexed, maxAttemptKeys)
	}
	now := start.Add(time.Minute)
	for i, wantWait := range map[int]bool{0: false, over - 1: false, over: true, maxAttemptKeys + over - 1: true} {
		wait, err := s.AttemptWait(ctx, key(i), b, now)
		if err != nil || (wait > 0) != wantWait {
			t.Errorf("key %d: wait %s, %v; want blocked %v", i, wait, err, wantWait)
		}
	}
	// Once their window has passed, each write removes a batch of them.
	later := start.Add(2 * time.Hour)
	for i := range maxAttemptKeys/attemptPruneBatch + 1 {
		if taken, _, err := s.TakeAttempt(ctx, fmt.Sprintf("later %d", i), b, later); err != nil || !taken {
			t.Fatalf("a later attempt: taken %v, %v", taken, err)
		}
	}
	if keys, indexed := attemptKeys(t, s); keys != maxAttemptKeys/attemptPruneBatch+1 || indexed != keys {
		t.Fatalf("after the window: %d keys, %d indexed; want only the %d later ones", keys, indexed, maxAttemptKeys/attemptPruneBatch+1)
	}
}

// TestAttemptReturnedLastForgetsKey gives back a key's only attempt: the
// key is no longer kept.
func TestAttemptReturnedLastForgetsKey(t *testing.T) {
	s, err := Open(t.TempDir(), Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	now := time.Now()
	if _, _, err := s.TakeAttempt(ctx, "k", storage.AttemptBudget{Limit: 1, Window: time.Minute}, now); err != nil {
		t.Fatal(err)
	}
	if err := s.ReturnAttempt(ctx, "k", now); err != nil {
		t.Fatal(err)
	}
	if keys, indexed := attemptKeys(t, s); keys != 0 || indexed != 0 {
		t.Fatalf("%d keys, %d indexed after the only attempt was given back", keys, indexed)
	}
}
