package storage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Scope narrows what a request may reach below what its user reaches: one
// space, one folder of it, no changes. An app password carries one (a
// camera upload app gets "this folder", a backup script "this space, read
// only"); the zero Scope narrows nothing.
//
// The rule is written here once: Space.RoleOf applies the space and the
// read-only part to every role a handler judges, and each door asks
// Reaches or ReachesNode of a path or an item and AllowsMethod of a
// request before anything else.
type Scope struct {
	// Space is the id of the one space reachable; "" for every space.
	Space string
	// Path is the one folder of Space reachable, with everything below
	// it, as names from the space's root joined by "/" after a leading
	// "/" (ScopePath's form); "" for the whole space.
	Path string
	// ReadOnly refuses every change.
	ReadOnly bool
}

// NewScope checks and returns the scope of space, folder path p in it
// ("/" or "" for the whole space) and readOnly: ErrInvalid for a path
// without a space or a malformed path.
func NewScope(space, p string, readOnly bool) (Scope, error) {
	cp, err := ScopePath(p)
	if err != nil {
		return Scope{}, err
	}
	s := Scope{Space: space, Path: cp, ReadOnly: readOnly}
	if err := s.Valid(); err != nil {
		return Scope{}, err
	}
	return s, nil
}

// ScopePath writes folder path p in a Scope's form: "" for the root ("",
// "/"), else "/" and its names joined by "/", empty names dropped.
// ErrInvalid for a path too long or a name that cannot be one.
func ScopePath(p string) (string, error) {
	if err := ValidPathSize(p); err != nil {
		return "", err
	}
	var names []string
	for _, n := range strings.Split(p, "/") {
		if n == "" {
			continue
		}
		if err := ValidName(n, nil); err != nil {
			return "", fmt.Errorf("scope path: %w", err)
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return "", nil
	}
	return "/" + strings.Join(names, "/"), nil
}

// Valid reports ErrInvalid for a scope a store must not keep: a path
// without a space, or a path not in ScopePath's form.
func (s Scope) Valid() error {
	if s.Path == "" {
		return nil
	}
	if s.Space == "" {
		return fmt.Errorf("a scope's folder needs its space: %w", ErrInvalid)
	}
	if cp, err := ScopePath(s.Path); err != nil || cp != s.Path {
		return fmt.Errorf("scope path %q: %w", s.Path, ErrInvalid)
	}
	return nil
}

// IsZero reports whether s narrows nothing.
func (s Scope) IsZero() bool { return s == Scope{} }

// ReachesSpace reports whether space id is reachable at all (maybe only
// one folder of it).
func (s Scope) ReachesSpace(id string) bool { return s.Space == "" || s.Space == id }

// Reaches reports whether the node named by names from the root of space
// id is reachable: the space is s's and the node is s's folder or below
// it. The folder's ancestors, the space's root among them, are not.
func (s Scope) Reaches(id string, names []string) bool {
	if !s.ReachesSpace(id) {
		return false
	}
	rest := s.Path
	for _, n := range names {
		if rest == "" {
			return true
		}
		var ok bool
		if rest, ok = strings.CutPrefix(rest, "/"+n); !ok || rest != "" && rest[0] != '/' {
			return false
		}
	}
	return rest == ""
}

// ReachesNode is Reaches of node n, whose path it reads upwards through r
// only when s names a folder.
func (s Scope) ReachesNode(ctx context.Context, r NodeReader, n Node) (bool, error) {
	if !s.ReachesSpace(n.SpaceID) {
		return false, nil
	}
	if s.Path == "" {
		return true, nil
	}
	names, err := NodeNames(ctx, r, n, "")
	if err != nil {
		return false, err
	}
	return s.Reaches(n.SpaceID, names), nil
}

// ReachesShares reports whether what others shared with the user is
// reachable: only without a space, as a share reaches into a space the
// scope does not name.
func (s Scope) ReachesShares() bool { return s.Space == "" }

// AllowsWrite reports whether s lets changes through.
func (s Scope) AllowsWrite() bool { return !s.ReadOnly }

// AllowsMethod reports whether s lets a request of method through: a
// read-only scope only the methods that change nothing.
func (s Scope) AllowsMethod(method string) bool {
	return s.AllowsWrite() || SafeMethod(method)
}

// SafeMethod reports whether method only reads, on every door this server
// has: HTTP's safe methods and WebDAV's reading ones.
func SafeMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, "PROPFIND", "REPORT", "SEARCH":
		return true
	}
	return false
}

