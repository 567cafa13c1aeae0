package testpeer

import (
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestFreePortIsClaimedUntilTheTestEnds: a port FreePort gave a test is
// held against every other claim (another test, another test binary) until
// that test ends, and is free to claim again afterwards.
func TestFreePortIsClaimedUntilTheTestEnds(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("claims need Linux's abstract sockets")
	}
	var port int
	t.Run("holder", func(t *testing.T) {
		port = FreePort(t)
		if _, err := claimPort(port); err == nil {
			t.Fatalf("port %d given by FreePort could be claimed again", port)
		}
		if other := FreePort(t); other == port {
			t.Fatalf("FreePort gave port %d twice", port)
		}
	})
	claim, err := claimPort(port)
	if err != nil {
		t.Fatalf("port %d still held after its test ended: %v", port, err)
	}
	claim.Close()
}

// TestHoldPortWaitsForTheHolder: a fixed port held by another test is
// waited for; one a program outside the tests listens on is refused, since
// Caddy (SO_REUSEPORT) would share its connections with that program.
func TestHoldPortWaitsForTheHolder(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("claims need Linux's abstract sockets")
	}
	port, claim, err := claimFreePort()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holdPort(port, 200*time.Millisecond); err == nil {
		t.Fatalf("port %d held by another test was given again", port)
	}
	time.AfterFunc(300*time.Millisecond, func() { claim.Close() })
	held, err := holdPort(port, time.Minute)
	if err != nil {
		t.Fatalf("port %d once given back: %v", port, err)
	}
	held.Close()

	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if held, err := holdPort(port, time.Minute); err == nil {
		held.Close()
		t.Fatalf("port %d, which a program outside the tests listens on, was given", port)
	}
}
