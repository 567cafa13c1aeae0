package davhandler

import (
	"context"
	"errors"
	"io"

	"github.com/davspaces/davspaces/storage"
)

// failingStore is a real store with hooks for the failures and races a test
// cannot provoke through the real one (a full disk, a concurrent change at
// an exact moment).
type failingStore struct {
	storage.Store
	// beforeUpload runs when a PUT starts receiving its body.
	beforeUpload func()
	// uploadWriteErr, if set, fails every write of an upload.
	uploadWriteErr error
	// readDirErr, if set, fails every ReadDir and ReadDirProps.
	readDirErr error
	// afterNode runs after each Node.
	afterNode func()
	// prefetches, if not nil, makes the content of Open a Prefetcher that
	// records the offset of each prefetch and fails with prefetchErr.
	prefetches  *[]int64
	prefetchErr error
	// calls counts the calls of the listing methods by name.
	calls map[string]int
}

func (s *failingStore) count(method string) {
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[method]++
}

func (s *failingStore) Node(ctx context.Context, spaceID, nodeID string) (storage.Node, error) {
	n, err := s.Store.Node(ctx, spaceID, nodeID)
	if s.afterNode != nil {
		s.afterNode()
	}
	return n, err
}

func (s *failingStore) Props(ctx context.Context, spaceID, nodeID, user string) ([]storage.Property, error) {
	s.count("Props")
	return s.Store.Props(ctx, spaceID, nodeID, user)
}

func (s *failingStore) NewUpload(ctx context.Context, spaceID string) (storage.Upload, error) {
	if s.beforeUpload != nil {
		s.beforeUpload()
	}
	up, err := s.Store.NewUpload(ctx, spaceID)
	if err != nil || s.uploadWriteErr == nil {
		return up, err
	}
	return &failingUpload{Upload: up, err: s.uploadWriteErr}, nil
}

func (s *failingStore) ReadDir(ctx context.Context, spaceID, folderID, after string, limit int) ([]storage.Node, error) {
	s.count("ReadDir")
	if s.readDirErr != nil {
		return nil, s.readDirErr
	}
	return s.Store.ReadDir(ctx, spaceID, folderID, after, limit)
}

func (s *failingStore) ReadDirProps(ctx context.Context, spaceID, folderID, user, after string, limit int) ([]storage.Entry, error) {
	s.count("ReadDirProps")
	if s.readDirErr != nil {
		return nil, s.readDirErr
	}
	return s.Store.ReadDirProps(ctx, spaceID, folderID, user, after, limit)
}

func (s *failingStore) Open(ctx context.Context, spaceID, nodeID string) (storage.Node, storage.Content, error) {
	n, c, err := s.Store.Open(ctx, spaceID, nodeID)
	if err != nil || s.prefetches == nil {
		return n, c, err
	}
	return n, &prefetchingContent{Content: c, s: s}, nil
}

// prefetchingContent is content read from elsewhere, as an object store's.
type prefetchingContent struct {
	storage.Content
	s *failingStore
}

func (c *prefetchingContent) Prefetch() error {
	at, err := c.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	*c.s.prefetches = append(*c.s.prefetches, at)
	return c.s.prefetchErr
}

// failingUpload is an upload whose writes fail.
type failingUpload struct {
	storage.Upload
	err error
}

func (u *failingUpload) Write([]byte) (int, error) { return 0, u.err }

// errDiskOnFire is a store failure that is nobody's fault but the server's.
var errDiskOnFire = errors.New("disk on fire")

// withFailingStore wraps the env's store; the returned store's hooks can be
// set before requests are sent.
func withFailingStore(fs *failingStore) func(*Config) {
	return func(c *Config) {
		fs.Store = c.Store
		c.Store = fs
	}
}
