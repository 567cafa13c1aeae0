package pgstore

import (
	"os"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage/s3content"
	"github.com/davspaces/davspaces/storage/storetest"
)

func TestMain(m *testing.M) { os.Exit(testpeer.Main(m)) }

// openTestStore opens a store on a fresh database and bucket of the test
// servers, closed when the test ends.
func openTestStore(t testing.TB, opts Options) *Store {
	t.Helper()
	if opts.inlineLimit == 0 {
		// The tests follow the objects of their small files.
		opts.inlineLimit = -1
	}
	if opts.DSN == "" {
		opts.DSN = testpeer.PostgreSQL(t)
	}
	if opts.S3.Endpoint == "" {
		b := testpeer.S3Bucket(t)
		opts.S3 = s3content.Config{Endpoint: b.Endpoint, Bucket: b.Bucket, AccessKey: b.AccessKey, SecretKey: b.SecretKey}
	}
	s, err := Open(t.Context(), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the table every store passes, on a clock the
// tests can move on (storetest.Clock), so that expiry needs no waiting.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		clk := &testClock{}
		return clockedStore{openTestStore(t, Options{Now: clk.Now, CountWrites: true, inlineLimit: inlineLimit}), clk}
	})
}

// clockedStore is a Store whose clock the conformance tests can move on.
type clockedStore struct {
	*Store
	clk *testClock
}

func (s clockedStore) Advance(d time.Duration) { s.clk.Advance(d) }

// SetMaxSharesPerCreator lowers the store's cap on a user's shares
// (storetest.ShareCapper), n <= 0 restoring the default.
func (s clockedStore) SetMaxSharesPerCreator(n int) { s.shareCap.Store(int64(max(n, 0))) }

// SetMaxChunksPerUpload lowers the store's cap on an upload's parts
// (storetest.ChunkCapper), n <= 0 restoring the default.
func (s clockedStore) SetMaxChunksPerUpload(n int) { s.chunkCap.Store(int64(max(n, 0))) }
