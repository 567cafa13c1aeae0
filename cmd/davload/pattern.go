package main

import "io"

// patternReader produces n pseudo-random bytes (xorshift64*) without
// holding them: the stream depends only on the seed, not on read sizes.
type patternReader struct {
	left  int64
	state uint64
	word  [8]byte
	used  int // bytes of word already returned; 8 means none left
}

func newPatternReader(n int64, seed uint64) *patternReader {
	if seed == 0 {
		seed = 0x9e3779b97f4a7c15
	}
	return &patternReader{left: n, state: seed, used: 8}
}

// patternBytes holds the first n bytes of seed's stream, for a body sent
// many times.
func patternBytes(n int64, seed uint64) []byte {
	b := make([]byte, n)
	io.ReadFull(newPatternReader(n, seed), b)
	return b
}

func (p *patternReader) next() uint64 {
	p.state ^= p.state >> 12
	p.state ^= p.state << 25
	p.state ^= p.state >> 27
	return p.state * 0x2545f4914f6cdd1d
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n := 0
	for n < len(b) && p.used < 8 { // the rest of a partly returned word
		b[n] = p.word[p.used]
		n++
		p.used++
	}
	for ; len(b)-n >= 8; n += 8 {
		v := p.next()
		b[n], b[n+1], b[n+2], b[n+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		b[n+4], b[n+5], b[n+6], b[n+7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
	}
	if n < len(b) {
		v := p.next()
		for i := range p.word {
			p.word[i] = byte(v >> (8 * i))
		}
		p.used = 0
		for n < len(b) {
			b[n] = p.word[p.used]
			n++
			p.used++
		}
	}
	p.left -= int64(n)
	return n, nil
}
