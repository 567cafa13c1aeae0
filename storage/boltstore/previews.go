package boltstore

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// The preview cache (storage.PreviewCache) keeps previews as files under
// the data directory, not in the database, which stays small:
//
//	previews/<sha1[:2]>/<key.Name()>   the content type, a newline, the preview
//
// A preview is written to a temporary file and renamed into place, so a
// reader never sees a torn one; it is not fsynced, since a cache may lose
// what a crash interrupts. The files' modification time is their last
// use, and an index in memory, rebuilt from the directory at Open, keeps
// them in the order of use for the least-recently-used eviction under the
// cap.

var _ storage.PreviewCache = (*Store)(nil)

const (
	previewsDir       = "previews"
	previewTempPrefix = ".tmp-"
)

// previewCache is the index of the cached previews and their total size.
type previewCache struct {
	dir string
	now func() time.Time
	log *zap.Logger

	mu    sync.Mutex
	limit int64                    // bytes; 0: no cache
	used  *list.List               // of *previewEntry, the most recently used first
	byKey map[string]*list.Element // name → element of used
	size  int64                    // the bytes of every file in used
}

// previewEntry is one cached preview.
type previewEntry struct {
	name string
	size int64
}

// openPreviewCache indexes the previews under dir, oldest use last, and
// removes the temporary files an interrupted write left; limit is the cap
// in storage.PreviewCacheSize's terms.
func openPreviewCache(dir string, limit int64, now func() time.Time, log *zap.Logger) (*previewCache, error) {
	c := newPreviewCache(dir, now, log)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open preview cache: %w", err)
	}
	type found struct {
		previewEntry
		mtime time.Time
	}
	var all []found
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), previewTempPrefix) {
			return os.Remove(path)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		all = append(all, found{previewEntry{d.Name(), info.Size()}, info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open preview cache: %w", err)
	}
	slices.SortFunc(all, func(a, b found) int { return a.mtime.Compare(b.mtime) })
	for _, f := range all {
		c.byKey[f.name] = c.used.PushFront(&previewEntry{f.name, f.size})
		c.size += f.size
	}
	// The cap holds from the first keep on, not here: the configuration
	// may raise it (SetPreviewCacheSize) before anything is kept.
	c.limit = storage.PreviewCacheSize(limit)
	return c, nil
}

// newPreviewCache returns an empty cache of no size: it keeps nothing.
func newPreviewCache(dir string, now func() time.Time, log *zap.Logger) *previewCache {
	return &previewCache{dir: dir, now: now, log: log, used: list.New(), byKey: map[string]*list.Element{}}
}

// path is where the preview called name is kept.
func (c *previewCache) path(name string) string {
	return filepath.Join(c.dir, name[:2], name)
}

// setLimit sets the cap and evicts down to it.
func (c *previewCache) setLimit(configured int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limit = storage.PreviewCacheSize(configured)
	c.evictLocked()
}

// evictLocked removes the least recently used previews until the rest
// fits under the cap.
func (c *previewCache) evictLocked() {
	for c.size > c.limit {
		c.removeLocked(c.used.Back())
	}
}

// removeLocked forgets e and removes its file.
func (c *previewCache) removeLocked(e *list.Element) {
	p := c.used.Remove(e).(*previewEntry)
	delete(c.byKey, p.name)
	c.size -= p.size
	if err := os.Remove(c.path(p.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.log.Warn("removing a cached preview", zap.String("name", p.name), zap.Error(err))
	}
}

// get returns the file kept under name, marking it used, or ErrNotFound.
func (c *previewCache) get(name string) ([]byte, error) {
	c.mu.Lock()
	e, ok := c.byKey[name]
	if ok {
		c.used.MoveToFront(e)
	}
	c.mu.Unlock()
	if !ok {
		return nil, storage.ErrNotFound
	}
	path := c.path(name)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Evicted or dropped since the index was read.
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading cached preview %s: %w", name, err)
	}
	// The last use outlives a restart; a failure only ages the preview.
	now := c.now()
	_ = os.Chtimes(path, now, now)
	return b, nil
}

// put keeps b under name, evicting what the cap has no more room for. A
// file larger than the cap is not kept, nor anything without a cache.
func (c *previewCache) put(name string, b []byte) error {
	size := int64(len(b))
	c.mu.Lock()
	tooLarge := c.limit <= 0 || size > c.limit
	c.mu.Unlock()
	if tooLarge {
		return nil
	}
	dir := filepath.Dir(c.path(name))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("keeping preview %s: %w", name, err)
	}
	tmp, err := writeTemp(dir, b)
	if err != nil {
		return fmt.Errorf("keeping preview %s: %w", name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := os.Rename(tmp, c.path(name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("keeping preview %s: %w", name, err)
	}
	if e, ok := c.byKey[name]; ok {
		p := e.Value.(*previewEntry)
		c.size += size - p.size
		p.size = size
		c.used.MoveToFront(e)
	} else {
		c.byKey[name] = c.used.PushFront(&previewEntry{name, size})
		c.size += size
	}
	c.evictLocked()
	return nil
}

// writeTemp writes b to a new temporary file in dir and returns its path.
func writeTemp(dir string, b []byte) (string, error) {
	f, err := os.CreateTemp(dir, previewTempPrefix+"*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// drop removes the previews of the contents of the checksums sha1s: by
// reading their directories when they are few, by one pass over the
// index when they are many (a large folder purged).
func (c *previewCache) drop(sha1s []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byKey) == 0 || len(sha1s) == 0 {
		return
	}
	if len(sha1s) > dropByDirectory {
		c.dropByIndexLocked(sha1s)
		return
	}
	for _, sum := range sha1s {
		if len(sum) < 2 || strings.ContainsAny(sum, `/\.`) {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(c.dir, sum[:2]))
		if err != nil {
			continue // no preview in that directory
		}
		for _, d := range entries {
			if e, ok := c.byKey[d.Name()]; ok && strings.HasPrefix(d.Name(), sum+"-") {
				c.removeLocked(e)
			}
		}
	}
}

// dropByDirectory is how many contents drop reads the directories of.
const dropByDirectory = 16

func (c *previewCache) dropByIndexLocked(sha1s []string) {
	gone := make(map[string]bool, len(sha1s))
	for _, sum := range sha1s {
		gone[sum] = true
	}
	for name, e := range c.byKey {
		if sum, _, ok := strings.Cut(name, "-"); ok && gone[sum] {
			c.removeLocked(e)
		}
	}
}

// CachedPreview returns the preview kept under key (storage.PreviewCache).
func (s *Store) CachedPreview(_ context.Context, key storage.PreviewKey) ([]byte, string, error) {
	if !key.Valid() {
		return nil, "", fmt.Errorf("cached preview: invalid key: %w", storage.ErrInvalid)
	}
	b, err := s.previews.get(key.Name())
	if err != nil {
		return nil, "", err
	}
	contentType, data, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return nil, "", fmt.Errorf("cached preview %s: no content type: %w", key.Name(), errCorrupt)
	}
	return data, string(contentType), nil
}

// KeepPreview keeps data, a preview of contentType, under key
// (storage.PreviewCache).
func (s *Store) KeepPreview(_ context.Context, key storage.PreviewKey, data []byte, contentType string) error {
	if !key.Valid() || contentType == "" || strings.ContainsAny(contentType, "\r\n") {
		return fmt.Errorf("keep preview: invalid key or content type: %w", storage.ErrInvalid)
	}
	b := make([]byte, 0, len(contentType)+1+len(data))
	b = append(append(append(b, contentType...), '\n'), data...)
	return s.previews.put(key.Name(), b)
}

// SetPreviewCacheSize sets the cap of the preview cache in bytes, in
// storage.PreviewCacheSize's terms (0: the default, negative: none), and
// evicts down to it.
func (s *Store) SetPreviewCacheSize(bytes int64) { s.previews.setLimit(bytes) }
