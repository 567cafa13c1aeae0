package s3content

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/storage"
)

func TestMain(m *testing.M) { os.Exit(testpeer.Main(m)) }

func openBucket(t *testing.T, s3 testpeer.S3) *Bucket {
	t.Helper()
	b, err := Open(t.Context(), Config{Endpoint: s3.Endpoint, Bucket: s3.Bucket, AccessKey: s3.AccessKey, SecretKey: s3.SecretKey, PartSize: 5 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSegmentsReadAsOneFile: content made of several objects reads,
// seeks and reads ranges as one stream.
func TestSegmentsReadAsOneFile(t *testing.T) {
	b := openBucket(t, testpeer.S3Bucket(t))
	ctx := t.Context()
	parts := []string{"hello, ", "", "segmented ", "world"}
	var segs []Segment
	for i, p := range parts {
		key := "k" + string(rune('a'+i))
		n, err := b.Put(ctx, key, strings.NewReader(p), -1)
		if err != nil || n != int64(len(p)) {
			t.Fatalf("Put %q: %d, %v", p, n, err)
		}
		segs = append(segs, Segment{Key: key, Size: n})
	}
	whole := strings.Join(parts, "")
	r := b.NewReader(ctx, segs)
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil || string(got) != whole {
		t.Fatalf("ReadAll = %q, %v", got, err)
	}
	for _, tc := range []struct {
		offset int64
		n      int
	}{{0, 3}, {5, 6}, {7, 10}, {16, 5}, {20, 1}} {
		if _, err := r.Seek(tc.offset, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, tc.n)
		if _, err := io.ReadFull(r, buf); err != nil || string(buf) != whole[tc.offset:tc.offset+int64(tc.n)] {
			t.Errorf("at %d: %q, %v", tc.offset, buf, err)
		}
	}
	if end, _ := r.Seek(0, io.SeekEnd); end != int64(len(whole)) {
		t.Errorf("SeekEnd = %d", end)
	}
	// Looking for the size and coming back reads on from the open body.
	r.Seek(0, io.SeekStart)
	if err := r.Prefetch(); err != nil {
		t.Fatal(err)
	}
	r.Seek(0, io.SeekEnd)
	r.Seek(0, io.SeekStart)
	if got, err := io.ReadAll(r); err != nil || string(got) != whole {
		t.Fatalf("after seeking to the end and back: %q, %v", got, err)
	}
}

// TestMultipartUpload: content of unknown size larger than a part goes up
// in parts and reads back intact.
func TestMultipartUpload(t *testing.T) {
	b := openBucket(t, testpeer.S3Bucket(t))
	data := bytes.Repeat([]byte("0123456789abcdef"), (11<<20)/16+3)
	n, err := b.Put(t.Context(), "big", bytes.NewReader(data), -1)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("Put = %d, %v", n, err)
	}
	body, err := b.Get(t.Context(), "big", 5<<20-2, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	got, _ := io.ReadAll(body)
	if !bytes.Equal(got, data[5<<20-2:5<<20+2]) {
		t.Fatalf("range across parts = %q", got)
	}
}

// TestMissingObjectIsNotFound and removal of what is gone is no error.
func TestMissingObjectIsNotFound(t *testing.T) {
	b := openBucket(t, testpeer.S3Bucket(t))
	ctx := t.Context()
	if _, err := b.Put(ctx, "gone", strings.NewReader("x"), 1); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(ctx, "gone", "never-was"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := b.Get(ctx, "gone", 0, -1); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Get of a removed object: %v", err)
	}
}

// TestOutageIsUnavailable: a server that is down is storage.ErrUnavailable
// (answered 503), and the bucket works again once it is back.
func TestOutageIsUnavailable(t *testing.T) {
	m := testpeer.OwnMinIO(t)
	b := openBucket(t, m.NewBucket(t))
	if _, err := b.Put(t.Context(), "before", strings.NewReader("kept"), 4); err != nil {
		t.Fatal(err)
	}
	m.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 30e9)
	defer cancel()
	if _, err := b.Put(ctx, "k", strings.NewReader("x"), 1); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Put during outage: %v", err)
	}
	if _, err := b.Get(ctx, "k", 0, -1); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Get during outage: %v", err)
	}
	// A reader prefetches, so a GET can answer 503 before it answers 200.
	if err := b.NewReader(ctx, []Segment{{Key: "before", Size: 4}}).Prefetch(); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Prefetch during outage: %v", err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "k", strings.NewReader("x"), 1); err != nil {
		t.Fatalf("Put after outage: %v", err)
	}
}

