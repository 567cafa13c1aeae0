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
