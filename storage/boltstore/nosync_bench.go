//go:build davspaces_nosync

package boltstore

// benchNoSync makes every store of this build skip every fsync, whatever
// its options say. Only scripts/bench -nosync builds with this tag: its
// "nosync" server is davspaces without durability, so that one run shows
// what fsync costs each workload beside how davspaces compares with peers
// that do not fsync. A server built so can lose acknowledged writes.
const benchNoSync = true
