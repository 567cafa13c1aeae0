package davhandler

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestCloseWatch: the close delimiter is seen wherever the reads split it,
// and only at the start of a line.
func TestCloseWatch(t *testing.T) {
	const b = "bnd"
	for _, tc := range []struct {
		name, body string
		seen       bool
	}{
		{"closed", "--bnd\r\nX: 1\r\n\r\nbody\r\n--bnd--\r\n", true},
		{"closed without a line end", "--bnd\r\n\r\nbody\r\n--bnd--", true},
		{"closed with an epilogue", "--bnd\r\n\r\nbody\r\n--bnd--\r\nepilogue", true},
		{"only the close delimiter", "--bnd--", true},
		{"line feeds only", "--bnd\n\nbody\n--bnd--\n", true},
		{"cut in a header", "--bnd\r\nX-File-Path: /a", false},
		{"cut after a boundary", "--bnd\r\n", false},
		{"a delimiter inside a line", "--bnd\r\nX: a--bnd--\r\n", false},
		{"another boundary's close", "--bnd\r\n\r\nx\r\n--bndx--", false},
		{"empty", "", false},
	} {
		for _, rd := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{
			{"whole", func(r io.Reader) io.Reader { return r }},
			{"byte by byte", iotest.OneByteReader},
			{"halves", iotest.HalfReader},
		} {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				w := newCloseWatch(rd.wrap(strings.NewReader(tc.body)), b)
				if _, err := io.Copy(io.Discard, w); err != nil {
					t.Fatal(err)
				}
				if w.seen != tc.seen {
					t.Fatalf("seen %v, want %v", w.seen, tc.seen)
				}
			})
		}
	}
}
