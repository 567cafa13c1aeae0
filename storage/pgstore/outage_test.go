package pgstore

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// An unreachable bucket makes uploads and reads fail with ErrUnavailable
// and leaves the tree as it was; the metadata keeps working.
func TestBucketOutage(t *testing.T) {
	testpeer.S3Bucket(t) // skips or fails as the shared servers do when MinIO is missing
	m := testpeer.OwnMinIO(t)
	b := m.NewBucket(t)
	s := openTestStore(t, Options{S3: s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey}})
	sp := personal(t, s)
	ctx := t.Context()
	kept := put(t, s, sp.ID, sp.ID, "kept", "kept content")
	_, open, err := s.Open(ctx, sp.ID, kept.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	root, _ := s.Node(ctx, sp.ID, sp.ID)

	m.Stop()
	for _, size := range []int{10, 3 * memLimit} {
		u, err := s.NewUpload(ctx, sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(u, io.LimitReader(zeros{}, int64(size)))
		if err == nil {
			_, _, err = u.Commit(ctx, storage.Commit{ParentID: sp.ID, Name: "new"})
		}
		u.Discard()
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("upload of %d bytes during the outage: %v", size, err)
		}
	}
	// Prefetching fetches the first bytes, so a GET answers 503 rather
	// than a 200 whose body breaks off.
	_, during, err := s.Open(ctx, sp.ID, kept.ID)
	if err != nil {
		t.Fatalf("Open during the outage: %v", err)
	}
	defer during.Close()
	if err := during.(storage.Prefetcher).Prefetch(); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Prefetch during the outage: %v", err)
	}
	if _, err := s.Child(ctx, sp.ID, sp.ID, "new"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a failed upload left a file: %v", err)
	}
	if got, _ := s.Node(ctx, sp.ID, sp.ID); got.Size != root.Size || got.ETag != root.ETag {
		t.Fatalf("root changed: %+v, was %+v", got, root)
	}
	if _, err := s.Mkdir(ctx, sp.ID, sp.ID, "dir"); err != nil {
		t.Fatalf("Mkdir during the outage: %v", err)
	}

	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(open); err != nil || string(got) != "kept content" {
		t.Fatalf("read after the outage = %q, %v", got, err)
	}
}

// An unreachable database makes every method fail with ErrUnavailable.
func TestDatabaseOutage(t *testing.T) {
	testpeer.PostgreSQL(t) // skips or fails as the shared servers do when PostgreSQL is missing
	pg := testpeer.OwnPostgres(t)
	s := openTestStore(t, Options{DSN: pg.NewDatabase(t)})
	sp := personal(t, s)
	ctx := t.Context()
	file := put(t, s, sp.ID, sp.ID, "file", "content")
	u, err := s.NewUpload(ctx, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Discard()
	u.Write(bytes.Repeat([]byte("x"), 100))

	pg.Stop()
	checks := map[string]error{}
	_, checks["Node"] = s.Node(ctx, sp.ID, file.ID)
	_, checks["Space"] = s.Space(ctx, sp.ID)
	_, checks["ReadDirProps"] = s.ReadDirProps(ctx, sp.ID, sp.ID, "einstein", "", 0)
	_, checks["Mkdir"] = s.Mkdir(ctx, sp.ID, sp.ID, "dir")
	_, _, checks["Open"] = s.Open(ctx, sp.ID, file.ID)
	_, _, checks["Commit"] = u.Commit(ctx, storage.Commit{ParentID: sp.ID, Name: "new"})
	for name, err := range checks {
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Errorf("%s during the outage: %v", name, err)
		}
	}
}

// zeros reads as endless zero bytes, and is no WriterTo.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
