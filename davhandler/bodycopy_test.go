package davhandler

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// failingWriter takes limit bytes, then fails.
type failingWriter struct {
	bytes.Buffer
	limit int
}

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > w.limit {
		return 0, errDiskFull
	}
	return w.Buffer.Write(p)
}

// TestCopyReadingAhead: every byte arrives in order whatever the body's
// size against the block size; a failed write stops the copy with the
// write's error, a failed read with the read's, and a body cut short is
// never taken for one that ended.
func TestCopyReadingAhead(t *testing.T) {
	body := make([]byte, 3*bodyBlockSize+123)
	for i := range body {
		body[i] = byte(i * 7)
	}
	tests := []struct {
		name       string
		src        io.Reader
		writeLimit int
		want       []byte
		readErr    error
		writeErr   error
	}{
		{name: "empty", src: bytes.NewReader(nil), want: nil},
		{name: "small", src: bytes.NewReader(body[:100]), want: body[:100]},
		{name: "one block", src: bytes.NewReader(body[:bodyBlockSize]), want: body[:bodyBlockSize]},
		{name: "block and a byte", src: bytes.NewReader(body[:bodyBlockSize+1]), want: body[:bodyBlockSize+1]},
		{name: "several blocks", src: bytes.NewReader(body), want: body},
		{name: "one byte a read", src: iotest.OneByteReader(bytes.NewReader(body[:bodyBlockSize+5])), want: body[:bodyBlockSize+5]},
		{name: "error with the data", src: iotest.DataErrReader(bytes.NewReader(body)), want: body},
		{name: "cut short in the first block", src: io.MultiReader(bytes.NewReader(body[:10]), iotest.ErrReader(io.ErrUnexpectedEOF)),
			want: body[:10], readErr: io.ErrUnexpectedEOF},
		{name: "cut short later", src: io.MultiReader(bytes.NewReader(body[:2*bodyBlockSize+10]), iotest.ErrReader(io.ErrUnexpectedEOF)),
			want: body[:2*bodyBlockSize+10], readErr: io.ErrUnexpectedEOF},
		{name: "write fails in the first block", src: bytes.NewReader(body), writeLimit: 10, want: nil, writeErr: errDiskFull},
		{name: "write fails later", src: bytes.NewReader(body), writeLimit: 2*bodyBlockSize + 10,
			want: body[:2*bodyBlockSize], writeErr: errDiskFull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := &failingWriter{limit: len(body) + 1}
			if tt.writeLimit > 0 {
				dst.limit = tt.writeLimit
			}
			readErr, writeErr := copyReadingAhead(dst, tt.src)
			if !errors.Is(readErr, tt.readErr) || !errors.Is(writeErr, tt.writeErr) {
				t.Fatalf("errors (read %v, write %v), want (%v, %v)", readErr, writeErr, tt.readErr, tt.writeErr)
			}
			if !bytes.Equal(dst.Bytes(), tt.want) {
				t.Fatalf("wrote %d bytes, want %d", dst.Len(), len(tt.want))
			}
		})
	}
}

// TestCopyReadingAheadStopsReading: once a write fails, the body is not
// read on to its end, and nothing reads it after the copy returned.
func TestCopyReadingAheadStopsReading(t *testing.T) {
	src := &countingReader{r: io.LimitReader(zeros{}, 100*bodyBlockSize)}
	_, writeErr := copyReadingAhead(&failingWriter{limit: 0}, src)
	if !errors.Is(writeErr, errDiskFull) {
		t.Fatalf("write error %v, want %v", writeErr, errDiskFull)
	}
	read := src.n
	if read > 3*bodyBlockSize {
		t.Fatalf("read %d bytes after the first write failed, want at most 3 blocks", read)
	}
	if src.n != read {
		t.Fatal("the body was read after the copy returned")
	}
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
