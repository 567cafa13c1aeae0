package storage

import (
	"fmt"
	"maps"
)

// PreparePutSpace checks the space a caller gives PutSpace and returns it
// with a members map of its own, never nil, so that the store keeps
// nothing the caller may change afterwards. A refused id is ErrInvalid.
func PreparePutSpace(sp Space) (Space, error) {
	if err := ValidID("space id", sp.ID); err != nil {
		return Space{}, err
	}
	sp.Members = maps.Clone(sp.Members)
	if sp.Members == nil {
		sp.Members = map[string]Role{}
	}
	return sp, nil
}

// CheckPutSpace applies the rules of PutSpace to sp, where old is the
// space of that id when exists: an update keeps the type (ErrConflict),
// and only project spaces are created (ErrInvalid).
func CheckPutSpace(sp, old Space, exists bool) error {
	switch {
	case exists && sp.Type != "" && sp.Type != old.Type:
		return fmt.Errorf("space %s is a %s space: %w", sp.ID, old.Type, ErrConflict)
	case !exists && sp.Type != "" && sp.Type != SpaceProject:
		return fmt.Errorf("space type %q cannot be put: %w", sp.Type, ErrInvalid)
	}
	return nil
}

// SpaceIDTaken: a new space's id, which is its root's, names a node
// already (ErrConflict).
func SpaceIDTaken(id string) error {
	return fmt.Errorf("id %s is taken by a node: %w", id, ErrConflict)
}
