package s3content

import (
	"context"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"
)

// Object is an object of the bucket as a listing or a HEAD names it.
type Object struct {
	Key      string
	Size     int64
	Modified time.Time
}

// List returns up to limit objects under prefix whose keys sort after
// after, in key order: one page of a listing that the caller resumes from
// the last key, so that it holds no state between pages (a check reads
// the database between them).
func (b *Bucket) List(ctx context.Context, prefix, after string, limit int) ([]Object, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing's requests once the page is full
	out := make([]Object, 0, limit)
	opts := minio.ListObjectsOptions{Prefix: prefix, StartAfter: after, Recursive: true, MaxKeys: limit}
	for info := range b.client.ListObjectsIter(ctx, b.name, opts) {
		if info.Err != nil {
			return nil, fmt.Errorf("listing objects under %q after %q: %w", prefix, after, classify(info.Err))
		}
		out = append(out, Object{Key: info.Key, Size: info.Size, Modified: info.LastModified})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// Stat returns object key's size and time; a missing object is a wrapped
// storage.ErrNotFound.
func (b *Bucket) Stat(ctx context.Context, key string) (Object, error) {
	info, err := b.client.StatObject(ctx, b.name, key, minio.StatObjectOptions{})
	if err != nil {
		return Object{}, fmt.Errorf("stat of object %s: %w", key, classify(err))
	}
	return Object{Key: info.Key, Size: info.Size, Modified: info.LastModified}, nil
}
