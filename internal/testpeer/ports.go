package testpeer

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// Ports. Caddy listens with SO_REUSEPORT, so a second server binding a
// port that one already serves does not fail: the kernel splits the
// connections between them. A port from the kernel (bind to :0) is free
// when asked for, but another test, or another test binary (a second copy
// of the suite beside this one), may be handed the same port before the
// first server binds it. So every port a test is given is also claimed:
// a claim is a name in Linux's abstract socket namespace, which one
// process at a time can hold, machine-wide, and which the kernel gives back
// when the holder closes it or dies.

// FreePort returns a loopback TCP port nobody listens on, claimed for t
// until t ends: no other test of any binary using FreePort gets it
// meanwhile.
func FreePort(t testing.TB) int {
	t.Helper()
	port, claim, err := claimFreePort()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { claim.Close() })
	return port
}

// HoldPort waits until t may use fixed port (a configuration that names
// it, such as Caddyfile.example's), holding it against every other test
// that holds or is given it, of this binary or another, until t ends. It
// fails t when a program outside the tests listens on the port, since a
// server there would share the test's connections.
func HoldPort(t testing.TB, port int) {
	t.Helper()
	claim, err := holdPort(port, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { claim.Close() })
}

// holdPort claims port, waiting up to patience for another test to give it
// back, and checks that no program outside the tests listens on it.
func holdPort(port int, patience time.Duration) (io.Closer, error) {
	deadline := time.Now().Add(patience)
	claim, err := claimPort(port)
	for err != nil {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("port %d stayed held by another test for %v: %w", port, patience, err)
		}
		time.Sleep(100 * time.Millisecond)
		claim, err = claimPort(port)
	}
	l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		claim.Close()
		return nil, fmt.Errorf("port %d is taken by a program outside the tests, which would share the test's connections: %w", port, err)
	}
	l.Close()
	return claim, nil
}

// claimFreePort asks the kernel for a free port until it finds one that
// no other test holds, and claims it.
func claimFreePort() (int, io.Closer, error) {
	var errs []error
	for range 20 {
		port, err := freePort()
		if err != nil {
			return 0, nil, err
		}
		claim, err := claimPort(port)
		if err == nil {
			return port, claim, nil
		}
		errs = append(errs, err)
	}
	return 0, nil, fmt.Errorf("no free port that no other test holds: %w", errors.Join(errs...))
}

// freePort returns a loopback TCP port nobody listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// hostPort joins the loopback address and port.
func hostPort(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}
