package apppass

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/storage"
)

// Tree is what checking a scope at creation reads of the store: the space
// it names and the folders down to the one it names.
type Tree interface {
	StorageID() string
	Space(ctx context.Context, id string) (storage.Space, error)
	Node(ctx context.Context, spaceID, nodeID string) (storage.Node, error)
	Child(ctx context.Context, spaceID, parentID, name string) (storage.Node, error)
}

// ErrNoSuchScope refuses a scope naming a space the user does not reach or
// a folder that is not there: one answer for both, so that a user never
// learns that somebody else's space exists.
var ErrNoSuchScope = errors.New("no such space or folder")

// ErrPathWithoutSpace refuses a scope with a folder but no space.
var ErrPathWithoutSpace = errors.New("a scope's path needs its space")

// ScopeRequest is a scope as a client asks for it: space as the Graph and
// WebDAV spaces APIs spell its id (<storage>$<space> or <space>), path a
// folder of it ("" or "/": the whole space).
type ScopeRequest struct {
	Space    string
	Path     string
	ReadOnly bool
}

// resolveScope checks req for user: the space must be one this server
// serves and user is a member of, the path a folder in it.
func (s *Service) resolveScope(ctx context.Context, user storage.User, req ScopeRequest) (storage.Scope, error) {
	if req.Space == "" {
		if req.Path != "" {
			return storage.Scope{}, ErrPathWithoutSpace
		}
		return storage.Scope{ReadOnly: req.ReadOnly}, nil
	}
	if s.cfg.Tree == nil {
		return storage.Scope{}, ErrNoSuchScope
	}
	spaceID, ok := s.spaceID(req.Space)
	if !ok {
		return storage.Scope{}, ErrNoSuchScope
	}
	scope, err := storage.NewScope(spaceID, req.Path, req.ReadOnly)
	if err != nil {
		return storage.Scope{}, err
	}
	space, err := s.cfg.Tree.Space(ctx, spaceID)
	if errors.Is(err, storage.ErrNotFound) {
		return storage.Scope{}, ErrNoSuchScope
	}
	if err != nil {
		return storage.Scope{}, fmt.Errorf("space of a scope: %w", err)
	}
	if s.cfg.Spaces.Visible(user, space) != nil {
		return storage.Scope{}, ErrNoSuchScope
	}
	if err := s.checkFolder(ctx, space.ID, scope.Path); err != nil {
		return storage.Scope{}, err
	}
	return scope, nil
}

// spaceID is the space id of ref, <storage>$<space> of this store or a
// bare <space>; ok is false for another store's.
func (s *Service) spaceID(ref string) (string, bool) {
	id, err := resourceid.Parse(ref)
	if err != nil || !id.IsSpace() || id.Storage != "" && !id.Of(s.cfg.Tree.StorageID()) {
		return "", false
	}
	return id.Space, true
}

// checkFolder reports ErrNoSuchScope unless path (ScopePath's form) names
// a folder of space spaceID.
func (s *Service) checkFolder(ctx context.Context, spaceID, path string) error {
	n, err := s.cfg.Tree.Node(ctx, spaceID, spaceID)
	for _, name := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if err != nil || name == "" {
			break
		}
		n, err = s.cfg.Tree.Child(ctx, spaceID, n.ID, name)
	}
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return ErrNoSuchScope
	case err != nil:
		return fmt.Errorf("folder of a scope: %w", err)
	case !n.IsFolder():
		return ErrNoSuchScope
	}
	return nil
}
