package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrForbidden is the refusal of a user who sees a space but whose role
// there does not allow what they ask. Whoever does not see the space gets
// ErrNotFound instead, as for a space that does not exist: a user never
// learns that another user's space is there.
var ErrForbidden = errors.New("forbidden")

// SpacePolicy is who reaches which space through a server: the spaces it
// serves (every personal space, the project spaces of its configuration),
// who sees one, and who may share its items or manage their shares. The
// front-ends (WebDAV, OCS, Graph, app passwords) take one, built once from
// the configuration, and each turns ErrNotFound into its 404 and
// ErrForbidden into its 403. The zero value serves personal spaces only.
type SpacePolicy struct {
	// projects are the configured project space ids, each once, in the
	// configuration's order.
	projects []string
	served   map[string]bool
}

// NewSpacePolicy is the policy of a server whose configuration serves the
// project spaces projectSpaces; empty ids and repeats are dropped.
func NewSpacePolicy(projectSpaces []string) SpacePolicy {
	p := SpacePolicy{served: make(map[string]bool, len(projectSpaces))}
	for _, id := range projectSpaces {
		if id != "" && !p.served[id] {
			p.served[id] = true
			p.projects = append(p.projects, id)
		}
	}
	return p
}

// ProjectSpaces are the ids of the configured project spaces, in the
// configuration's order.
func (p SpacePolicy) ProjectSpaces() []string { return slices.Clone(p.projects) }

// Serves reports whether the server serves s: a personal space, or a
// project space of its configuration. A project space taken out of the
// configuration keeps its content in the store but is served no more.
func (p SpacePolicy) Serves(s Space) bool {
	switch s.Type {
	case SpacePersonal:
		return true
	case SpaceProject:
		return p.served[s.ID]
	}
	return false
}

// Visible reports, as ErrNotFound, that u may not learn s exists: s is not
// served, or u has no role there (a stranger, a former member, or a
// scoped app password that does not reach s; see Space.RoleOf).
func (p SpacePolicy) Visible(u User, s Space) error {
	if !p.Serves(s) || s.RoleOf(u) == RoleNone {
		return fmt.Errorf("space %s for %s: %w", s.ID, u.ID, ErrNotFound)
	}
	return nil
}

// MayShare reports whether u may share items of s and see their shares:
// ErrNotFound when u does not see s, ErrForbidden when u sees it without
// the right to share (a viewer, or a read-only app password).
func (p SpacePolicy) MayShare(u User, s Space) error {
	if err := p.Visible(u, s); err != nil {
		return err
	}
	if !MayShare(s.RoleOf(u)) {
		return fmt.Errorf("%s may not share in space %s: %w", u.ID, s.ID, ErrForbidden)
	}
	return nil
}

// MayManageShare reports whether u may change or delete share sh of s
// (MayManageShare): ErrNotFound when u does not see s, ErrForbidden when
// u sees it but is neither the share's creator, still allowed to share,
// nor a manager of s.
func (p SpacePolicy) MayManageShare(u User, s Space, sh Share) error {
	if err := p.Visible(u, s); err != nil {
		return err
	}
	if !MayManageShare(sh, u, s.RoleOf(u)) {
		return fmt.Errorf("%s may not manage share %s: %w", u.ID, sh.ID, ErrForbidden)
	}
	return nil
}

// SpaceReader reads the spaces SpacesOf lists.
type SpaceReader interface {
	PersonalSpace(ctx context.Context, u User) (Space, error)
	Space(ctx context.Context, id string) (Space, error)
}

// SpacesOf lists the spaces u sees: u's personal space, then the
// configured project spaces u is a member of, in the configuration's
// order. A configured id the store does not know, or that names a space
// of another type, is skipped as absent.
func (p SpacePolicy) SpacesOf(ctx context.Context, r SpaceReader, u User) ([]Space, error) {
	personal, err := r.PersonalSpace(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("personal space of %s: %w", u.ID, err)
	}
	var spaces []Space
	if p.Visible(u, personal) == nil {
		spaces = append(spaces, personal)
	}
	for _, id := range p.projects {
		s, err := r.Space(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("project space %s: %w", id, err)
		}
		if s.Type == SpaceProject && p.Visible(u, s) == nil {
			spaces = append(spaces, s)
		}
	}
	return spaces, nil
}
