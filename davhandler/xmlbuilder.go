package davhandler

import (
	"io"
	"strings"
	"unicode/utf8"
)

// xmlBuilder is a strings.Builder with XML text escaping.
type xmlBuilder struct{ strings.Builder }

// text writes s escaped as XML character data.
func (b *xmlBuilder) text(s string) { writeXMLText(b, s) }

// isXMLChar reports whether XML 1.0 (§2.2 Char) can carry r at all, escaped
// or not.
func isXMLChar(r rune) bool {
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

// writeXMLText writes s as XML character data.
func writeXMLText(w io.StringWriter, s string) { writeXML(w, s, inText) }

// writeXMLAttr writes s as an attribute value in double quotes.
func writeXMLAttr(w io.StringWriter, s string) { writeXML(w, s, inAttribute) }

// writeXMLMarkup writes s, which is already XML.
func writeXMLMarkup(w io.StringWriter, s string) { writeXML(w, s, inMarkup) }

// appendXMLText appends s as XML character data to dst.
func appendXMLText(dst []byte, s string) []byte { return appendXML(dst, s, inText) }

// appendXMLMarkup appends s, which is already XML, to dst.
func appendXMLMarkup(dst []byte, s string) []byte { return appendXML(dst, s, inMarkup) }

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
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf && safe[c] {
			// Most text is ASCII that needs nothing: no rune decoding.
			i++
			continue
		}
		r, width := utf8.DecodeRuneInString(s[i:])
		switch {
		case (r == utf8.RuneError && width == 1) || !isXMLChar(r):
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
