package checksum

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"errors"
	"fmt"
	"hash/adler32"
	"strings"
	"testing"
)

func TestWriterSums(t *testing.T) {
	w := NewWriter()
	for _, part := range []string{"12", "345"} {
		w.Write([]byte(part))
	}
	want := "SHA1:8cb2237d0679ca88db6464eac60da96345513964 MD5:827ccb0eea8a706c4c34a16891f84e7b ADLER32:02f80100"
	if got := w.Sums().String(); got != want {
		t.Fatalf("sums %s, want %s", got, want)
	}
	if (Sums{}).String() != "" {
		t.Fatal("empty sums must format as empty")
	}
}

func TestParseOCChecksum(t *testing.T) {
	sums := Sums{SHA1: "8cb2237d0679ca88db6464eac60da96345513964", MD5: "827ccb0eea8a706c4c34a16891f84e7b", Adler32: "02f80100"}
	tests := []struct {
		header  string
		match   bool
		wantErr string
	}{
		{"SHA1:8cb2237d0679ca88db6464eac60da96345513964", true, ""},
		{"sha1:8CB2237D0679CA88DB6464EAC60DA96345513964", true, ""},
		{"MD5:827ccb0eea8a706c4c34a16891f84e7b", true, ""},
		{"ADLER32:02f80100", true, ""},
		{"ADLER32:02f80101", false, ""},
		{"CRC32:02f80100", false, "unsupported"},
		{"SHA1", false, "malformed"},
		{"SHA1:xyz", false, "malformed"},
		{"SHA1:", false, "malformed"},
		{"SHA1:ab", false, "malformed"},
		{"MD5:8cb2237d0679ca88db6464eac60da96345513964", false, "malformed"},
		{"ADLER32:2f80100", false, "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			e, err := ParseOCChecksum(tt.header)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if tt.wantErr == "unsupported" && !errors.Is(err, ErrUnsupported) {
					t.Fatalf("err %v is not ErrUnsupported", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Matches(sums) != tt.match {
				t.Fatalf("Matches = %v, want %v", !tt.match, tt.match)
			}
		})
	}
}

// TestWriterLargeWrites checks that writes large enough to be hashed in
// parallel give the digests of the standard library hashes, across a carried
// state too.
func TestWriterLargeWrites(t *testing.T) {
	data := make([]byte, 3*parallelMin+7)
	for i := range data {
		data[i] = byte(i * 7)
	}
	want := Sums{
		SHA1:    fmt.Sprintf("%x", sha1.Sum(data)),
		MD5:     fmt.Sprintf("%x", md5.Sum(data)),
		Adler32: fmt.Sprintf("%08x", adler32.Checksum(data)),
	}
	w := NewWriter()
	w.Write(data[:parallelMin+3])
	state, err := w.MarshalBinary()
	if err != nil {
		t.Fatalf("MarshalBinary: %v", err)
	}
	w = NewWriter()
	if err := w.UnmarshalBinary(state); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	w.Write(data[parallelMin+3 : parallelMin+10])
	w.Write(data[parallelMin+10:])
	if got := w.Sums(); got != want {
		t.Fatalf("sums %v, want %v", got, want)
	}
}

func TestWriterStateRoundTrip(t *testing.T) {
	whole := NewWriter()
	whole.Write([]byte("12345"))
	tests := []struct {
		name  string
		parts []string
	}{
		{"empty first part", []string{"", "12345"}},
		{"split", []string{"12", "345"}},
		{"byte by byte", []string{"1", "2", "3", "4", "5"}},
		{"all at once", []string{"12345"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var state []byte
			for i, part := range tt.parts {
				w := NewWriter()
				if i > 0 {
					if err := w.UnmarshalBinary(state); err != nil {
						t.Fatalf("UnmarshalBinary: %v", err)
					}
				}
				w.Write([]byte(part))
				var err error
				if state, err = w.MarshalBinary(); err != nil {
					t.Fatalf("MarshalBinary: %v", err)
				}
			}
			w := NewWriter()
			if err := w.UnmarshalBinary(state); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			if w.Sums() != whole.Sums() {
				t.Fatalf("sums %v, want %v", w.Sums(), whole.Sums())
			}
		})
	}
}

func TestWriterUnmarshalRejectsDamage(t *testing.T) {
	good, err := NewWriter().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string][]byte{
		"empty":          nil,
		"unknown format": append([]byte{9}, good[1:]...),
		"truncated":      good[:len(good)-1],
		"trailing":       append(append([]byte{}, good...), 0),
		"huge length":    {writerStateFormat, 0xff, 0xff, 0xff, 0xff, 0x0f},
	}
	for name, state := range tests {
		t.Run(name, func(t *testing.T) {
			w := NewWriter()
			w.Write([]byte("kept"))
			before := w.Sums()
			if err := w.UnmarshalBinary(state); err == nil {
				t.Fatal("damaged state accepted")
			}
			if w.Sums() != before {
				t.Fatal("a failed UnmarshalBinary changed the writer")
			}
		})
	}
}

func TestVerifier(t *testing.T) {
	tests := []struct {
		header string
		match  bool
	}{
		{"SHA1:8cb2237d0679ca88db6464eac60da96345513964", true},
		{"MD5:827ccb0eea8a706c4c34a16891f84e7b", true},
		{"ADLER32:02f80100", true},
		{"ADLER32:02f80101", false},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			e, err := ParseOCChecksum(tt.header)
			if err != nil {
				t.Fatal(err)
			}
			v, err := e.NewVerifier()
			if err != nil {
				t.Fatal(err)
			}
			v.Write([]byte("12"))
			v.Write([]byte("345"))
			if v.Matches() != tt.match {
				t.Fatalf("Matches = %v, want %v", !tt.match, tt.match)
			}
		})
	}
	if _, err := (Expected{Algorithm: "CRC32"}).NewVerifier(); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("CRC32 verifier: err %v, want ErrUnsupported", err)
	}
}

// TestPipeline: blocks fed through a Pipeline give the sums of writing
// them in order, every extra writer gets the same bytes, and done is
// called once per block, after every digest has read it.
func TestPipeline(t *testing.T) {
	tests := []struct {
		name   string
		blocks []int // block sizes
		depth  int
	}{
		{"no block", nil, 2},
		{"one small block", []int{5}, 1},
		{"more blocks than the queue holds", []int{1, 64 << 10, 3, 100 << 10, 0, 7}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var all []byte
			for i, size := range tt.blocks {
				all = append(all, bytes.Repeat([]byte{byte('a' + i)}, size)...)
			}
			want := NewWriter()
			want.Write(all)
			w := NewWriter()
			var copied bytes.Buffer
			p := w.Pipeline(tt.depth, &copied)
			done := make(chan int, len(tt.blocks))
			off := 0
			for i, size := range tt.blocks {
				p.Write(all[off:off+size], func() { done <- i })
				off += size
			}
			p.Close()
			if w.Sums() != want.Sums() {
				t.Fatalf("sums %v, want %v", w.Sums(), want.Sums())
			}
			if !bytes.Equal(copied.Bytes(), all) {
				t.Fatalf("the extra writer got %d bytes, want %d", copied.Len(), len(all))
			}
			close(done)
			seen := map[int]bool{}
			for i := range done {
				if seen[i] {
					t.Fatalf("done called twice for block %d", i)
				}
				seen[i] = true
			}
			if len(seen) != len(tt.blocks) {
				t.Fatalf("done called for %d blocks, want %d", len(seen), len(tt.blocks))
			}
		})
	}
}
