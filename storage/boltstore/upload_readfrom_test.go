package boltstore

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// TestUploadReadFrom: io.Copy into an upload stores every byte in order
// with its checksums, whatever the size against the blocks in flight and
// however the reader splits it; a body cut short returns its own error.
func TestUploadReadFrom(t *testing.T) {
	content := make([]byte, (storage.BlocksInFlight+3)*storage.BlockSize+123)
	for i := range content {
		content[i] = byte(i*7 + i>>13)
	}
	tests := []struct {
		name    string
		size    int
		reader  func(io.Reader) io.Reader
		readErr error
	}{
		{name: "empty", size: 0},
		{name: "small", size: 100},
		{name: "below the parallel write", size: parallelWriteMin - 1},
		{name: "one block", size: storage.BlockSize},
		{name: "a block and a byte", size: storage.BlockSize + 1},
		{name: "more blocks than in flight", size: len(content)},
		{name: "one byte a read", size: storage.BlockSize + 5, reader: iotest.OneByteReader},
		{name: "error with the last data", size: len(content), reader: iotest.DataErrReader},
		{name: "cut short", size: 3*storage.BlockSize + 10, readErr: io.ErrUnexpectedEOF,
			reader: func(r io.Reader) io.Reader { return io.MultiReader(r, iotest.ErrReader(io.ErrUnexpectedEOF)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			u, err := f.s.NewUpload(ctx, f.space.ID)
			if err != nil {
				t.Fatal(err)
			}
			defer u.Discard()
			want := content[:tt.size]
			var src io.Reader = bytes.NewReader(want)
			if tt.reader != nil {
				src = tt.reader(src)
			}
			n, err := io.Copy(u, src)
			if !errors.Is(err, tt.readErr) {
				t.Fatalf("io.Copy: %v, want %v", err, tt.readErr)
			}
			if n != int64(tt.size) || u.Size() != int64(tt.size) {
				t.Fatalf("copied %d, Size %d; want %d", n, u.Size(), tt.size)
			}
			sum := checksum.NewWriter()
			sum.Write(want)
			if got := u.Checksums(); got != sum.Sums() {
				t.Fatalf("checksums %v, want %v", got, sum.Sums())
			}
			if tt.readErr != nil {
				return
			}
			node, _, err := u.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "f"})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.read(t, node.ID); got != string(want) {
				t.Fatalf("stored %d bytes differ from the %d sent", len(got), len(want))
			}
		})
	}
}

// TestUploadReadFromDiskFull: a write that fails stops the copy with
// insufficient storage, well before the end of the body, and the upload
// can only be discarded.
func TestUploadReadFromDiskFull(t *testing.T) {
	f, u := uploadToFullDisk(t)
	src := &countingReader{r: io.LimitReader(zeroes{}, 1000*storage.BlockSize)}
	_, err := io.Copy(u, src)
	wantErr(t, err, storage.ErrInsufficientStorage)
	if src.n > 3*storage.BlocksInFlight*storage.BlockSize {
		t.Fatalf("read %d bytes after the first write failed", src.n)
	}
	_, _, err = u.Commit(ctx, storage.Commit{ParentID: f.root(), Name: "f"})
	wantErr(t, err, storage.ErrInsufficientStorage)
}

type zeroes struct{}

func (zeroes) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
