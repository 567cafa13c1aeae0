package pgstore

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	"github.com/davspaces/davspaces/checksum"
	"github.com/davspaces/davspaces/storage"
)

// ReadFrom stores every size alike: in memory up to memLimit, streamed
// through the pipeline past it, with the same checksums as Write.
func TestUploadReadFrom(t *testing.T) {
	s := openTestStore(t, Options{})
	sp := personal(t, s)
	ctx := t.Context()
	for _, size := range []int{0, 10, memLimit - 1, memLimit, memLimit + 1, 3*memLimit + storage.BlockSize/3} {
		content := make([]byte, size)
		for i := range content {
			content[i] = byte(i ^ i>>9)
		}
		want := checksum.NewWriter()
		want.Write(content)
		u, err := s.NewUpload(ctx, sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		// OneByteReader at first, then a plain reader: neither is a
		// WriterTo, so io.Copy goes through ReadFrom.
		head := min(size, 100)
		r := io.MultiReader(iotest.OneByteReader(bytes.NewReader(content[:head])), iotest.HalfReader(bytes.NewReader(content[head:])))
		if n, err := io.Copy(u, r); err != nil || n != int64(size) {
			t.Fatalf("size %d: io.Copy = %d, %v", size, n, err)
		}
		n, _, err := u.Commit(ctx, storage.Commit{ParentID: sp.ID, Name: "f"})
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if n.Size != int64(size) || n.Checksums != want.Sums() {
			t.Fatalf("size %d: node %+v, want sums %+v", size, n, want.Sums())
		}
		_, c, err := s.Open(ctx, sp.ID, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(c)
		c.Close()
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("size %d: read back %d bytes, %v", size, len(got), err)
		}
		if segs := contentOf(t, s, n.ID); (size == 0) != (len(segs) == 0) {
			t.Fatalf("size %d: content %+v", size, segs)
		}
	}
}

// A body that fails is reported as it is, and leaves the upload to be
// discarded.
func TestUploadReadFromFailingBody(t *testing.T) {
	s := openTestStore(t, Options{})
	sp := personal(t, s)
	for _, size := range []int{10, 2 * memLimit} {
		u, err := s.NewUpload(t.Context(), sp.ID)
		if err != nil {
			t.Fatal(err)
		}
		r := io.MultiReader(bytes.NewReader(make([]byte, size)), iotest.ErrReader(io.ErrUnexpectedEOF))
		if _, err := io.Copy(u, r); err != io.ErrUnexpectedEOF {
			t.Fatalf("size %d: io.Copy error %v", size, err)
		}
		if err := u.Discard(); err != nil {
			t.Fatal(err)
		}
	}
}
