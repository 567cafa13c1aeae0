package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// previewTests are the conformance tests of storage.PreviewCache, which
// every store keeps.
var previewTests = []conformanceTest{
	{"PreviewCacheRoundTrip", testPreviewCacheRoundTrip},
	{"PreviewCacheRefusesInvalidKeys", testPreviewCacheInvalidKeys},
	{"PreviewCacheEvictsLeastRecentlyUsed", testPreviewCacheEviction},
	{"PreviewCacheOff", testPreviewCacheOff},
	{"PreviewsDroppedWithTrashedContent", testPreviewsDroppedWithTrash},
	{"PreviewsDroppedWithReplacedContent", testPreviewsDroppedWithReplacedContent},
	{"PreviewCacheConcurrent", testPreviewCacheConcurrent},
}

// PreviewCacheSizer is implemented by stores whose preview cache's cap a
// test may set, in storage.PreviewCacheSize's terms.
type PreviewCacheSizer interface {
	SetPreviewCacheSize(bytes int64)
}

// previewCache returns the store's preview cache with its cap set to
// size, failing the test when the store keeps none.
func (f *fixture) previewCache(t *testing.T, size int64) storage.PreviewCache {
	t.Helper()
	c, ok := f.s.(storage.PreviewCache)
	if !ok {
		t.Fatal("the store keeps no previews (storage.PreviewCache)")
	}
	sizer, ok := f.s.(PreviewCacheSizer)
	if !ok {
		t.Fatal("the store's preview cache has no settable cap (storetest.PreviewCacheSizer)")
	}
	sizer.SetPreviewCacheSize(size)
	return c
}

// previewKey is a key of the content sha1 (a hex digit repeated, or a
// content's checksum) and a box of edge pixels.
func previewKey(sha1 string, edge int) storage.PreviewKey {
	if len(sha1) == 1 {
		sha1 = strings.Repeat(sha1, 40)
	}
	return storage.PreviewKey{SHA1: sha1, Width: edge, Height: edge, KeepAspect: true}
}

func (f *fixture) keepPreview(t *testing.T, c storage.PreviewCache, key storage.PreviewKey, data []byte) {
	t.Helper()
	if err := c.KeepPreview(f.ctx, key, data, "image/png"); err != nil {
		t.Fatalf("KeepPreview %s: %v", key.Name(), err)
	}
}

// wantPreview checks that key holds data (nil: nothing).
func (f *fixture) wantPreview(t *testing.T, c storage.PreviewCache, key storage.PreviewKey, data []byte) {
	t.Helper()
	got, contentType, err := c.CachedPreview(f.ctx, key)
	if data == nil {
		wantErr(t, "CachedPreview "+key.Name(), err, storage.ErrNotFound)
		return
	}
	if err != nil || !bytes.Equal(got, data) || contentType != "image/png" {
		t.Fatalf("CachedPreview %s = %d bytes of %q, %v; want the %d bytes kept", key.Name(), len(got), contentType, err, len(data))
	}
}

func testPreviewCacheRoundTrip(t *testing.T, f *fixture) {
	c := f.previewCache(t, 0)
	key := previewKey("a", 64)
	f.wantPreview(t, c, key, nil)
	f.keepPreview(t, c, key, []byte("first\npreview"))
	f.wantPreview(t, c, key, []byte("first\npreview"))
	f.keepPreview(t, c, key, []byte("second"))
	f.wantPreview(t, c, key, []byte("second"))
	// Another box or fit of the same content is another preview.
	other := key
	other.ScaleUp = true
	f.wantPreview(t, c, other, nil)
	if err := c.KeepPreview(f.ctx, key, nil, "image/jpeg"); err != nil {
		t.Fatalf("KeepPreview of no bytes: %v", err)
	}
	if got, contentType, err := c.CachedPreview(f.ctx, key); err != nil || len(got) != 0 || contentType != "image/jpeg" {
		t.Fatalf("CachedPreview of no bytes = %q, %q, %v", got, contentType, err)
	}
}

func testPreviewCacheInvalidKeys(t *testing.T, f *fixture) {
	c := f.previewCache(t, 0)
	for _, key := range []storage.PreviewKey{
		{SHA1: "../../../../etc/passwd", Width: 1, Height: 1},
		{SHA1: strings.Repeat("A", 40), Width: 1, Height: 1},
		{SHA1: strings.Repeat("a", 40), Width: 0, Height: 1},
	} {
		wantErr(t, fmt.Sprintf("KeepPreview %+v", key), c.KeepPreview(f.ctx, key, []byte("x"), "image/png"), storage.ErrInvalid)
		_, _, err := c.CachedPreview(f.ctx, key)
		wantErr(t, fmt.Sprintf("CachedPreview %+v", key), err, storage.ErrInvalid)
	}
	wantErr(t, "KeepPreview without a content type", c.KeepPreview(f.ctx, previewKey("a", 1), []byte("x"), ""), storage.ErrInvalid)
}

