package storage

import "fmt"

// Refusals of a change to the tree that no lookup can lift.
var (
	// ErrRootMove: a space's root stays where it is.
	ErrRootMove = fmt.Errorf("the space root cannot be moved: %w", ErrInvalid)
	// ErrRootRemove: a space's root lives as long as its space.
	ErrRootRemove = fmt.Errorf("the space root cannot be removed: %w", ErrInvalid)
	// ErrDestinationInsideSource: a folder cannot be moved or copied
	// below itself.
	ErrDestinationInsideSource = fmt.Errorf("destination is inside the source: %w", ErrConflict)
	// ErrDestinationContainsSource: replacing an ancestor of the source
	// would remove the source.
	ErrDestinationContainsSource = fmt.Errorf("destination contains the source: %w", ErrConflict)
)

// TargetExists is the refusal of a COPY or MOVE without Overwrite onto an
// existing name: an ErrExists.
func TargetExists(name string) error {
	return fmt.Errorf("%q: %w", name, ErrExists)
}

// TransferLookups are what CheckTransfer reads of a space's tree. Each is
// called only when its answer matters, so that a store looks up no more
// than the rule needs.
type TransferLookups struct {
	// Target returns the node at the destination name, and whether there
	// is one.
	Target func() (Node, bool, error)
	// IsAncestor reports whether folder ancestorID is above node id.
	IsAncestor func(ancestorID, id string) (bool, error)
}

// TransferOutcome is what a COPY or MOVE that passed CheckTransfer does.
type TransferOutcome int

const (
	// TransferCreates: the destination name is free.
	TransferCreates TransferOutcome = iota
	// TransferReplaces: the node at the destination name is replaced.
	TransferReplaces
	// TransferNoop: the source is moved or copied onto itself.
	TransferNoop
)

// CheckTransfer applies the rules of COPY and MOVE to the source src and
// the destination folder dst, which the store has read (and checked
// src against tr.Conditions): a folder never goes below itself
// (ErrDestinationInsideSource), an existing name is replaced only with
// Overwrite (TargetExists, an ErrExists), and never when it is above the
// source (ErrDestinationContainsSource). The source onto itself is a no-op.
func CheckTransfer(tr Transfer, src, dst Node, look TransferLookups) (TransferOutcome, error) {
	if dst.ID == src.ParentID && tr.NewName == src.Name {
		return TransferNoop, nil
	}
	if src.IsFolder() {
		inside, err := look.IsAncestor(src.ID, dst.ID)
		if err != nil {
			return 0, err
		}
		if inside {
			return 0, ErrDestinationInsideSource
		}
	}
	target, exists, err := look.Target()
	if err != nil || !exists {
		return TransferCreates, err
	}
	if !tr.Overwrite {
		return 0, TargetExists(tr.NewName)
	}
	above, err := look.IsAncestor(target.ID, src.ParentID)
	if err != nil {
		return 0, err
	}
	if above {
		return 0, ErrDestinationContainsSource
	}
	return TransferReplaces, nil
}
