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
