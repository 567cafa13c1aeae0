//go:build unix

package boltstore

import "golang.org/x/sys/unix"

// diskFree returns the bytes an unprivileged writer may still put on the
// file system holding dir, and whether it could be measured.
func diskFree(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true //nolint:unconvert // field types differ by platform
}
