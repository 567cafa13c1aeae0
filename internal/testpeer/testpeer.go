// Package testpeer starts the real servers that the tests of the
// distributed store need, PostgreSQL and MinIO, on free loopback ports with
// data directories of their own. A test binary shares one server of each
// kind (started on first use) and gives every test a fresh database or
// bucket; a test that takes a server down (an outage) starts its own.
//
// A package using it runs its tests through Main, which stops the servers
// when the tests are done:
//
//	func TestMain(m *testing.M) { os.Exit(testpeer.Main(m)) }
//
// A missing server binary skips the test, or fails it under CI=true, so
// that CI cannot go green without the distributed store's tests.
package testpeer

import (
	"errors"
	"os"
	"sync"
	"testing"
)

// shared are the servers of this test binary, started on first use.
var shared struct {
	mu       sync.Mutex
	postgres *Postgres
	minio    *MinIO
}

// Main runs the tests of m and then stops the shared servers.
func Main(m *testing.M) int {
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.postgres != nil {
		shared.postgres.Close()
	}
	if shared.minio != nil {
		shared.minio.Close()
	}
	return code
}

// PostgreSQL returns the DSN of a fresh, empty database on the shared
// PostgreSQL server.
func PostgreSQL(t testing.TB) string {
	t.Helper()
	return sharedServer(t, &shared.postgres, StartPostgres).NewDatabase(t)
}

// S3Bucket returns a fresh, empty bucket on the shared MinIO server.
func S3Bucket(t testing.TB) S3 {
	t.Helper()
	return sharedServer(t, &shared.minio, StartMinIO).NewBucket(t)
}

// sharedServer returns the shared server in *slot, started with start on
// first use. A server that cannot be had ends t as Unavailable does.
func sharedServer[S any](t testing.TB, slot **S, start func() (*S, error)) *S {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock() // also when Unavailable ends t
	if *slot == nil {
		s, err := start()
		if err != nil {
			Unavailable(t, err)
		}
		*slot = s
	}
	return *slot
}

// errMissing marks a server binary that is not installed.
var errMissing = errors.New("not installed")

// Unavailable ends a test whose server could not be had (the error of
// StartPostgres or StartMinIO): a skip when the server is not installed,
// unless CI must run it; a failure otherwise.
func Unavailable(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errMissing) && os.Getenv("CI") != "true" {
		t.Skipf("%v (scripts/test installs it)", err)
	}
	t.Fatal(err)
}

// OwnPostgres starts a PostgreSQL server for t alone, for tests that stop
// and start it, and closes it when t ends. A server that cannot be had
// ends t as Unavailable does.
func OwnPostgres(t testing.TB) *Postgres {
	t.Helper()
	return ownServer(t, StartPostgres)
}

// OwnMinIO is OwnPostgres for MinIO.
func OwnMinIO(t testing.TB) *MinIO {
	t.Helper()
	return ownServer(t, StartMinIO)
}

// ownServer starts a server with start for t alone and closes it when t
// ends.
func ownServer[S interface{ Close() }](t testing.TB, start func() (S, error)) S {
	t.Helper()
	s, err := start()
	if err != nil {
		Unavailable(t, err)
	}
	t.Cleanup(s.Close)
	return s
}
