package pgstore

import (
	"io"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/s3content"
)

// openNodes opens n stores on one fresh database and bucket, as n Caddy
// nodes of a cluster would.
func openNodes(t testing.TB, n int) []*Store {
	t.Helper()
	b := testpeer.S3Bucket(t)
	opts := Options{
		DSN: testpeer.PostgreSQL(t),
		S3:  s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey},
	}
	stores := make([]*Store, n)
	for i := range stores {
		stores[i] = openTestStore(t, opts)
	}
	return stores
}

// personal returns the personal space of a test user.
func personal(t testing.TB, s *Store) storage.Space {
	t.Helper()
	sp, err := s.PersonalSpace(t.Context(), storage.User{ID: "einstein"})
	if err != nil {
		t.Fatalf("PersonalSpace: %v", err)
	}
	return sp
}

// put commits content as the file name in folder parent.
func put(t testing.TB, s *Store, spaceID, parent, name, content string) storage.Node {
	t.Helper()
	n, err := tryPut(t, s, spaceID, parent, name, content)
	if err != nil {
		t.Fatalf("put %q: %v", name, err)
	}
	return n
}

func tryPut(t testing.TB, s *Store, spaceID, parent, name, content string) (storage.Node, error) {
	u, err := s.NewUpload(t.Context(), spaceID)
	if err != nil {
		return storage.Node{}, err
	}
	defer u.Discard()
	if _, err := io.Copy(u, strings.NewReader(content)); err != nil {
		return storage.Node{}, err
	}
	n, _, err := u.Commit(t.Context(), storage.Commit{ParentID: parent, Name: name})
	return n, err
}

// contentOf returns the segments the node's row names.
func contentOf(t testing.TB, s *Store, nodeID string) []s3content.Segment {
	t.Helper()
	var segs []s3content.Segment
	if err := s.pool.QueryRow(t.Context(), `SELECT content FROM nodes WHERE id = $1`, nodeID).Scan(&segs); err != nil {
		t.Fatalf("content of %s: %v", nodeID, err)
	}
	return segs
}

// swept reports whether key is on the sweep's list.
func swept(t testing.TB, s *Store, key string) bool {
	t.Helper()
	var on bool
	if err := s.pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM object_sweep WHERE key = $1)`, key).Scan(&on); err != nil {
		t.Fatalf("object_sweep: %v", err)
	}
	return on
}
