package davhandler

import (
	"bytes"
	"io"
)

// closeWatch passes a multipart body through and notes whether its close
// delimiter ("--" boundary "--" at the start of a line) went by.
// multipart.Reader answers io.EOF both after the close delimiter and for a
// body that ends inside a part's headers: only the first is a whole
// request, the second one cut short.
type closeWatch struct {
	r io.Reader
	// delim is the close delimiter after the line break that starts it.
	delim []byte
	// tail holds the last len(delim)-1 bytes read, for a delimiter split
	// between two reads; it starts as a line break, for a body that
	// starts with its close delimiter.
	tail []byte
	seen bool
}

func newCloseWatch(r io.Reader, boundary string) *closeWatch {
	delim := []byte("\n--" + boundary + "--")
	tail := make([]byte, 1, len(delim))
	tail[0] = '\n'
	return &closeWatch{r: r, delim: delim, tail: tail}
}

func (c *closeWatch) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if !c.seen && n > 0 {
		c.scan(p[:n])
	}
	return n, err
}

// scan looks for the delimiter in b and across the end of the bytes
// before it, in time linear in len(b).
func (c *closeWatch) scan(b []byte) {
	keep := len(c.delim) - 1
	across := append(c.tail, b[:min(len(b), keep)]...)
	if bytes.Contains(across, c.delim) || bytes.Contains(b, c.delim) {
		c.seen = true
		return
	}
	if len(b) >= keep {
		c.tail = append(c.tail[:0], b[len(b)-keep:]...)
		return
	}
	c.tail = append(c.tail[:0], across[max(0, len(across)-keep):]...)
}
