package traced

import (
	"context"

	"github.com/davspaces/davspaces/storage"
)

// The storage.PreviewCache methods.

func (b *Backend) CachedPreview(ctx context.Context, key storage.PreviewKey) ([]byte, string, error) {
	type preview struct {
		data        []byte
		contentType string
	}
	p, err := call(ctx, "CachedPreview", "", func(ctx context.Context) (preview, error) {
		data, contentType, err := b.next.CachedPreview(ctx, key)
		return preview{data, contentType}, err
	})
	return p.data, p.contentType, err
}

func (b *Backend) KeepPreview(ctx context.Context, key storage.PreviewKey, data []byte, contentType string) error {
	_, err := call(ctx, "KeepPreview", "", func(ctx context.Context) (struct{}, error) {
		return struct{}{}, b.next.KeepPreview(ctx, key, data, contentType)
	})
	return err
}

func (b *Backend) SetPreviewCacheSize(bytes int64) { b.next.SetPreviewCacheSize(bytes) }
