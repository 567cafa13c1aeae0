package checksum

import (
	"encoding/hex"
	"strings"
	"testing"
)

func FuzzParseOCChecksum(f *testing.F) {
	for _, s := range []string{
		"SHA1:8cb2237d0679ca88db6464eac60da96345513964", "md5:827CCB0EEA8A706C4C34A16891F84E7B",
		"ADLER32:02f80100", " sha1 : ABC ", "SHA1", "CRC32:abcd", "SHA1:", "SHA1:xyz", ":", "SHA1:ab:cd",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		e, err := ParseOCChecksum(v)
		if err != nil {
			if e != (Expected{}) {
				t.Fatalf("%q: error %v with a value %+v", v, err, e)
			}
			return
		}
		switch e.Algorithm {
		case SHA1, MD5, Adler32:
		default:
			t.Fatalf("%q gave algorithm %q", v, e.Algorithm)
		}
		if _, err := hex.DecodeString(e.Digest); err != nil || e.Digest == "" || e.Digest != strings.ToLower(e.Digest) {
			t.Fatalf("%q gave digest %q", v, e.Digest)
		}
		// Matching must agree with the digest it parsed.
		sums := Sums{SHA1: e.Digest, MD5: e.Digest, Adler32: e.Digest}
		if !e.Matches(sums) {
			t.Fatalf("%q does not match its own digest", v)
		}
	})
}

// A stored checksum state may be damaged: restoring it fails or yields a
// writer that works and carries its state on unchanged.
func FuzzWriterUnmarshalBinary(f *testing.F) {
	w := NewWriter()
	empty, _ := w.MarshalBinary()
	w.Write([]byte("12345"))
	some, _ := w.MarshalBinary()
	for _, b := range [][]byte{empty, some, nil, {writerStateFormat}, some[:len(some)/2]} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, state []byte) {
		w := NewWriter()
		if err := w.UnmarshalBinary(state); err != nil {
			return
		}
		again, err := w.MarshalBinary()
		if err != nil {
			t.Fatalf("state %x restored, does not marshal: %v", state, err)
		}
		w2 := NewWriter()
		if err := w2.UnmarshalBinary(again); err != nil {
			t.Fatalf("state %x restored, its own state %x does not: %v", state, again, err)
		}
		w.Write([]byte("more"))
		w2.Write([]byte("more"))
		if w.Sums() != w2.Sums() {
			t.Fatalf("state %x: the carried state sums differently", state)
		}
	})
}
