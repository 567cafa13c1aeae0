package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage/s3content"
)

// healthWait bounds a health question in these tests.
const healthWait = 2 * time.Second

func healthWithin(t *testing.T, s *Store) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), healthWait)
	defer cancel()
	return s.Health(ctx)
}

// TestHealth: a store whose pool is taken, or whose bucket is down, says
// so within the caller's bound; once they are back it is healthy again.
func TestHealth(t *testing.T) {
	testpeer.S3Bucket(t) // skips or fails as the shared servers do when MinIO is missing
	m := testpeer.OwnMinIO(t)
	b := m.NewBucket(t)
	s := openTestStore(t, Options{MaxConns: 1, S3: s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey}})
	if err := healthWithin(t, s); err != nil {
		t.Fatalf("Health of a store whose backends answer: %v", err)
	}

	held, err := s.pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := healthWithin(t, s); err == nil {
		t.Fatal("Health while no connection can be had: nil, want an error")
	}
	held.Release()

	m.Stop()
	if err := healthWithin(t, s); err == nil {
		t.Fatal("Health while the bucket is down: nil, want an error")
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for healthWithin(t, s) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("Health once the bucket is back: %v", healthWithin(t, s))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
