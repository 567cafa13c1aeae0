package testpeer

import (
	"fmt"
	"io"
	"net"
)

// claimPort holds port against every other claim on the machine: the
// leading @ puts the socket in the abstract namespace, with no file to
// leave behind.
func claimPort(port int) (io.Closer, error) {
	l, err := net.Listen("unix", fmt.Sprintf("@davspaces-test-port-%d", port))
	if err != nil {
		return nil, fmt.Errorf("claiming port %d: %w", port, err)
	}
	return l, nil
}
