//go:build !davspaces_nosync

package boltstore

// benchNoSync is false in every build but the bench's (nosync_bench.go):
// the store fsyncs unless its options say otherwise.
const benchNoSync = false
