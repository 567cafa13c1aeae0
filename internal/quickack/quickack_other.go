//go:build !linux

package quickack

// supported is false where TCP_QUICKACK does not exist: connections are
// passed through as they are.
const supported = false

func ackNow(uintptr) {}
