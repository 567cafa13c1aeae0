package boltstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
