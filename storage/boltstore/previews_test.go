package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/davspaces/davspaces/storage"
)

// The preview cache outlives a restart: its files are indexed again at
// Open, their modification times giving the order of use, and the
// temporary file of an interrupted write is removed.
func TestPreviewCacheReopened(t *testing.T) {
	dir := t.TempDir()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	s, err := Open(dir, Options{NoSync: true, Now: now, PreviewCacheSize: 2500})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	ctx := t.Context()
	data := bytes.Repeat([]byte("p"), 1000)
	key := func(digit string) storage.PreviewKey {
		return storage.PreviewKey{SHA1: strings.Repeat(digit, 40), Width: 36, Height: 36}
	}
	for _, d := range []string{"a", "b"} {
		if err := s.KeepPreview(ctx, key(d), data, "image/png"); err != nil {
			t.Fatalf("KeepPreview: %v", err)
		}
	}
	// a's file is older than b's, but a is read later: b is the least
	// recently used after the restart.
	old := clock.Add(-time.Hour)
	for _, d := range []string{"a", "b"} {
		if err := os.Chtimes(s.previews.path(key(d).Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.CachedPreview(ctx, key("a")); err != nil {
		t.Fatalf("CachedPreview: %v", err)
	}
	s.Close()
	torn := filepath.Join(dir, previewsDir, "aa", previewTempPrefix+"123")
	if err := os.WriteFile(torn, []byte("half a preview"), 0o600); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir, Options{NoSync: true, Now: now, PreviewCacheSize: 2500})
	if err != nil {
		t.Fatalf("Open again: %v", err)
	}
	defer s.Close()
	if _, err := os.Stat(torn); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the temporary file is still there: %v", err)
	}
	if err := s.KeepPreview(ctx, key("c"), data, "image/png"); err != nil {
		t.Fatalf("KeepPreview: %v", err)
	}
	for d, want := range map[string]bool{"a": true, "b": false, "c": true} {
		_, _, err := s.CachedPreview(ctx, key(d))
		if want && err != nil || !want && !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("CachedPreview %s after the restart: %v, want kept %v", d, err, want)
		}
	}
}

// Many contents dropped at once (a large folder purged) take their
// previews along by one pass over the index, few by their directories.
func TestPreviewCacheDropMany(t *testing.T) {
	for _, n := range []int{1, dropByDirectory + 1} {
		c, err := openPreviewCache(t.TempDir(), 0, time.Now, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		var sums []string
		for i := range n + 1 {
			sum := fmt.Sprintf("%040x", i+1)
			sums = append(sums, sum)
			for _, box := range []string{"-36x36-a0-u0", "-64x64-a1-u0"} {
				if err := c.put(sum+box, []byte("preview")); err != nil {
					t.Fatal(err)
				}
			}
		}
		c.drop(sums[:n])
		if len(c.byKey) != 2 || c.size != 2*int64(len("preview")) {
			t.Fatalf("dropping %d contents left %d previews of %d bytes, want the 2 of the last", n, len(c.byKey), c.size)
		}
		for name := range c.byKey {
			if !strings.HasPrefix(name, sums[n]) {
				t.Fatalf("dropping %d contents left %s", n, name)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(c.dir, "*", "*")); len(left) != 2 {
			t.Fatalf("dropping %d contents left the files %v", n, left)
		}
	}
}
