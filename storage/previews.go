package storage

import (
	"context"
	"fmt"
)

// PreviewCache keeps the previews made of file contents, so that a preview
// is made once per content and box rather than at every listing of the
// apps. It is a cache: a preview may be gone at any time, and a store that
// implements it keeps it under a size cap, evicting the least recently
// used, and drops the previews of a content when it drops the content.
type PreviewCache interface {
	// CachedPreview returns the preview kept under key and its content
	// type, or ErrNotFound.
	CachedPreview(ctx context.Context, key PreviewKey) (data []byte, contentType string, err error)
	// KeepPreview keeps data, a preview of contentType, under key.
	KeepPreview(ctx context.Context, key PreviewKey, data []byte, contentType string) error
}

// PreviewKey names a preview: the content it is made of and how.
type PreviewKey struct {
	// SHA1 is the content's checksum, lowercase hex: previews are kept per
	// content, not per file, so that copies share them.
	SHA1 string
	// Width and Height are the box, snapped to the allowed sizes.
	Width, Height int
	// KeepAspect and ScaleUp are the fit asked for.
	KeepAspect, ScaleUp bool
}

// Valid reports whether k names a preview: a SHA1 of 40 lowercase hex
// digits (it becomes part of a file or object name) and a box.
func (k PreviewKey) Valid() bool {
	if len(k.SHA1) != 40 || k.Width <= 0 || k.Height <= 0 {
		return false
	}
	for _, c := range k.SHA1 {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Name is the key as one path element of a store's cache, beginning with
// the content's checksum, so that a content's previews can be found and
// dropped by that prefix.
func (k PreviewKey) Name() string {
	return fmt.Sprintf("%s-%dx%d-a%d-u%d", k.SHA1, k.Width, k.Height, bit(k.KeepAspect), bit(k.ScaleUp))
}

func bit(b bool) int {
	if b {
		return 1
	}
	return 0
}