// limit is role r in space id as s narrows it: none outside s's space,
// at most a viewer's when s is read-only.
func (s Scope) limit(id string, r Role) Role {
	if !s.ReachesSpace(id) {
		return RoleNone
	}
	if s.ReadOnly {
		return min(r, RoleViewer)
	}
	return r
}

// ScopedTrash is t as scope s narrows it when s names a folder: the items
// deleted from within the folder, the others as if they were not there
// (ErrNotFound), and EmptyTrash purging only the former. A space scope
// needs no narrowing here: the trash of another space is not reached at
// all.
func ScopedTrash(t Trash, s Scope) Trash {
	if s.Path == "" {
		return t
	}
	return scopedTrash{Trash: t, scope: s}
}

type scopedTrash struct {
	Trash
	scope Scope
}

// reaches reports whether item, of space spaceID, was deleted from within
// the scope's folder. An elided location ("…/…") reaches nothing.
func (t scopedTrash) reaches(spaceID string, item TrashItem) bool {
	return t.scope.Reaches(spaceID, strings.Split(item.Location, "/"))
}

// TrashItems fills a page with the items the scope reaches, reading the
// store's pages until it has limit or the trash ends, so that a short
// page still means the last.
func (t scopedTrash) TrashItems(ctx context.Context, spaceID, after string, limit int) ([]TrashItem, error) {
	if _, err := ValidTrashPage(after, limit); err != nil {
		return nil, err
	}
	var kept []TrashItem
	for {
		page, err := t.Trash.TrashItems(ctx, spaceID, after, limit)
		if err != nil {
			return nil, err
		}
		for _, it := range page {
			if !t.reaches(spaceID, it) {
				continue
			}
			if kept = append(kept, it); len(kept) == limit {
				return kept, nil
			}
		}
		if len(page) < limit {
			return kept, nil
		}
		after = page[len(page)-1].Key
	}
}

// item answers ErrNotFound unless the scope reaches item key.
func (t scopedTrash) item(ctx context.Context, spaceID, key string) error {
	_, _, err := t.TrashNode(ctx, spaceID, key, nil)
	return err
}

func (t scopedTrash) TrashNode(ctx context.Context, spaceID, key string, names []string) (TrashItem, Node, error) {
	item, n, err := t.Trash.TrashNode(ctx, spaceID, key, names)
	if err == nil && !t.reaches(spaceID, item) {
		return TrashItem{}, Node{}, fmt.Errorf("trash item %s: %w", key, ErrNotFound)
	}
	return item, n, err
}

func (t scopedTrash) ReadTrashDir(ctx context.Context, spaceID, key, folderID, after string, limit int) ([]Node, error) {
	if err := t.item(ctx, spaceID, key); err != nil {
		return nil, err
	}
	return t.Trash.ReadTrashDir(ctx, spaceID, key, folderID, after, limit)
}

func (t scopedTrash) RestoreTrash(ctx context.Context, spaceID, key string, tr Transfer) (Node, bool, error) {
	if err := t.item(ctx, spaceID, key); err != nil {
		return Node{}, false, err
	}
	return t.Trash.RestoreTrash(ctx, spaceID, key, tr)
}

func (t scopedTrash) PurgeTrash(ctx context.Context, spaceID, key string) error {
	if err := t.item(ctx, spaceID, key); err != nil {
		return err
	}
	return t.Trash.PurgeTrash(ctx, spaceID, key)
}

// EmptyTrash purges the items the scope reaches, one at a time; one
// restored or purged meanwhile is no error.
func (t scopedTrash) EmptyTrash(ctx context.Context, spaceID string) error {
	return EachTrashItem(ctx, t, spaceID, TrashPageSize, func(it TrashItem) error {
		if err := t.Trash.PurgeTrash(ctx, spaceID, it.Key); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		return nil
	})
}
