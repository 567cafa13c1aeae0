package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// Small files are kept inline: their bytes are a value of the inline
// bucket, written by the transaction that records the file, not a content
// file of their own. The one bolt commit that records such a file makes it
// durable, where a content file first needs an fsync of its own and one of
// its directory; and a group commit (groupcommit.go) makes many of them
// durable at once. Like content files, inline content never changes: new
// content gets a new key, and the old value is deleted with the record that
// pointed at it, in the same transaction, so no value is ever orphaned. Keys
// come from the bucket's sequence, so new values are appended at the end of
// the bucket rather than into pages all over the database.

const (
	// DefaultInlineLimit is the largest content kept inline unless the
	// Options say otherwise: a value of a few pages, which Open reads into
	// memory cheaply.
	DefaultInlineLimit = 16 << 10
	// maxInlineLimit caps Options.InlineLimit: inline content is read into
	// memory whole, so it must stay small.
	maxInlineLimit = 1 << 20
)

// inlineLimit returns the limit Options.InlineLimit asks for.
func inlineLimit(opt int64) int64 {
	switch {
	case opt == 0:
		return DefaultInlineLimit
	case opt < 0:
		return -1
	}
	return min(opt, maxInlineLimit)
}

// keepsInline reports whether content of size bytes is kept inline.
func (s *Store) keepsInline(size int64) bool { return size <= s.inlineLimit }

func inlineKey(k uint64) []byte { return binary.BigEndian.AppendUint64(nil, k) }

// putInline stores p as new inline content and returns its key. p must not
// change until the transaction has ended.
func (t *txn) putInline(p []byte) (uint64, error) {
	k, err := t.inline().NextSequence()
	if err != nil {
		return 0, err
	}
	return k, t.inline().Put(inlineKey(k), p)
}

// inlineContent returns a copy of the inline content of the file r, which
// outlives the transaction.
func (t *txn) inlineContent(r rec) ([]byte, error) {
	if r.Size == 0 {
		return nil, nil
	}
	v := t.inline().Get(inlineKey(r.Inline))
	if int64(len(v)) != r.Size {
		return nil, fmt.Errorf("inline content of %s: %d bytes for a size of %d: %w", r.ID, len(v), r.Size, errCorrupt)
	}
	return bytes.Clone(v), nil
}

// copyInline stores a copy of the inline content of the file r and returns
// its key.
func (t *txn) copyInline(r rec) (uint64, error) {
	p, err := t.inlineContent(r)
	if err != nil {
		return 0, err
	}
	return t.putInline(p)
}

// dropContent deletes the content of the file r as far as the database
// goes: its inline value, or the reference of its content file. It returns
// that content file, to be removed once the transaction has committed, or
// "" when there is none. The content's previews go after the commit.
func (t *txn) dropContent(r rec) (string, error) {
	if r.Checksums.SHA1 != "" {
		t.dropped = append(t.dropped, r.Checksums.SHA1)
	}
	switch {
	case r.inlined():
		return "", t.inline().Delete(inlineKey(r.Inline))
	case r.Blob != "":
		return r.Blob, t.blobs().Delete([]byte(r.Blob))
	}
	return "", nil
}

// inlineReader is inline content read into memory, at most inlineLimit
// bytes.
type inlineReader struct{ *bytes.Reader }

func (inlineReader) Close() error { return nil }

// readInlineFile reads the size bytes of the file at path, the content of
// a resumable upload to be kept inline.
func readInlineFile(path string, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p := make([]byte, size)
	if _, err := io.ReadFull(f, p); err != nil {
		return nil, fmt.Errorf("read back %d bytes: %w", size, err)
	}
	return p, nil
}