// The cap holds three previews of 1000 bytes: a fourth evicts the one
// used longest ago, reading counting as a use.
func testPreviewCacheEviction(t *testing.T, f *fixture) {
	c := f.previewCache(t, 3100)
	data := bytes.Repeat([]byte("p"), 1000)
	a, b, cc, d := previewKey("a", 36), previewKey("b", 36), previewKey("c", 36), previewKey("d", 36)
	f.keepPreview(t, c, a, data)
	f.keepPreview(t, c, b, data)
	f.keepPreview(t, c, cc, data)
	f.wantPreview(t, c, a, data) // a is now the most recently used
	f.keepPreview(t, c, d, data)
	f.wantPreview(t, c, b, nil)
	for _, k := range []storage.PreviewKey{a, cc, d} {
		f.wantPreview(t, c, k, data)
	}
	// A preview larger than the whole cap is not kept, and evicts nothing.
	f.keepPreview(t, c, previewKey("e", 36), bytes.Repeat([]byte("p"), 4000))
	f.wantPreview(t, c, previewKey("e", 36), nil)
	f.wantPreview(t, c, a, data)
	// A lower cap holds by the next keep at the latest, the least
	// recently used going first.
	f.previewCache(t, 1100)
	small := previewKey("f", 36)
	f.keepPreview(t, c, small, []byte("small"))
	f.wantPreview(t, c, cc, nil)
	f.wantPreview(t, c, d, nil)
	f.wantPreview(t, c, a, data)
	f.wantPreview(t, c, small, []byte("small"))
}

func testPreviewCacheOff(t *testing.T, f *fixture) {
	c := f.previewCache(t, 0)
	key := previewKey("a", 36)
	f.keepPreview(t, c, key, []byte("kept"))
	f.previewCache(t, -1)
	f.wantPreview(t, c, key, nil)
	f.keepPreview(t, c, key, []byte("kept"))
	f.wantPreview(t, c, key, nil)
	f.keepPreview(t, c, key, []byte{})
	f.wantPreview(t, c, key, nil)
}

// A content's previews go when the trash that holds its last file, in a
// removed folder, is emptied; another content's stay.
func testPreviewsDroppedWithTrash(t *testing.T, f *fixture) {
	c := f.previewCache(t, 0)
	folder := f.mkdir(t, f.root(), "pictures")
	file := f.put(t, folder.ID, "picture.png", "the picture")
	kept := f.put(t, f.root(), "other.png", "another picture")
	small, large := previewKey(file.Checksums.SHA1, 36), previewKey(file.Checksums.SHA1, 256)
	other := previewKey(kept.Checksums.SHA1, 36)
	for _, k := range []storage.PreviewKey{small, large, other} {
		f.keepPreview(t, c, k, []byte(k.Name()))
	}
	f.remove(t, folder.ID)
	if err := f.s.EmptyTrash(f.ctx, f.space.ID); err != nil {
		t.Fatalf("EmptyTrash: %v", err)
	}
	f.wantPreview(t, c, small, nil)
	f.wantPreview(t, c, large, nil)
	f.wantPreview(t, c, other, []byte(other.Name()))
}

// Where neither trash nor versions are kept, a replaced content and a
// removed file take their previews along at once.
func testPreviewsDroppedWithReplacedContent(t *testing.T, f *fixture) {
	f.retain(storage.Retention{})
	c := f.previewCache(t, 0)
	file := f.put(t, f.root(), "picture.png", "the first picture")
	first := previewKey(file.Checksums.SHA1, 36)
	f.keepPreview(t, c, first, []byte("first"))
	file = f.replace(t, file.ID, "the second picture")
	f.wantPreview(t, c, first, nil)
	second := previewKey(file.Checksums.SHA1, 36)
	f.keepPreview(t, c, second, []byte("second"))
	f.remove(t, file.ID)
	f.wantPreview(t, c, second, nil)
}

// Concurrent writers and readers of a few keys under a small cap never
// fail and never read a torn preview: each one read is whole, n bytes of
// the value n.
func testPreviewCacheConcurrent(t *testing.T, f *fixture) {
	c := f.previewCache(t, 2000)
	keys := []storage.PreviewKey{previewKey("a", 36), previewKey("b", 36), previewKey("c", 36)}
	concurrently(t, 8, func(w int) error {
		for i := range 30 {
			key := keys[(w+i)%len(keys)]
			n := 1 + (w*31+i*17)%250
			if err := c.KeepPreview(f.ctx, key, bytes.Repeat([]byte{byte(n)}, 4*n), "image/png"); err != nil {
				return err
			}
			if err := wholePreview(f, c, keys[i%len(keys)]); err != nil {
				return err
			}
		}
		return nil
	})
}

// wholePreview reads key, which may be gone, and checks it is n bytes of
// the value n/4.
func wholePreview(f *fixture, c storage.PreviewCache, key storage.PreviewKey) error {
	got, _, err := c.CachedPreview(f.ctx, key)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("CachedPreview %s: %w", key.Name(), err)
	}
	if len(got) == 0 || !bytes.Equal(got, bytes.Repeat(got[:1], 4*int(got[0]))) {
		return fmt.Errorf("CachedPreview %s: a torn preview of %d bytes", key.Name(), len(got))
	}
	return nil
}
