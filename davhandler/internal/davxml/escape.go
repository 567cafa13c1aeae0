package davxml

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Builder is a strings.Builder with XML text escaping.
type Builder struct{ strings.Builder }

// Text writes s escaped as XML character data.
func (b *Builder) Text(s string) { WriteText(b, s) }

// IsChar reports whether XML 1.0 (§2.2 Char) can carry r at all, escaped
// or not.
func IsChar(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r < 0x20:
		return false
	case r <= 0xD7FF:
		return true
	case r < 0xE000:
		return false // surrogates
	case r <= 0xFFFD:
		return true
	case r < 0x10000:
		return false // U+FFFE, U+FFFF
	}
	return r <= utf8.MaxRune
}

// xmlContext is where escaped text goes; each needs its own escapes.
type xmlContext int

const (
	// inText is character data: markup characters are escaped, and a
	// carriage return, which parsers would turn into a line feed.
	inText xmlContext = iota
	// inAttribute is a value in double quotes: also the quote, and the tab
	// and line feed, which parsers would turn into spaces.
	inAttribute
	// inMarkup is text that is already XML: only characters XML cannot
	// carry are replaced.
	inMarkup
)

// WriteText writes s as XML character data.
func WriteText(w io.StringWriter, s string) { writeXML(w, s, inText) }

// WriteAttr writes s as an attribute value in double quotes.
func WriteAttr(w io.StringWriter, s string) { writeXML(w, s, inAttribute) }

// WriteMarkup writes s, which is already XML.
func WriteMarkup(w io.StringWriter, s string) { writeXML(w, s, inMarkup) }

// AppendText appends s as XML character data to dst.
func AppendText(dst []byte, s string) []byte { return appendXML(dst, s, inText) }

// AppendMarkup appends s, which is already XML, to dst.
func AppendMarkup(dst []byte, s string) []byte { return appendXML(dst, s, inMarkup) }

// writeXML writes s for the context ctx without copying it, and replaces
// invalid UTF-8 and characters XML cannot carry with U+FFFD, as
// encoding/xml does. Replacing rather than refusing keeps a streamed
// multistatus readable: its status is sent before the text is, so refusing
// could only cut the document short for every reader. Names holding such
// characters are refused on the way in; this guards whatever got in
// otherwise.
func writeXML(w io.StringWriter, s string, ctx xmlContext) {
	for s != "" {
		plain, esc, rest := nextEscape(s, ctx)
		w.WriteString(plain)
		w.WriteString(esc)
		s = rest
	}
}

// appendXML is writeXML appending to dst, for values computed into one
// buffer.
func appendXML(dst []byte, s string, ctx xmlContext) []byte {
	for s != "" {
		plain, esc, rest := nextEscape(s, ctx)
		dst = append(dst, plain...)
		dst = append(dst, esc...)
		s = rest
	}
	return dst
}

// nextEscape is the one XML escaper: it splits s into the plain text up to
// the first character that needs replacing in ctx, that character's
// replacement ("" when there is none) and the rest.
func nextEscape(s string, ctx xmlContext) (plain, esc, rest string) {
	safe := &plainASCII[ctx]
	for i := plainWords(s, ctx); i < len(s); {
		if c := s[i]; c < utf8.RuneSelf && safe[c] {
			// Most text is ASCII that needs nothing: no rune decoding.
			i++
			continue
		}
		r, width := utf8.DecodeRuneInString(s[i:])
		switch {
		case (r == utf8.RuneError && width == 1) || !IsChar(r):
			esc = "\uFFFD"
		case ctx != inMarkup:
			esc = escapeFor(r, ctx)
		}
		if esc != "" {
			return s[:i], esc, s[i+width:]
		}
		i += width
	}
	return s, "", ""
}

// plainWords returns how many bytes at the start of s, a multiple of 8,
// are plain ASCII in ctx, as plainASCII tells. It looks at 8 bytes at a
// time: ids, etags and checksums, most of a listing's text, are long runs
// of bytes that need nothing, and the table took a lookup and a branch
// for each, which showed in a listing's profile.
func plainWords(s string, ctx xmlContext) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := loadWord(s[i : i+8])
		// The checks of "Bit Twiddling Hacks" (hasless, haszero), which
		// tell exactly whether any byte matches: a byte that is not
		// ASCII or is below 0x20, and in text or attributes one
		// escaped there.
		bad := x&wordHighs | (x-wordOnes*0x20)&^x&wordHighs
		if ctx != inMarkup {
			bad |= hasByte(x, '&') | hasByte(x, '<') | hasByte(x, '>')
			if ctx == inAttribute {
				bad |= hasByte(x, '"')
			}
		}
		if bad != 0 {
			break
		}
	}
	return i
}

// loadWord reads 8 bytes as one little-endian word (a single load once
// compiled).
func loadWord(b string) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// Constants of the word checks: a byte of ones, and each byte's high bit.
const (
	wordOnes  = 0x0101010101010101
	wordHighs = 0x8080808080808080
)

// hasByte is non-zero when a byte of x, all of them ASCII, is c.
func hasByte(x uint64, c byte) uint64 {
	v := x ^ (wordOnes * uint64(c))
	return (v - wordOnes) &^ v & wordHighs
}

// plainASCII tells, for each context, the ASCII bytes written as they are:
// a table, because escaping runs over every byte of a listing. It errs
// towards false, leaving the decision to the full check. It is never
// changed.
var plainASCII = [inMarkup + 1][utf8.RuneSelf]bool{
	inText:      plainBytes(func(c byte) bool { return c != '&' && c != '<' && c != '>' }),
	inAttribute: plainBytes(func(c byte) bool { return c != '&' && c != '<' && c != '>' && c != '"' }),
	inMarkup:    plainBytes(func(byte) bool { return true }),
}

// plainBytes is the table of printable ASCII bytes for which plain holds;
// control characters are always left to the full check.
func plainBytes(plain func(c byte) bool) (t [utf8.RuneSelf]bool) {
	for c := byte(0x20); c < utf8.RuneSelf; c++ {
		t[c] = plain(c)
	}
	return t
}

// escapeFor returns the reference r needs in text or an attribute, or "".
func escapeFor(r rune, ctx xmlContext) string {
	switch r {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	case '\r':
		return "&#xD;"
	}
	if ctx != inAttribute {
		return ""
	}
	switch r {
	case '"':
		return "&quot;"
	case '\t':
		return "&#x9;"
	case '\n':
		return "&#xA;"
	}
	return ""
}
