package caddymodule

import (
	"slices"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/davspaces/davspaces/preview"
	"github.com/davspaces/davspaces/storage"
)

// PreviewSettings are the limits of the previews of files (GET with
// ?preview=1), which are on by default.
type PreviewSettings struct {
	// Disabled turns previews off: their requests answer 404.
	Disabled bool `json:"disabled,omitempty"`
	// Sizes are the edge lengths a requested box is snapped to. Default:
	// 36 48 64 128 256 512 1024 1920.
	Sizes []int `json:"sizes,omitempty"`
	// MaxPixels is the largest image decoded, refused before decoding.
	// Default 50,000,000.
	MaxPixels int64 `json:"max_pixels,omitempty"`
	// MaxMemory is the budget, in bytes, of the previews made at once:
	// each holds what it will allocate, found from the image's header;
	// an image over the whole budget answers 413, one that waits too
	// long for its share 429. Default 192 MiB.
	MaxMemory int64 `json:"max_memory,omitempty"`
	// MaxConcurrent bounds the previews made at once; more answer 429.
	// Default: the number of CPUs.
	MaxConcurrent int `json:"max_concurrent,omitempty"`
	// Timeout bounds the making of one preview. Default 10s.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// CacheSize caps the store's preview cache, in bytes. Default
	// 256 MiB; negative: the store keeps no previews. The store has one
	// cache: the handler provisioned last sets it.
	CacheSize int64 `json:"cache_size,omitempty"`
}

// cache sets the cap of the preview cache of store (a served store, so
// that cache reads are traced and timed too) as s says, and returns it, or
// nil when previews are off or the cap is negative, which also empties it.
func (s *PreviewSettings) cache(store storage.Backend) storage.PreviewCache {
	if s != nil && s.Disabled {
		return nil
	}
	var size int64
	if s != nil {
		size = s.CacheSize
	}
	store.SetPreviewCacheSize(size)
	if size < 0 {
		return nil
	}
	return store
}

// generator returns the preview maker of s, nil when previews are off.
func (s *PreviewSettings) generator() *preview.Generator {
	if s == nil {
		return preview.New(preview.Options{})
	}
	if s.Disabled {
		return nil
	}
	return preview.New(preview.Options{
		Sizes:         s.Sizes,
		MaxPixels:     s.MaxPixels,
		MaxMemory:     s.MaxMemory,
		MaxConcurrent: s.MaxConcurrent,
		Timeout:       time.Duration(s.Timeout),
	})
}

// types are the content types previews are made of, none when they are
// off.
func (s *PreviewSettings) types() []string {
	if s != nil && s.Disabled {
		return nil
	}
	return preview.SupportedTypes()
}

// parsePreviews reads `previews off`, `previews on` or a previews block:
//
//	previews {
//		sizes          <pixels...>
//		max_pixels     <count>
//		max_memory     <size>
//		max_concurrent <count>
//		timeout        <duration>
//		cache_size     <size>|off
//	}
func parsePreviews(d *caddyfile.Dispenser) (*PreviewSettings, error) {
	if d.CountRemainingArgs() == 0 {
		s := &PreviewSettings{}
		return s, parseBlock(d, "previews subdirective", s.options())
	}
	off, err := offArg(d, "on, off or a block")
	if err != nil {
		return nil, err
	}
	return &PreviewSettings{Disabled: off}, nil
}

// options are the subdirectives of a previews block.
func (s *PreviewSettings) options() options {
	return options{
		"sizes":          set(&s.Sizes, sizesArg),
		"max_pixels":     set(&s.MaxPixels, count64Arg),
		"max_memory":     set(&s.MaxMemory, positiveSizeArg),
		"max_concurrent": set(&s.MaxConcurrent, countArg),
		"timeout":        set(&s.Timeout, positiveDurationArg),
		"cache_size":     set(&s.CacheSize, cacheSizeArg),
	}
}

// cacheSizeArg reads the cap of the preview cache: a size above zero,
// or off (-1).
func cacheSizeArg(d *caddyfile.Dispenser) (int64, error) {
	if d.CountRemainingArgs() == 1 && d.NextArg() {
		if d.Val() == "off" {
			return -1, nil
		}
		d.Prev()
	}
	return positiveSizeArg(d)
}

// sizesArg reads one or more edge lengths in pixels, returned in
// ascending order.
func sizesArg(d *caddyfile.Dispenser) ([]int, error) {
	args := d.RemainingArgs()
	if len(args) == 0 {
		return nil, d.ArgErr()
	}
	sizes := make([]int, 0, len(args))
	for _, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil || n < 1 || n > 8192 {
			return nil, d.Errf("sizes: %q is not a number of pixels from 1 to 8192", a)
		}
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	return slices.Compact(sizes), nil
}
