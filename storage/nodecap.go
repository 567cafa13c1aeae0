package storage

import "fmt"

// Every record a member makes the server keep in a space, however small,
// is a node the space counts (Usage.Nodes): its files and folders, the
// nodes of its trash, and the versions of its files. Their bytes take
// quota; their records do not, so that a 10 MB folder reads 10 MB used.
// The records are bounded instead by a node cap that scales with the
// quota, so that a space's metadata stays a fixed share of what its quota
// lets it keep, and by a setting where a space has no quota.
const (
	// QuotaBytesPerNode is how much quota buys a space one node.
	QuotaBytesPerNode = 4 << 10
	// MinNodeCap is the fewest nodes a space with a quota may hold,
	// however small its quota: a small quota still holds a small tree.
	MinNodeCap = 1000
	// DefaultMaxNodes is the node cap of a space without a quota when the
	// store is not told another.
	DefaultMaxNodes = 1_000_000
)

// ErrTooManyNodes: the space holds as many nodes as its node cap allows.
// It is an ErrInsufficientStorage, as a full quota is: the member must
// delete, or empty the trash, first.
var ErrTooManyNodes = fmt.Errorf("%w: too many files, folders, trash entries and versions", ErrInsufficientStorage)

// NodeCap returns how many nodes a space with quota (negative: none) may
// hold: one per QuotaBytesPerNode of its quota and at least MinNodeCap, or
// maxNodes without a quota (DefaultMaxNodes when it is not positive).
func NodeCap(quota, maxNodes int64) int64 {
	if quota >= 0 {
		return max(quota/QuotaBytesPerNode, MinNodeCap)
	}
	if maxNodes <= 0 {
		return DefaultMaxNodes
	}
	return maxNodes
}

// CheckNodes fails with ErrTooManyNodes when a space holding nodes cannot
// hold delta more under limit. A change that adds no node passes, even in
// a space over its cap (a quota lowered below what it keeps).
func CheckNodes(nodes, limit, delta int64) error {
	if delta > 0 && nodes+delta > limit {
		return fmt.Errorf("%d of %d nodes, %d more: %w", nodes, limit, delta, ErrTooManyNodes)
	}
	return nil
}
