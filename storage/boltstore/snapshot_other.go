//go:build !linux

package boltstore

// snapshotReadFlag: elsewhere a snapshot reads through the page cache.
const snapshotReadFlag = 0
