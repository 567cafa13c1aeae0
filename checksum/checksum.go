// Package checksum computes the file checksums ownCloud clients expect
// (SHA1, MD5 and ADLER32) in one pass over a stream, and parses and formats
// the checksum headers that carry them.
package checksum

import (
	"cmp"
	"crypto/md5"
	"crypto/sha1"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Algorithm names a supported checksum algorithm.
type Algorithm string

// The algorithms computed for every stored file.
const (
	SHA1    Algorithm = "SHA1"
	MD5     Algorithm = "MD5"
	Adler32 Algorithm = "ADLER32"
)

// Algorithms lists every algorithm the server computes, in the order
// oc:checksums shows them.
func Algorithms() []Algorithm { return []Algorithm{SHA1, MD5, Adler32} }

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

// Complete reports whether every digest is set.
func (s Sums) Complete() bool { return s.SHA1 != "" && s.MD5 != "" && s.Adler32 != "" }

// Missing lists the algorithms whose digest is not set.
func (s Sums) Missing() []Algorithm {
	var missing []Algorithm
	for _, alg := range Algorithms() {
		if d, _ := s.Get(alg); d == "" {
			missing = append(missing, alg)
		}
	}
	return missing
}

// Merge returns s with the digests it lacks taken from o.
func (s Sums) Merge(o Sums) Sums {
	s.SHA1 = cmp.Or(s.SHA1, o.SHA1)
	s.MD5 = cmp.Or(s.MD5, o.MD5)
	s.Adler32 = cmp.Or(s.Adler32, o.Adler32)
	return s
}

// First returns the first digest set, in the order of Algorithms, and its
// algorithm; ok is false when none is.
func (s Sums) First() (alg Algorithm, digest string, ok bool) {
	for _, alg := range Algorithms() {
		if d, _ := s.Get(alg); d != "" {
			return alg, d, true
		}
	}
	return "", "", false
}

// String formats the digests that are set the way oc:checksums carries
// them: "SHA1:<hex> MD5:<hex> ADLER32:<hex>" when all are.
func (s Sums) String() string {
	var b strings.Builder
	for _, alg := range Algorithms() {
		d, _ := s.Get(alg)
		if d == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(alg) + ":" + d)
	}
	return b.String()
}

// Writer computes the digests of everything written to it: all three, or
// those NewWriterOf was given. It never returns an error from Write.
type Writer struct {
	sha1    hash.Hash // nil when not computed
	md5     hash.Hash // nil when not computed
	adler32 hash.Hash32
}

// NewWriter returns a Writer of all three digests, empty.
func NewWriter() *Writer {
	return &Writer{sha1: sha1.New(), md5: md5.New(), adler32: adler32.New()}
}

// NewWriterOf returns a Writer of only the digests of algs, empty: its
// Sums leave the others unset. It costs nothing for the digests nobody
// asked for yet, which a store computes later, off the request's path.
func NewWriterOf(algs ...Algorithm) (*Writer, error) {
	w := &Writer{}
	for _, alg := range algs {
		switch alg {
		case SHA1:
			w.sha1 = sha1.New()
		case MD5:
			w.md5 = md5.New()
		case Adler32:
			w.adler32 = adler32.New()
		default:
			return nil, fmt.Errorf("%w: %s", ErrUnsupported, alg)
		}
	}
	return w, nil
}

// Compute returns the digests of algs over everything r yields, on this
// goroutine alone: unlike Write, it never takes a second core, so that
// work done in the background leaves the others to the requests.
func Compute(r io.Reader, algs ...Algorithm) (Sums, error) {
	w, err := NewWriterOf(algs...)
	if err != nil {
		return Sums{}, err
	}
	buf := make([]byte, 256<<10)
	if _, err := io.CopyBuffer(serialWriter{w}, r, buf); err != nil {
		return Sums{}, fmt.Errorf("compute checksums: %w", err)
	}
	return w.Sums(), nil
}

// serialWriter feeds a Writer's digests one after the other.
type serialWriter struct{ w *Writer }

func (s serialWriter) Write(p []byte) (int, error) {
	for _, h := range s.w.digests() {
		h.Write(p)
	}
	return len(p), nil
}

