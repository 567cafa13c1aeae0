package storage

import (
	"fmt"
	"strings"
)

// ValidProperty checks a dead property at a store's boundary: a namespace
// and local name within MaxPropNameBytes, a local name, and no NUL in the
// user, namespace or local name, which stores use as key separators. A
// refused property fails with ErrInvalid.
func ValidProperty(p Property) error {
	if len(p.Name.Space) > MaxPropNameBytes || len(p.Name.Local) > MaxPropNameBytes {
		return fmt.Errorf("property namespace or name longer than %d bytes: %w", MaxPropNameBytes, ErrInvalid)
	}
	if strings.IndexByte(p.User, 0) >= 0 || strings.IndexByte(p.Name.Space, 0) >= 0 ||
		p.Name.Local == "" || strings.IndexByte(p.Name.Local, 0) >= 0 {
		return InvalidProperty(p.Name)
	}
	return nil
}

// InvalidProperty: a property a store cannot keep (ErrInvalid).
func InvalidProperty(name PropName) error {
	return fmt.Errorf("property {%s}%s: %w", name.Space, name.Local, ErrInvalid)
}

// ValidPropUser checks the user whose dead properties are read or written:
// a NUL would break every store's keys (ErrInvalid).
func ValidPropUser(user string) error {
	if strings.IndexByte(user, 0) >= 0 {
		return fmt.Errorf("user %q: %w", user, ErrInvalid)
	}
	return nil
}

// PropUsage is what the dead properties of one scope of a node (one user's,
// or the shared ones) take: how many, and their names' and values' bytes.
type PropUsage struct {
	Count int
	Bytes int
}

// CheckPropGrowth fails with ErrInsufficientStorage when a patch took a
// scope from before to after over MaxPropsPerNode or MaxPropBytesPerNode.
// Only growth past a limit is refused: a scope already over it (the
// limits were lowered) may still shrink or stay.
func CheckPropGrowth(before, after PropUsage) error {
	if (after.Count > MaxPropsPerNode && after.Count > before.Count) ||
		(after.Bytes > MaxPropBytesPerNode && after.Bytes > before.Bytes) {
		return fmt.Errorf("%d properties of %d bytes, at most %d of %d bytes: %w",
			after.Count, after.Bytes, MaxPropsPerNode, MaxPropBytesPerNode, ErrInsufficientStorage)
	}
	return nil
}
