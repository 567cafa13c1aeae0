// Package s3content keeps file content as immutable objects in an
// S3-compatible bucket (through minio-go): an object is written once under
// a fresh key and never changed, so a reader never sees a half-replaced
// file and a crash leaves at most an unreferenced object behind. It knows
// nothing of nodes or spaces; the metadata store decides which keys are
// live.
package s3content

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/davspaces/davspaces/storage"
)

// Config names the bucket and how to reach it.
type Config struct {
	// Endpoint is the server's host[:port].
	Endpoint string
	Bucket   string
	// AccessKey and SecretKey sign the requests (AWS signature v4).
	AccessKey string
	SecretKey string
	// Region, when the server wants one.
	Region string
	// TLS selects https.
	TLS bool
	// PartSize is the size of the parts of a multipart upload of content
	// whose size is not known in advance; one part is buffered in memory
	// per such upload. 0 means DefaultPartSize.
	PartSize uint64
}

// DefaultPartSize keeps an upload of unknown size to 8 MiB of memory while
// allowing objects of up to 80 GB (S3's limit is 10,000 parts).
const DefaultPartSize = 8 << 20

// Bucket reads and writes the objects of one bucket.
type Bucket struct {
	client   *minio.Client
	name     string
	partSize uint64
}

// Open connects to the bucket, creating it when it does not exist.
func Open(ctx context.Context, cfg Config) (*Bucket, error) {
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: cfg.TLS,
		Region: cfg.Region,
		// minio-go's default of ten retries with backoff holds a request
		// for many seconds when the server is down; a short outage is
		// better answered at once with 503 and Retry-After.
		MaxRetries: 3,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 client for %s: %w", cfg.Endpoint, err)
	}
	b := &Bucket{client: client, name: cfg.Bucket, partSize: cfg.PartSize}
	if b.partSize == 0 {
		b.partSize = DefaultPartSize
	}
	exists, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("checking bucket %s: %w", cfg.Bucket, classify(err))
	}
	if !exists {
		if err := client.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region}); err != nil {
			return nil, fmt.Errorf("creating bucket %s: %w", cfg.Bucket, classify(err))
		}
	}
	return b, nil
}

// Put stores the bytes of r as object key and returns how many there were.
// size is the number of bytes r holds, or -1 when unknown (the object is
// then sent in parts of the configured PartSize). An r that fails leaves
// no object.
func (b *Bucket) Put(ctx context.Context, key string, r io.Reader, size int64) (int64, error) {
	info, err := b.client.PutObject(ctx, b.name, key, r, size, minio.PutObjectOptions{
		PartSize:         b.partSize,
		ContentType:      "application/octet-stream",
		DisableMultipart: size >= 0 && size <= int64(b.partSize),
	})
	if err != nil {
		return 0, fmt.Errorf("storing object %s: %w", key, classify(err))
	}
	return info.Size, nil
}

// Get reads length bytes of object key from offset; a negative length reads
// to the end. The bytes stream from the server as they are read.
func (b *Bucket) Get(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	var opts minio.GetObjectOptions
	switch {
	case length == 0:
		return io.NopCloser(eofReader{}), nil
	case length > 0:
		if err := opts.SetRange(offset, offset+length-1); err != nil {
			return nil, fmt.Errorf("reading object %s: %w", key, err)
		}
	case offset > 0:
		if err := opts.SetRange(offset, 0); err != nil {
			return nil, fmt.Errorf("reading object %s: %w", key, err)
		}
	}
	// GetObject sends no request until the first Read; going through
	// the core client makes it now, so a missing object or an outage is
	// an error here rather than in the middle of a response.
	body, _, _, err := minio.Core{Client: b.client}.GetObject(ctx, b.name, key, opts)
	if err != nil {
		return nil, fmt.Errorf("reading object %s: %w", key, classify(err))
	}
	return body, nil
}

// Remove deletes objects; keys that do not exist are no error.
func (b *Bucket) Remove(ctx context.Context, keys ...string) error {
	objects := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		objects <- minio.ObjectInfo{Key: k}
	}
	close(objects)
	var errs []error
	for res := range b.client.RemoveObjects(ctx, b.name, objects, minio.RemoveObjectsOptions{}) {
		if res.Err != nil && minio.ToErrorResponse(res.Err).Code != minio.NoSuchKey {
			errs = append(errs, fmt.Errorf("removing object %s: %w", res.ObjectName, classify(res.Err)))
		}
	}
	return errors.Join(errs...)
}

// Incomplete is a multipart upload the bucket keeps unfinished.
type Incomplete struct {
	Key       string
	UploadID  string
	Initiated time.Time
}

// ListIncomplete lists the multipart uploads under prefix that were
// started before cutoff. An upload whose writer died (a node killed mid-
// PUT) is never completed nor aborted, and S3 keeps its parts, and bills
// them, for ever unless someone aborts it.
func (b *Bucket) ListIncomplete(ctx context.Context, prefix string, cutoff time.Time) ([]Incomplete, error) {
	core := minio.Core{Client: b.client}
	var out []Incomplete
	keyMarker, idMarker := "", ""
	for range maxListPages {
		page, err := core.ListMultipartUploads(ctx, b.name, prefix, keyMarker, idMarker, "", 1000)
		if err != nil {
			return out, fmt.Errorf("listing incomplete uploads under %q: %w", prefix, classify(err))
		}
		for _, u := range page.Uploads {
			if u.Initiated.Before(cutoff) {
				out = append(out, Incomplete{Key: u.Key, UploadID: u.UploadID, Initiated: u.Initiated})
			}
		}
		if !page.IsTruncated {
			break
		}
		keyMarker, idMarker = page.NextKeyMarker, page.NextUploadIDMarker
	}
	return out, nil
}

// maxListPages bounds one listing of incomplete uploads; what a pass
// leaves is found by the next.
const maxListPages = 100

// AbortIncomplete aborts the multipart upload u, dropping its parts; one
// already gone is no error.
func (b *Bucket) AbortIncomplete(ctx context.Context, u Incomplete) error {
	err := minio.Core{Client: b.client}.AbortMultipartUpload(ctx, b.name, u.Key, u.UploadID)
	if err != nil && minio.ToErrorResponse(err).Code != "NoSuchUpload" {
		return fmt.Errorf("aborting the upload of %s: %w", u.Key, classify(err))
	}
	return nil
}

// classify makes an unreachable or overloaded server a
// storage.ErrUnavailable and a missing object a storage.ErrNotFound, so
// that the protocol answers 503 (retry) and 404, not 500.
func classify(err error) error {
	if err == nil {
		return nil
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.Code == minio.NoSuchKey:
		return fmt.Errorf("%w: %w", storage.ErrNotFound, err)
	case resp.StatusCode >= http.StatusInternalServerError, resp.Code == "SlowDown", resp.Code == "XMinioServerNotInitialized":
		return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
	}
	return err
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// Probe asks the server whether the bucket exists: one cheap request, for
// a health check.
func (b *Bucket) Probe(ctx context.Context) error {
	exists, err := b.client.BucketExists(ctx, b.name)
	if err != nil {
		return fmt.Errorf("probing bucket %s: %w", b.name, classify(err))
	}
	if !exists {
		return fmt.Errorf("bucket %s: %w", b.name, storage.ErrNotFound)
	}
	return nil
}
