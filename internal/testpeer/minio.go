package testpeer

import (
	"context"
	"fmt"
	"go/build"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 names a bucket on an S3-compatible server and the keys to reach it.
type S3 struct {
	Endpoint  string // host:port, plain HTTP
	AccessKey string
	SecretKey string
	Bucket    string
}

// MinIO is a MinIO server of the tests on 127.0.0.1.
type MinIO struct {
	server
	console io.Closer // the claim of the console's port, while it runs
	buckets atomic.Int64
}

// The root credentials of the test server.
const (
	minioUser     = "davspaces"
	minioPassword = "davspaces-test-secret"
)

// StartMinIO starts a MinIO server on a temporary directory. The caller
// closes it.
func StartMinIO() (*MinIO, error) {
	bin, err := minioBin()
	if err != nil {
		return nil, err
	}
	srv, err := newServer("MinIO", bin)
	if err != nil {
		return nil, err
	}
	m := &MinIO{server: srv}
	if err := m.Start(); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// minioBin finds the minio server: on the PATH or where go install puts it
// (scripts/test installs the pinned version there).
func minioBin() (string, error) {
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	gobin := os.Getenv("GOBIN")
	if gobin == "" {
		gobin = filepath.Join(filepath.SplitList(build.Default.GOPATH)[0], "bin")
	}
	p := filepath.Join(gobin, "minio")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("MinIO server (minio): %w", errMissing)
	}
	return p, nil
}

// Start starts the server (again, after Stop) and waits until it answers.
func (m *MinIO) Start() error {
	console, claim, err := claimFreePort()
	if err != nil {
		return err
	}
	m.console = claim
	cmd := exec.Command(m.bin, "server", "--quiet", "--address", m.Endpoint(),
		"--console-address", hostPort(console), filepath.Join(m.dir, "data"))
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+minioUser, "MINIO_ROOT_PASSWORD="+minioPassword,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	p, err := startProcess(cmd, filepath.Join(m.dir, "minio.log"))
	if err != nil {
		return fmt.Errorf("starting MinIO: %w", err)
	}
	m.cmd = p
	return p.waitReady(func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.Endpoint()+"/minio/health/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("health: %s", resp.Status)
		}
		return nil
	})
}

// Stop stops the server, as an outage would.
func (m *MinIO) Stop() {
	m.stopProcess()
	if m.console != nil {
		m.console.Close()
		m.console = nil
	}
}

// Close stops the server and removes its data.
func (m *MinIO) Close() {
	m.Stop()
	m.release()
}

// Endpoint is the server's host:port.
func (m *MinIO) Endpoint() string { return hostPort(m.port) }

// NewBucket creates an empty bucket.
func (m *MinIO) NewBucket(t testing.TB) S3 {
	t.Helper()
	s := S3{Endpoint: m.Endpoint(), AccessKey: minioUser, SecretKey: minioPassword,
		Bucket: fmt.Sprintf("test-%d", m.buckets.Add(1))}
	client, err := minio.New(s.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, "")})
	if err != nil {
		t.Fatalf("MinIO client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := client.MakeBucket(ctx, s.Bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("creating bucket %s: %v", s.Bucket, err)
	}
	return s
}