// parallelMin is the smallest write whose digests are computed on two
// goroutines: below it, handing MD5 to another goroutine costs more than
// it saves.
const parallelMin = 16 << 10

// Write feeds p to every digest. A large p has its MD5, the slowest of
// the three, computed on another goroutine while SHA1 and ADLER32 run on
// this one: hashing dominates the CPU cost of an upload, and this makes it
// about the cost of MD5 alone. Write returns once every digest has read p,
// so the caller may reuse it.
func (w *Writer) Write(p []byte) (int, error) {
	if len(p) < parallelMin || w.md5 == nil {
		for _, h := range w.digests() {
			h.Write(p)
		}
		return len(p), nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.md5.Write(p)
	}()
	for _, h := range w.digests() {
		if h != w.md5 {
			h.Write(p)
		}
	}
	<-done
	return len(p), nil
}

// Pipeline feeds a stream of blocks to the digests of a Writer, each
// digest on its own goroutine with its own queue. Unlike Write, which
// waits for the slowest digest on every call, it lets the faster digests
// and the caller run ahead while MD5, the slowest, works through the queue
// without pause, so hashing a large upload costs the time of MD5 alone.
type Pipeline struct {
	lanes []chan pipelineBlock
	wg    sync.WaitGroup
}

// pipelineBlock is one block in every digest's queue; left counts the
// digests that have still to read it.
type pipelineBlock struct {
	b    []byte
	left *atomic.Int32
	done func()
}

// Pipeline starts hashing blocks written to the returned Pipeline into w,
// and writing them to each of also (the file the stream is stored in),
// each on a goroutine of its own; errors from also are theirs to keep.
// depth is how many blocks each queue holds before Write waits. Nothing
// else may write to w or also until the Pipeline is closed.
func (w *Writer) Pipeline(depth int, also ...io.Writer) *Pipeline {
	p := &Pipeline{}
	for _, h := range w.writers(also) {
		lane := make(chan pipelineBlock, depth)
		p.lanes = append(p.lanes, lane)
		p.wg.Go(func() {
			for blk := range lane {
				h.Write(blk.b)
				if blk.left.Add(-1) == 0 {
					blk.done()
				}
			}
		})
	}
	return p
}

// writers lists the digests of w, then also.
func (w *Writer) writers(also []io.Writer) []io.Writer {
	ws := make([]io.Writer, 0, 3+len(also))
	for _, h := range w.digests() {
		ws = append(ws, h)
	}
	return append(ws, also...)
}

// Write queues b for every digest and writer and calls done, on another
// goroutine, once all of them have read it: b must not change until then.
func (p *Pipeline) Write(b []byte, done func()) {
	left := new(atomic.Int32)
	left.Store(int32(len(p.lanes)))
	for _, lane := range p.lanes {
		lane <- pipelineBlock{b: b, left: left, done: done}
	}
}

// Close waits until every queued block is hashed; the Writer's Sums then
// cover them all.
func (p *Pipeline) Close() {
	for _, lane := range p.lanes {
		close(lane)
	}
	p.wg.Wait()
}

// Sums returns the digests of the bytes written so far; those the Writer
// does not compute stay unset.
func (w *Writer) Sums() Sums {
	var s Sums
	if w.sha1 != nil {
		s.SHA1 = hex.EncodeToString(w.sha1.Sum(nil))
	}
	if w.md5 != nil {
		s.MD5 = hex.EncodeToString(w.md5.Sum(nil))
	}
	if w.adler32 != nil {
		s.Adler32 = hex.EncodeToString(w.adler32.Sum(nil))
	}
	return s
}

// The first byte of a marshaled Writer: writerStateFormat for a Writer of
// all three digests, the states of SHA1, MD5 and ADLER32 following;
// partialStateFormat for one of some of them, a byte of their algorithms
// (algorithmBits) first, then their states in that order.
const (
	writerStateFormat  = 1
	partialStateFormat = 2
)

// algorithmBits are the bits of a partial state's algorithm byte, in the
// order of digests.
var algorithmBits = [...]struct {
	alg Algorithm
	bit byte
}{{SHA1, 1}, {MD5, 2}, {Adler32, 4}}

