package storage

// DefaultPreviewCacheSize is the cap of a store's preview cache when its
// configuration sets none: enough for the listing thumbnails of some
// tens of thousands of pictures.
const DefaultPreviewCacheSize = 256 << 20

// PreviewCacheSize turns a configured cap into the one in force: 0 means
// DefaultPreviewCacheSize, a negative value no cache (0 returned).
func PreviewCacheSize(configured int64) int64 {
	switch {
	case configured == 0:
		return DefaultPreviewCacheSize
	case configured < 0:
		return 0
	}
	return configured
}
