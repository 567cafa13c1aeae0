package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	bolt "go.etcd.io/bbolt"
	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// sweepSessions removes expired upload sessions and chunked uploads, and
// the trash items and versions the retention no longer keeps, in the
// background, a bounded batch of each every sessionSweep, until the store
// closes. Expired sessions are never returned meanwhile; this only frees
// their space.
func (s *Store) sweepSessions() {
	defer close(s.sessionSweepDone)
	storage.SweepEvery(s.closing, s.sessionSweep, func() { s.Report(s.sweepExpired()) })
}

// sweepExpired makes one pass of the sessions' sweep and says what it
// removed.
func (s *Store) sweepExpired() storage.SweepReport {
	var r storage.SweepReport
	steps := []struct {
		what    string
		run     func() (int, error)
		removed *int
	}{
		{"expired upload sessions", func() (int, error) { return s.purgeSessions(sessionPurgeBatch) }, &r.UploadSessions},
		{"expired chunked uploads", func() (int, error) { return s.purgeChunkedUploads(sessionPurgeBatch) }, &r.ChunkedUploads},
		{"expired trash items and versions", func() (int, error) { return s.ExpireUndo(context.Background()) }, &r.Undo},
	}
	for _, step := range steps {
		n, err := step.run()
		*step.removed = n
		if err != nil {
			r.Failed = true
			s.log.Error("cleanup of "+step.what+" failed", zap.Error(err))
		}
		if n > 0 {
			s.log.Info("removed "+step.what, zap.Int("count", n))
		}
	}
	return r
}

// sweep removes content files no node references (left by a crash between
// putting a blob in place and committing its metadata, or between
// committing a replacement and deleting the old blob). It runs in the
// background, one blob directory at a time.
func (s *Store) sweep() {
	defer close(s.sweepDone)
	removed := 0
	for i := 0; i < 256; i++ {
		select {
		case <-s.closing:
			return
		default:
		}
		n, err := s.sweepDir(filepath.Join(s.blobDir, fmt.Sprintf("%02x", i)))
		removed += n
		if err != nil {
			s.log.Error("orphan content cleanup failed", zap.Error(err))
			s.Report(storage.SweepReport{Content: removed, Failed: true})
			return
		}
	}
	if removed > 0 {
		s.log.Info("removed unreferenced content files", zap.Int("count", removed))
	}
	s.Report(storage.SweepReport{Content: removed})
}

func (s *Store) sweepDir(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	// Pending files are looked up before the references: a file no longer
	// pending by then had its transaction committed before the snapshot
	// below starts, so the snapshot sees its reference.
	candidates := s.pending.without(entries)
	var orphans []string
	err = s.db.View(func(tx *bolt.Tx) error {
		blobs := tx.Bucket(bucketBlobs)
		for _, name := range candidates {
			if blobs.Get([]byte(name)) == nil {
				orphans = append(orphans, name)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, name := range orphans {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return 0, err
		}
	}
	return len(orphans), nil
}

// pendingBlobs is the set of content files written but not yet referenced
// by committed metadata.
type pendingBlobs struct {
	mu  sync.Mutex
	ids map[string]struct{} // content file ids are never reused
}

// add marks blob as pending; call it before the file is created.
func (p *pendingBlobs) add(blob string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids[blob] = struct{}{}
}

// done unmarks blobs; call it once their transaction has committed or the
// files are removed.
func (p *pendingBlobs) done(blobs ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range blobs {
		delete(p.ids, b)
	}
}

// without returns the names of the entries that are not pending.
func (p *pendingBlobs) without(entries []fs.DirEntry) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if _, ok := p.ids[e.Name()]; !ok {
			names = append(names, e.Name())
		}
	}
	return names
}
