//go:build linux

package boltstore

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// dropMapped drops this process's page-table entries for the n bytes of the
// shared file mapping at addr. The file's pages stay in the page cache and
// fault back in on the next access; on a private or anonymous mapping this
// would discard data, so addr must be bbolt's read-only shared mapping.
func dropMapped(addr uintptr, n int64) error {
	if n <= 0 {
		return nil
	}
	// A raw call: the mapping is bbolt's, known here by its address only.
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, addr, uintptr(n), unix.MADV_DONTNEED)
	if errno != 0 {
		return fmt.Errorf("madvise %#x+%d: %w", addr, n, errno)
	}
	return nil
}
