//go:build !linux

package boltstore

import "os"

// startWriteback does nothing where there is no sync_file_range: the fsync
// at the end does all the writing, as it would anyway.
func startWriteback(f *os.File, off, n int64) {}
