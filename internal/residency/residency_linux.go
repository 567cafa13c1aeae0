//go:build linux

package residency

import "golang.org/x/sys/unix"

const supported = true

// dropPages drops the page-table entries of n bytes at addr. On a private
// file mapping this discards the process's own copies of pages it wrote,
// so addr must be a mapping that is not writable: there, every page is
// the file's and faults back unchanged.
func dropPages(addr, n uintptr) error {
	// A raw call: the mapping is the loader's, known by its address only.
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, addr, n, unix.MADV_DONTNEED)
	if errno != 0 {
		return errno
	}
	return nil
}
