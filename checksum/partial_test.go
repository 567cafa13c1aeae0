package checksum

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

// The digests of "12345".
var sums12345 = Sums{SHA1: "8cb2237d0679ca88db6464eac60da96345513964", MD5: "827ccb0eea8a706c4c34a16891f84e7b", Adler32: "02f80100"}

func TestWriterOfComputesOnlyItsDigests(t *testing.T) {
	tests := []struct {
		algs []Algorithm
		want Sums
	}{
		{nil, Sums{}},
		{[]Algorithm{SHA1}, Sums{SHA1: sums12345.SHA1}},
		{[]Algorithm{MD5}, Sums{MD5: sums12345.MD5}},
		{[]Algorithm{Adler32}, Sums{Adler32: sums12345.Adler32}},
		{[]Algorithm{MD5, Adler32}, Sums{MD5: sums12345.MD5, Adler32: sums12345.Adler32}},
		{Algorithms(), sums12345},
	}
	for _, tt := range tests {
		w, err := NewWriterOf(tt.algs...)
		if err != nil {
			t.Fatal(err)
		}
		// A write past parallelMin takes the parallel path.
		big := bytes.Repeat([]byte("x"), parallelMin)
		w.Write([]byte("12345"))
		if got := w.Sums(); got != tt.want {
			t.Errorf("NewWriterOf(%v) sums %+v, want %+v", tt.algs, got, tt.want)
		}
		w.Write(big)
		full, _ := Compute(strings.NewReader("12345"+string(big)), Algorithms()...)
		for _, alg := range tt.algs {
			got, _ := w.Sums().Get(alg)
			if want, _ := full.Get(alg); got != want {
				t.Errorf("NewWriterOf(%v) after a large write: %s %s, want %s", tt.algs, alg, got, want)
			}
		}
	}
	if _, err := NewWriterOf("CRC32"); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("NewWriterOf(CRC32): %v, want ErrUnsupported", err)
	}
}

// A Writer of some digests carries them, and only them, from part to part:
// a resumed upload computes the same digests it started with.
func TestPartialWriterMarshalsItsDigests(t *testing.T) {
	for _, algs := range [][]Algorithm{nil, {SHA1}, {MD5}, {Adler32}, {SHA1, Adler32}, Algorithms()} {
		w, _ := NewWriterOf(algs...)
		w.Write([]byte("123"))
		state, err := w.MarshalBinary()
		if err != nil {
			t.Fatalf("%v: MarshalBinary: %v", algs, err)
		}
		resumed := NewWriter()
		if err := resumed.UnmarshalBinary(state); err != nil {
			t.Fatalf("%v: UnmarshalBinary: %v", algs, err)
		}
		if got := resumed.Computes(); !slices.Equal(got, algs) {
			t.Fatalf("%v: resumed writer computes %v", algs, got)
		}
		resumed.Write([]byte("45"))
		want, _ := Compute(strings.NewReader("12345"), algs...)
		if got := resumed.Sums(); got != want {
			t.Fatalf("%v: resumed sums %+v, want %+v", algs, got, want)
		}
	}
	if err := NewWriter().UnmarshalBinary([]byte{partialStateFormat, 8}); err == nil {
		t.Fatal("a state of an unknown algorithm was accepted")
	}
}

func TestComputeMatchesWriter(t *testing.T) {
	got, err := Compute(strings.NewReader("12345"), Algorithms()...)
	if err != nil || got != sums12345 {
		t.Fatalf("Compute: %+v, %v; want %+v", got, err, sums12345)
	}
	got, err = Compute(strings.NewReader("12345"), Adler32)
	if err != nil || got != (Sums{Adler32: sums12345.Adler32}) {
		t.Fatalf("Compute(ADLER32): %+v, %v", got, err)
	}
}

func TestPartialSums(t *testing.T) {
	md5Only := Sums{MD5: sums12345.MD5}
	tests := []struct {
		name     string
		s        Sums
		str      string
		missing  []Algorithm
		complete bool
		first    Algorithm
	}{
		{"none", Sums{}, "", Algorithms(), false, ""},
		{"md5", md5Only, "MD5:" + sums12345.MD5, []Algorithm{SHA1, Adler32}, false, MD5},
		{"adler32", Sums{Adler32: "02f80100"}, "ADLER32:02f80100", []Algorithm{SHA1, MD5}, false, Adler32},
		{"all", sums12345, "SHA1:" + sums12345.SHA1 + " MD5:" + sums12345.MD5 + " ADLER32:02f80100", nil, true, SHA1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.String(); got != tt.str {
				t.Errorf("String %q, want %q", got, tt.str)
			}
			if got := tt.s.Missing(); !slices.Equal(got, tt.missing) {
				t.Errorf("Missing %v, want %v", got, tt.missing)
			}
			if got := tt.s.Complete(); got != tt.complete {
				t.Errorf("Complete %v, want %v", got, tt.complete)
			}
			alg, d, ok := tt.s.First()
			if want, _ := tt.s.Get(tt.first); alg != tt.first || ok != (tt.first != "") || d != want {
				t.Errorf("First %s %s %v, want %s", alg, d, ok, tt.first)
			}
		})
	}
	if got := md5Only.Merge(sums12345); got != sums12345 {
		t.Fatalf("Merge %+v, want %+v", got, sums12345)
	}
	if got := (Sums{MD5: "kept"}).Merge(sums12345); got.MD5 != "kept" {
		t.Fatalf("Merge replaced a known digest: %+v", got)
	}
}
