package quickack

import "golang.org/x/sys/unix"

const supported = true

// ackNow sends any delayed ACK now and leaves delayed-ACK mode until the
// kernel enters it again.
func ackNow(fd uintptr) {
	_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
}
