// Package checksum computes the file checksums ownCloud clients expect
// (SHA1, MD5 and ADLER32) in one pass over a stream, and parses and formats
// the checksum headers that carry them.
package checksum

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"strings"
)

// Algorithm names a supported checksum algorithm.
type Algorithm string

// The algorithms computed for every stored file.
const (
	SHA1    Algorithm = "SHA1"
	MD5     Algorithm = "MD5"
	Adler32 Algorithm = "ADLER32"
)

// ErrUnsupported reports a checksum algorithm the server does not compute.
var ErrUnsupported = errors.New("unsupported checksum algorithm")

// Sums holds the three digests of one content stream, as lower-case hex.
type Sums struct {
	SHA1    string
	MD5     string
	Adler32 string
}

// IsZero reports whether no digest is set.
func (s Sums) IsZero() bool { return s == Sums{} }

// Get returns the digest for alg.
func (s Sums) Get(alg Algorithm) (string, error) {
	switch alg {
	case SHA1:
		return s.SHA1, nil
	case MD5:
		return s.MD5, nil
	case Adler32:
		return s.Adler32, nil
	}
	return "", fmt.Errorf("%w: %s", ErrUnsupported, alg)
}

// String formats the sums the way oc:checksums carries them:
// "SHA1:<hex> MD5:<hex> ADLER32:<hex>".
func (s Sums) String() string {
	if s.IsZero() {
		return ""
	}
	return "SHA1:" + s.SHA1 + " MD5:" + s.MD5 + " ADLER32:" + s.Adler32
}

// Writer computes all three digests of everything written to it.
// It never returns an error from Write.
type Writer struct {
	sha1    hash.Hash
	md5     hash.Hash
	adler32 hash.Hash32
}

// NewWriter returns a Writer with empty digests.
func NewWriter() *Writer {
	return &Writer{sha1: sha1.New(), md5: md5.New(), adler32: adler32.New()}
}

// Write feeds p to every digest.
func (w *Writer) Write(p []byte) (int, error) {
	w.sha1.Write(p)
	w.md5.Write(p)
	w.adler32.Write(p)
	return len(p), nil
}

// Sums returns the digests of the bytes written so far.
func (w *Writer) Sums() Sums {
	return Sums{
		SHA1:    hex.EncodeToString(w.sha1.Sum(nil)),
		MD5:     hex.EncodeToString(w.md5.Sum(nil)),
		Adler32: hex.EncodeToString(w.adler32.Sum(nil)),
	}
}

// digestSizes are the digest lengths in bytes.
var digestSizes = map[Algorithm]int{SHA1: sha1.Size, MD5: md5.Size, Adler32: adler32.Size}

// Expected is a digest a client announced for the content it sends.
type Expected struct {
	Algorithm Algorithm
	Digest    string // lower-case hex
}

// Matches reports whether the computed sums agree with e.
func (e Expected) Matches(s Sums) bool {
	got, err := s.Get(e.Algorithm)
	return err == nil && got == e.Digest
}

// ParseOCChecksum parses an OC-Checksum header ("SHA1:<hex>"). The algorithm
// name is case-insensitive.
func ParseOCChecksum(v string) (Expected, error) {
	alg, digest, ok := strings.Cut(strings.TrimSpace(v), ":")
	if !ok {
		return Expected{}, fmt.Errorf("malformed checksum %q: want <ALGORITHM>:<hex>", v)
	}
	return newExpected(alg, digest)
}

func newExpected(alg, digest string) (Expected, error) {
	a := Algorithm(strings.ToUpper(strings.TrimSpace(alg)))
	size, ok := digestSizes[a]
	if !ok {
		return Expected{}, fmt.Errorf("%w: %s", ErrUnsupported, alg)
	}
	digest = strings.ToLower(strings.TrimSpace(digest))
	// A digest of the wrong length can never match: refusing it now spares
	// reading a whole upload only to answer "mismatch".
	if _, err := hex.DecodeString(digest); err != nil || len(digest) != 2*size {
		return Expected{}, fmt.Errorf("malformed %s digest %q: want %d hex digits", a, digest, 2*size)
	}
	return Expected{Algorithm: a, Digest: digest}, nil
}