// MarshalBinary returns the state of the Writer's digests, so that a
// stream received in parts (a resumable upload) can be summed without
// reading back the parts already stored. The state names the digests it
// carries: restored, it computes those and no others.
func (w *Writer) MarshalBinary() ([]byte, error) {
	b := []byte{writerStateFormat}
	if algs := w.Computes(); len(algs) != len(Algorithms()) {
		b = []byte{partialStateFormat, algorithmByte(algs)}
	}
	for _, h := range w.digests() {
		state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("marshal checksum state: %w", err)
		}
		b = binary.AppendUvarint(b, uint64(len(state)))
		b = append(b, state...)
	}
	return b, nil
}

// UnmarshalBinary restores the state MarshalBinary returned, with the
// digests it carries.
func (w *Writer) UnmarshalBinary(b []byte) error {
	fresh, b, err := writerOfState(b)
	if err != nil {
		return err
	}
	for _, h := range fresh.digests() {
		n, size := binary.Uvarint(b)
		if size <= 0 || n > uint64(len(b)-size) {
			return errors.New("unmarshal checksum state: truncated")
		}
		state := b[size : size+int(n)]
		b = b[size+int(n):]
		if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
			return fmt.Errorf("unmarshal checksum state: %w", err)
		}
	}
	if len(b) != 0 {
		return errors.New("unmarshal checksum state: trailing bytes")
	}
	*w = *fresh
	return nil
}

// writerOfState returns an empty Writer of the digests marshaled state b
// carries, and the rest of b: their states.
func writerOfState(b []byte) (*Writer, []byte, error) {
	switch {
	case len(b) > 0 && b[0] == writerStateFormat:
		return NewWriter(), b[1:], nil
	case len(b) > 1 && b[0] == partialStateFormat:
		var algs []Algorithm
		for _, a := range algorithmBits {
			if b[1]&a.bit != 0 {
				algs = append(algs, a.alg)
			}
		}
		if algorithmByte(algs) != b[1] {
			return nil, nil, errors.New("unmarshal checksum state: unknown algorithm")
		}
		w, err := NewWriterOf(algs...)
		return w, b[2:], err
	}
	return nil, nil, errors.New("unmarshal checksum state: unknown format")
}

// algorithmByte is the algorithm byte of a partial state of algs.
func algorithmByte(algs []Algorithm) byte {
	var b byte
	for _, a := range algorithmBits {
		if slices.Contains(algs, a.alg) {
			b |= a.bit
		}
	}
	return b
}

// Computes lists the algorithms w computes, in the order of Algorithms.
func (w *Writer) Computes() []Algorithm {
	var algs []Algorithm
	for _, a := range [...]struct {
		alg Algorithm
		on  bool
	}{{SHA1, w.sha1 != nil}, {MD5, w.md5 != nil}, {Adler32, w.adler32 != nil}} {
		if a.on {
			algs = append(algs, a.alg)
		}
	}
	return algs
}

// digests lists the digests w computes, in the order their states are
// marshaled.
func (w *Writer) digests() []hash.Hash {
	hs := make([]hash.Hash, 0, 3)
	if w.sha1 != nil {
		hs = append(hs, w.sha1)
	}
	if w.md5 != nil {
		hs = append(hs, w.md5)
	}
	if w.adler32 != nil {
		hs = append(hs, w.adler32)
	}
	return hs
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

// Verifier computes the one digest an Expected names, for checking a part
// of a stream (a TUS Upload-Checksum) without the cost of all three.
type Verifier struct {
	want Expected
	h    hash.Hash
}

// NewVerifier returns a Verifier for e; ErrUnsupported for an algorithm the
// server does not compute.
func (e Expected) NewVerifier() (*Verifier, error) {
	var h hash.Hash
	switch e.Algorithm {
	case SHA1:
		h = sha1.New()
	case MD5:
		h = md5.New()
	case Adler32:
		h = adler32.New()
	default:
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, e.Algorithm)
	}
	return &Verifier{want: e, h: h}, nil
}

// Write feeds p to the digest. It never returns an error.
func (v *Verifier) Write(p []byte) (int, error) { return v.h.Write(p) }

// Matches reports whether the bytes written so far have the expected digest.
func (v *Verifier) Matches() bool {
	return hex.EncodeToString(v.h.Sum(nil)) == v.want.Digest
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