// incomplete lists every multipart upload the bucket keeps unfinished.
func incomplete(t *testing.T, b *Bucket) []Incomplete {
	t.Helper()
	us, err := b.ListIncomplete(t.Context(), "", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatalf("ListIncomplete: %v", err)
	}
	return us
}

// TestPutLeavesNoIncompleteUpload: a multipart Put whose reader fails, or
// whose context ends, after a part was sent leaves no incomplete upload.
func TestPutLeavesNoIncompleteUpload(t *testing.T) {
	b := openBucket(t, testpeer.S3Bucket(t))
	part := bytes.Repeat([]byte("x"), 6<<20) // more than the 5 MiB part
	broken := errors.New("client went away")
	if _, err := b.Put(t.Context(), "failed", io.MultiReader(bytes.NewReader(part), iotest.ErrReader(broken)), -1); !errors.Is(err, broken) {
		t.Fatalf("Put with a failing reader: %v, want %v", err, broken)
	}
	ctx, cancel := context.WithCancel(t.Context())
	body := io.MultiReader(bytes.NewReader(part), readerFunc(func([]byte) (int, error) {
		cancel()
		<-ctx.Done()
		return 0, ctx.Err()
	}))
	if _, err := b.Put(ctx, "cancelled", body, -1); err == nil {
		t.Fatal("Put whose context ended succeeded")
	}
	if us := incomplete(t, b); len(us) != 0 {
		t.Fatalf("incomplete uploads left: %+v", us)
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestAbortIncomplete: the multipart upload of a writer that died is
// listed once it is older than the cutoff, and aborting it drops it.
func TestAbortIncomplete(t *testing.T) {
	b := openBucket(t, testpeer.S3Bucket(t))
	ctx := t.Context()
	core := minio.Core{Client: b.client}
	id, err := core.NewMultipartUpload(ctx, b.name, "files/orphan", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.PutObjectPart(ctx, b.name, "files/orphan", id, 1, strings.NewReader("part"), 4, minio.PutObjectPartOptions{}); err != nil {
		t.Fatal(err)
	}
	if young, err := b.ListIncomplete(ctx, "files/", time.Now().Add(-time.Hour)); err != nil || len(young) != 0 {
		t.Fatalf("uploads older than an hour: %+v, %v; want none", young, err)
	}
	if other, err := b.ListIncomplete(ctx, "chunks/", time.Now().Add(time.Hour)); err != nil || len(other) != 0 {
		t.Fatalf("uploads under another prefix: %+v, %v; want none", other, err)
	}
	us, err := b.ListIncomplete(ctx, "files/orphan", time.Now().Add(time.Hour))
	if err != nil || len(us) != 1 || us[0].Key != "files/orphan" || us[0].UploadID != id {
		t.Fatalf("ListIncomplete = %+v, %v; want files/orphan", us, err)
	}
	if err := b.AbortIncomplete(ctx, us[0]); err != nil {
		t.Fatalf("AbortIncomplete: %v", err)
	}
	if err := b.AbortIncomplete(ctx, us[0]); err != nil {
		t.Fatalf("AbortIncomplete again: %v", err)
	}
	if left := incomplete(t, b); len(left) != 0 {
		t.Fatalf("incomplete uploads left: %+v", left)
	}
}
