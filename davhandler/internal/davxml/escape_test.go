package davxml

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWriteXMLText(t *testing.T) {
	tests := []struct{ in, text, attr string }{
		{"plain", "plain", "plain"},
		{`a&b<c>"d'`, `a&amp;b&lt;c&gt;"d'`, `a&amp;b&lt;c&gt;&quot;d'`},
		{"t\tn\nr\r", "t\tn\nr&#xD;", "t&#x9;n&#xA;r&#xD;"},
		{"ü€😀", "ü€😀", "ü€😀"},
		{"\uFFFE\uFFFF", "\uFFFD\uFFFD", "\uFFFD\uFFFD"},
		{"nul\x00bel\x07", "nul\uFFFDbel\uFFFD", "nul\uFFFDbel\uFFFD"},
		{"bad\xffutf8\xed\xa0\x80", "bad\uFFFDutf8\uFFFD\uFFFD\uFFFD", "bad\uFFFDutf8\uFFFD\uFFFD\uFFFD"},
	}
	for _, tt := range tests {
		var text, attr strings.Builder
		WriteText(&text, tt.in)
		WriteAttr(&attr, tt.in)
		if text.String() != tt.text || attr.String() != tt.attr {
			t.Errorf("%q: text %q, attribute %q; want %q, %q", tt.in, text.String(), attr.String(), tt.text, tt.attr)
		}
		if appended := AppendText([]byte("<"), tt.in); string(appended) != "<"+tt.text {
			t.Errorf("%q: appended as text %q; want %q", tt.in, appended, "<"+tt.text)
		}
		wantReadBack(t, tt.in, text.String(), attr.String())
	}
}

// wantReadBack checks that a parser reads the escaped forms of in back as in,
// with the characters XML cannot carry replaced.
func wantReadBack(t testing.TB, in, text, attr string) {
	t.Helper()
	var doc struct {
		A    string `xml:"a,attr"`
		Text string `xml:",chardata"`
	}
	if err := xml.Unmarshal([]byte(`<e a="`+attr+`">`+text+`</e>`), &doc); err != nil {
		t.Fatalf("%q: escaped forms do not parse: %v", in, err)
	}
	// Ranging over invalid UTF-8 yields U+FFFD for each bad byte.
	want := strings.Map(func(r rune) rune {
		if !IsChar(r) {
			return '\uFFFD'
		}
		return r
	}, in)
	if doc.Text != want || doc.A != want {
		t.Fatalf("%q read back as text %q, attribute %q", in, doc.Text, doc.A)
	}
}

func TestWriteXMLMarkup(t *testing.T) {
	var b strings.Builder
	WriteMarkup(&b, "<a x=\"\uFFFF\">&amp;\uFFFE\x01\xff</a>")
	if want := "<a x=\"\uFFFD\">&amp;\uFFFD\uFFFD\uFFFD</a>"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	if appended := AppendMarkup(nil, "<a x=\"\uFFFF\">&amp;\uFFFE\x01\xff</a>"); b.String() != string(appended) {
		t.Fatalf("appended %q, written %q", appended, b.String())
	}
}

// TestPlainWordsAgreeWithTable puts each byte value at each place of a run
// of plain text: the 8-byte check must stop at the word holding a byte the
// table does not call plain, and only there.
func TestPlainWordsAgreeWithTable(t *testing.T) {
	for ctx := inText; ctx <= inMarkup; ctx++ {
		for c := range 256 {
			for at := range 24 {
				b := []byte(strings.Repeat("0123456789abcdef-$!", 2)[:24])
				b[at] = byte(c)
				s := string(b)
				want := 0
				for want+8 <= len(s) && plainByTable(s[want:want+8], ctx) {
					want += 8
				}
				if got := plainWords(s, ctx); got != want {
					t.Fatalf("context %d, byte %#x at %d: %d plain bytes, want %d", ctx, c, at, got, want)
				}
			}
		}
	}
}

// plainByTable reports whether every byte of s is plain in ctx by the table.
func plainByTable(s string, ctx xmlContext) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || !plainASCII[ctx][s[i]] {
			return false
		}
	}
	return true
}

// BenchmarkAppendXMLText escapes what a listing escapes most: ids and
// checksums, which need nothing.
func BenchmarkAppendXMLText(b *testing.B) {
	id := "ce73cae2-f6c1-405a-9bb9-f5568ad3b4f0"
	sha1 := "017e7e51e17f70b813f2512ac947d07bc6f69a7a"
	buf := make([]byte, 0, 256)
	b.SetBytes(int64(len(id) + len(sha1)))
	for b.Loop() {
		buf = AppendText(AppendText(buf[:0], id), sha1)
	}
}

func FuzzWriteXMLText(f *testing.F) {
	for _, s := range []string{"plain", `a&b<c>"d'`, "t\tn\nr\r", "\uFFFE\uFFFF\x00", "bad\xff\xed\xa0\x80", "]]>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var text, attr strings.Builder
		WriteText(&text, s)
		WriteAttr(&attr, s)
		wantReadBack(t, s, text.String(), attr.String())
	})
}
