package checksum

import (
	"errors"
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
