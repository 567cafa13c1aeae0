package pgstore

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// TestOpenMigratesOnceAndKeepsStorageID: a second node opening the same
// database finds the schema and the storage id the first one made, and a
// node configured with another id is refused.
func TestOpenMigratesOnceAndKeepsStorageID(t *testing.T) {
	a := openTestStore(t, Options{})
	b := openTestStore(t, Options{DSN: a.pool.Config().ConnString()})
	if a.StorageID() == "" || a.StorageID() != b.StorageID() {
		t.Fatalf("storage ids %q and %q", a.StorageID(), b.StorageID())
	}
	_, err := Open(t.Context(), Options{DSN: a.pool.Config().ConnString(), StorageID: "other"})
	if !errors.Is(err, storage.ErrInvalid) {
		t.Fatalf("Open with another storage id: %v", err)
	}
}

// TestOpenBeforeTheBackends: a store opened while its database or its
// bucket is down opens all the same, answers ErrUnavailable, and serves
// once the backend is up, without being opened again.
func TestOpenBeforeTheBackends(t *testing.T) {
	t.Run("database", func(t *testing.T) {
		testpeer.PostgreSQL(t) // skips or fails as the shared servers do when PostgreSQL is missing
		pg := testpeer.OwnPostgres(t)
		dsn := pg.NewDatabase(t)
		pg.Stop()
		s := openTestStore(t, Options{DSN: dsn, StorageID: "kept"})
		wantUnreached(t, s)
		if err := pg.Start(); err != nil {
			t.Fatal(err)
		}
		awaitReached(t, s)
	})
	t.Run("bucket", func(t *testing.T) {
		testpeer.S3Bucket(t) // skips or fails as the shared servers do when MinIO is missing
		m := testpeer.OwnMinIO(t)
		b := m.NewBucket(t)
		m.Stop()
		s := openTestStore(t, Options{StorageID: "kept", S3: s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey}})
		wantUnreached(t, s)
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		awaitReached(t, s)
	})
}

// wantUnreached checks that s answers ErrUnavailable and names its
// configured storage id.
func wantUnreached(t *testing.T, s *Store) {
	t.Helper()
	if got := s.StorageID(); got != "kept" {
		t.Errorf("storage id %q before the backends are reached", got)
	}
	ctx := t.Context()
	checks := map[string]error{}
	_, checks["PersonalSpace"] = s.PersonalSpace(ctx, storage.User{ID: "einstein"})
	_, checks["Space"] = s.Space(ctx, "any")
	_, checks["Node"] = s.Node(ctx, "any", "any")
	_, checks["Child"] = s.Child(ctx, "any", "any", "name")
	_, _, checks["Open"] = s.Open(ctx, "any", "any")
	_, checks["NewUpload"] = s.NewUpload(ctx, "any")
	_, checks["Mkdir"] = s.Mkdir(ctx, "any", "any", "dir")
	for name, err := range checks {
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("%s before the backends are reached: %v", name, err)
		}
	}
}

// awaitReached waits for s to reach its backends, then writes and reads a
// file through it.
func awaitReached(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(20 * time.Second)
	var sp storage.Space
	for {
		var err error
		if sp, err = s.PersonalSpace(ctx, storage.User{ID: "einstein"}); err == nil {
			break
		}
		if !errors.Is(err, storage.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("PersonalSpace once the backend is up: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	file := put(t, s, sp.ID, sp.ID, "file", "content")
	_, c, err := s.Open(ctx, sp.ID, file.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := io.ReadAll(c); err != nil || string(got) != "content" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if got := s.StorageID(); got != "kept" {
		t.Errorf("storage id %q once reached", got)
	}
}

// TestMaxConns: the pool is MaxConns connections, or the DSN's
// pool_max_conns, or DefaultMaxConns; never pgxpool's max(4, cores).
func TestMaxConns(t *testing.T) {
	dsn := testpeer.PostgreSQL(t)
	for _, tt := range []struct {
		name string
		opts Options
		want int32
	}{
		{"default", Options{DSN: dsn}, DefaultMaxConns},
		{"setting", Options{DSN: dsn, MaxConns: 3}, 3},
		{"dsn", Options{DSN: dsn + "&pool_max_conns=5"}, 5},
		{"setting over dsn", Options{DSN: dsn + "&pool_max_conns=5", MaxConns: 7}, 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := openTestStore(t, tt.opts)
			if got := s.pool.Config().MaxConns; got != tt.want {
				t.Fatalf("pool of %d connections, want %d", got, tt.want)
			}
		})
	}
}
