//go:build linux

package boltstore

import "syscall"

// snapshotReadFlag opens the database file for a snapshot past the page
// cache. Read through the cache, a snapshot's one sequential pass leaves
// the whole file there in large folios, read ahead, and each later fault
// of the server's mapping on any page of one maps all of it: after a
// backup the server's resident mapping grew by megabytes per page it
// touched.
const snapshotReadFlag = syscall.O_DIRECT
