package quickack

import (
	"io"
	"net"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestSplitRequestAnsweredWithoutDelayedACK plays a client with Nagle's
// algorithm on that writes a request's headers and body apart, as the
// desktop clients do: the body waits until the headers are acknowledged.
// Through Wrap, the round trip no longer includes the kernel's 40 ms
// delayed ACK.
func TestSplitRequestAnsweredWithoutDelayedACK(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("TCP_QUICKACK is Linux only")
	}
	plain := medianRoundTrip(t, false)
	wrapped := medianRoundTrip(t, true)
	t.Logf("median round trip: %v plain, %v wrapped", plain, wrapped)
	if wrapped >= 20*time.Millisecond {
		t.Errorf("median round trip through Wrap is %v, want well under the 40 ms delayed ACK (plain: %v)", wrapped, plain)
	}
}

const (
	headerSize = 600
	bodySize   = 4096
	rounds     = 15
)

// medianRoundTrip serves a one-byte answer per request of headerSize+bodySize
// bytes and returns the median time a Nagle client waits for it.
func medianRoundTrip(t *testing.T, wrap bool) time.Duration {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if wrap {
		l = Wrap(l)
	}
	go serveOneByteAnswers(l)

	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.(*net.TCPConn).SetNoDelay(false); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	header, body, answer := make([]byte, headerSize), make([]byte, bodySize), make([]byte, 1)
	var times []time.Duration
	for range rounds {
		start := time.Now()
		if _, err := c.Write(header); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // the client preparing its body
		if _, err := c.Write(body); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, answer); err != nil {
			t.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return times[len(times)/2]
}

func serveOneByteAnswers(l net.Listener) {
	c, err := l.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	request := make([]byte, headerSize+bodySize)
	for {
		if _, err := io.ReadFull(c, request); err != nil {
			return
		}
		if _, err := c.Write([]byte{1}); err != nil {
			return
		}
	}
}
