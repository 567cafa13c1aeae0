//go:build !linux

package boltstore

// dropMapped does nothing where MADV_DONTNEED is not known to keep the
// pages of a shared file mapping: the mapping then keeps what it touched,
// and the kernel takes it back when it needs memory.
func dropMapped(addr uintptr, n int64) error { return nil }
