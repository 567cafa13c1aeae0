package caddymodule

import (
	"errors"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

func TestPreviewCacheSize(t *testing.T) {
	for _, tc := range []struct {
		input string
		want  int64
		err   string
	}{
		{input: "cache_size 64MiB", want: 64 << 20},
		{input: "cache_size off", want: -1},
		{input: "cache_size 0", err: "cache_size must be more than 0"},
		{input: "cache_size", err: "wrong argument count"},
		{input: "cache_size 1GB off", err: "wrong argument count"},
		{input: "cache_size lots", err: `invalid size "lots"`},
	} {
		t.Run(tc.input, func(t *testing.T) {
			var got DAVSpaces
			err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser("davspaces {\n previews {\n " + tc.input + "\n }\n}"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || got.Previews == nil || got.Previews.CacheSize != tc.want {
				t.Fatalf("got %+v, %v; want a cache size of %d", got.Previews, err, tc.want)
			}
		})
	}
}

// The handler gets the store's cache unless previews or the cache are
// off, and cache_size off empties it.
func TestPreviewCacheOfStore(t *testing.T) {
	store, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	key := storage.PreviewKey{SHA1: strings.Repeat("a", 40), Width: 36, Height: 36}
	var on *PreviewSettings
	c := on.cache(store)
	if c == nil {
		t.Fatal("no cache by default")
	}
	if err := c.KeepPreview(t.Context(), key, []byte("png"), "image/png"); err != nil {
		t.Fatal(err)
	}
	if c := (&PreviewSettings{Disabled: true}).cache(store); c != nil {
		t.Fatal("a cache with previews off")
	}
	if c := (&PreviewSettings{CacheSize: -1}).cache(store); c != nil {
		t.Fatal("a cache with cache_size off")
	}
	if _, _, err := store.CachedPreview(t.Context(), key); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("cache_size off left a preview: %v", err)
	}
}
