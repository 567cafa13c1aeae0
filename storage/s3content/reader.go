package s3content

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
)

// Segment is one object of a file's content. A file is usually one
// segment; a resumable upload completed from parts is several, so that
// finishing it needs no copy. A small file's one segment may instead
// hold its bytes itself (Data, no Key): the record that names it is then
// the whole file, and no object is written, read or removed for it.
type Segment struct {
	Key  string `json:"k,omitempty"`
	Size int64  `json:"n"`
	// Data is an inline segment's bytes in standard base64: a string, so
	// that segments stay comparable, and text as JSON keeps it.
	Data string `json:"d,omitempty"`
}

// InlineSegment is the segment that holds data itself.
func InlineSegment(data []byte) Segment {
	return Segment{Size: int64(len(data)), Data: base64.StdEncoding.EncodeToString(data)}
}

// Bytes returns an inline segment's bytes.
func (s Segment) Bytes() ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s.Data)
	if err == nil && int64(len(b)) != s.Size {
		err = fmt.Errorf("inline segment holds %d bytes, not %d", len(b), s.Size)
	}
	return b, err
}

// Inline reports whether the segment holds its bytes instead of naming an
// object.
func (s Segment) Inline() bool { return s.Key == "" }

// Size is the total size of segments.
func Size(segments []Segment) int64 {
	var n int64
	for _, s := range segments {
		n += s.Size
	}
	return n
}

// Reader reads the content made of segments as one seekable stream. It
// asks the server for the bytes from the current offset to the end of a
// segment on the first Read after a Seek, and streams them, so neither a
// Range request nor a whole file is ever held in memory.
type Reader struct {
	ctx      context.Context
	bucket   *Bucket
	segments []Segment
	size     int64

	offset int64
	body   io.ReadCloser // open at bodyAt, or nil
	bodyAt int64
	left   int64 // bytes of the current segment left in body
}

// NewReader returns a reader of the content made of segments. ctx bounds
// its requests.
func (b *Bucket) NewReader(ctx context.Context, segments []Segment) *Reader {
	return &Reader{ctx: ctx, bucket: b, segments: segments, size: Size(segments)}
}

// Read reads from the current offset.
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.body != nil && r.bodyAt != r.offset {
		r.closeBody()
	}
	for r.body == nil || r.left == 0 {
		if r.offset >= r.size {
			return 0, io.EOF
		}
		if err := r.open(); err != nil {
			return 0, err
		}
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.body.Read(p)
	r.offset += int64(n)
	r.bodyAt = r.offset
	r.left -= int64(n)
	switch {
	case err == io.EOF && r.left > 0:
		return n, fmt.Errorf("object ended %d bytes early: %w", r.left, io.ErrUnexpectedEOF)
	case err == io.EOF:
		err = nil
	case err != nil:
		err = classify(err)
	}
	return n, err
}

// open starts reading the segment that holds the current offset.
func (r *Reader) open() error {
	r.closeBody()
	start := int64(0)
	for _, s := range r.segments {
		if r.offset < start+s.Size {
			body, err := r.segmentFrom(s, r.offset-start)
			if err != nil {
				return err
			}
			r.body, r.bodyAt, r.left = body, r.offset, start+s.Size-r.offset
			return nil
		}
		start += s.Size
	}
	return io.EOF
}

// segmentFrom opens segment s from offset on.
func (r *Reader) segmentFrom(s Segment, offset int64) (io.ReadCloser, error) {
	if s.Inline() {
		b, err := s.Bytes()
		if err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(b[offset:])), nil
	}
	return r.bucket.Get(r.ctx, s.Key, offset, -1)
}

// Seek moves the offset; the next Read opens the segment there unless the
// body is already there.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += r.offset
	case io.SeekEnd:
		offset += r.size
	case io.SeekStart:
	default:
		return 0, errors.New("seek: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("seek: negative offset")
	}
	// The body stays open: a caller that looks for the end (to learn the
	// size) and comes back reads on from where the body is.
	r.offset = offset
	return offset, nil
}

// Prefetch starts reading at the current offset now, so that a missing
// object or an unreachable server is an error before the caller commits to
// an answer (a 200 whose body would break off) rather than in its middle.
func (r *Reader) Prefetch() error {
	if r.offset >= r.size || (r.body != nil && r.bodyAt == r.offset) {
		return nil
	}
	return r.open()
}

// Close ends the reader's request.
func (r *Reader) Close() error {
	r.closeBody()
	return nil
}

func (r *Reader) closeBody() {
	if r.body != nil {
		r.body.Close()
		r.body, r.left = nil, 0
	}
}
