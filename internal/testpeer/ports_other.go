//go:build !linux

package testpeer

import "io"

// claimPort claims nothing outside Linux, which alone has the abstract
// socket namespace: there two tests may rarely be given one port.
func claimPort(int) (io.Closer, error) { return io.NopCloser(nil), nil }
