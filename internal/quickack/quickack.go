// Package quickack makes a TCP listener's connections acknowledge what they
// read at once instead of after the kernel's delayed-ACK timer.
//
// Clients that leave Nagle's algorithm on (the Qt network stack of the
// ownCloud and Nextcloud desktop clients does, over TLS) write a request's
// headers and its small body as two segments and hold the second until the
// first is acknowledged. The server has nothing to send before it has the
// body, so Linux delays that ACK by its minimum of 40 ms: every small upload
// waits 40 ms on the wire, whatever the server does. Acknowledging after
// each read removes the wait; the kernel leaves quick-ACK mode by itself
// again after a reply, so the option is set anew after every read.
package quickack

import (
	"net"
	"syscall"
)

// Wrap returns l with connections that acknowledge every read at once. A
// connection that is not TCP is passed through unchanged.
func Wrap(l net.Listener) net.Listener {
	return listener{l}
}

type listener struct{ net.Listener }

func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	tcp, ok := c.(*net.TCPConn)
	if !ok || !supported {
		return c, nil
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		return c, nil
	}
	return &conn{TCPConn: tcp, raw: raw}, nil
}

// conn is a TCP connection that acknowledges what it reads immediately.
type conn struct {
	*net.TCPConn
	raw syscall.RawConn
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	if n > 0 {
		// A failure only leaves the kernel's own ACK timing in place.
		_ = c.raw.Control(ackNow)
	}
	return n, err
}
