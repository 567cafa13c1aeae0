package localtree

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// splitPath returns the names of a slash-separated path in a space; empty
// segments and "." name nothing, and ".." is refused rather than resolved,
// so that a path can only go down from the space's root.
func splitPath(p string) ([]string, error) {
	var names []string
	for name := range strings.SplitSeq(p, "/") {
		switch name {
		case "", ".":
			continue
		case "..":
			return nil, fmt.Errorf("path %q: \"..\": %w", p, storage.ErrInvalid)
		}
		names = append(names, name)
	}
	return names, nil
}

// lookupPath returns the node at path p in the space; the space's root for
// an empty path.
func lookupPath(ctx context.Context, store storage.Store, spaceID, p string) (storage.Node, error) {
	names, err := splitPath(p)
	if err != nil {
		return storage.Node{}, err
	}
	n, err := store.Node(ctx, spaceID, spaceID)
	if err != nil {
		return storage.Node{}, fmt.Errorf("root of space %s: %w", spaceID, err)
	}
	for i, name := range names {
		if !n.IsFolder() {
			return storage.Node{}, fmt.Errorf("/%s is a file: %w", strings.Join(names[:i], "/"), storage.ErrConflict)
		}
		if n, err = store.Child(ctx, spaceID, n.ID, name); err != nil {
			return storage.Node{}, fmt.Errorf("/%s: %w", strings.Join(names[:i+1], "/"), err)
		}
	}
	return n, nil
}

// makeFolders returns the folder at path p in the space, creating the
// missing folders on the way as mkdir -p does, and how many it created.
func makeFolders(ctx context.Context, store storage.Store, spaceID, p string) (storage.Node, int64, error) {
	names, err := splitPath(p)
	if err != nil {
		return storage.Node{}, 0, err
	}
	n, err := store.Node(ctx, spaceID, spaceID)
	if err != nil {
		return storage.Node{}, 0, fmt.Errorf("root of space %s: %w", spaceID, err)
	}
	var created int64
	for i, name := range names {
		var made bool
		if n, made, err = ensureFolder(ctx, store, spaceID, n.ID, name); err != nil {
			return storage.Node{}, created, fmt.Errorf("/%s: %w", strings.Join(names[:i+1], "/"), err)
		}
		if made {
			created++
		}
	}
	return n, created, nil
}

// ensureFolder returns the folder name in folder parentID, creating it
// when there is none, and whether it did. A file of that name is
// ErrConflict.
func ensureFolder(ctx context.Context, store storage.Store, spaceID, parentID, name string) (storage.Node, bool, error) {
	n, err := store.Child(ctx, spaceID, parentID, name)
	if errors.Is(err, storage.ErrNotFound) {
		n, err = store.Mkdir(ctx, spaceID, parentID, name)
		if err == nil {
			return n, true, nil
		}
		if !errors.Is(err, storage.ErrExists) {
			return storage.Node{}, false, err
		}
		// Someone else created it meanwhile: use theirs.
		n, err = store.Child(ctx, spaceID, parentID, name)
	}
	if err != nil {
		return storage.Node{}, false, err
	}
	if !n.IsFolder() {
		return storage.Node{}, false, fmt.Errorf("%q is a file: %w", name, storage.ErrConflict)
	}
	return n, false, nil
}
