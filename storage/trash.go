package storage

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TrashItem is what one DELETE (or a target replaced by MOVE or COPY) put
// into its space's trash: a file or a folder with its whole subtree, dead
// properties and favourites, kept under its own ids so that a restore gives
// sync clients the same files back.
type TrashItem struct {
	// Key names the item in its space's trash (TrashKey); it is unique
	// there and never reused.
	Key string
	// Node is the deleted node as it is kept: its id, kind, size (a
	// folder's: everything below it), etag, checksums. Its Name is its
	// name when it was deleted, its ParentID the folder it was deleted from.
	Node Node
	// Location is the path it was deleted from, relative to the space's
	// root, without a leading "/" (oc:trashbin-original-location).
	Location string
	// Deleted is when it went to the trash.
	Deleted time.Time
}

// Trash keeps what was deleted from a space until it is restored, purged,
// or expires (Retention.Trash). Every Store removes into it: Remove, and
// the target Move and Copy replace, put the node into the trash of its
// space rather than destroy it, unless the space's retention keeps no
// trash. Trashed nodes are no longer nodes of their space: Node, Child,
// ReadDir and every change fail for them with ErrNotFound. Their bytes
// count in the space's Usage.Trash until purged.
type Trash interface {
	// TrashItems returns up to limit items of the trash of space spaceID
	// in TrashOrder, newest first, starting after the item keyed after
	// ("" for the first page), so that a trash of any size is read a page
	// at a time; a page shorter than limit is the last. The cursor is the
	// key alone, which holds its deletion time: a page follows on whether
	// or not the item after names is still in the trash, and an item
	// deleted meanwhile, newer than every item listed, is left to the
	// next pass. ErrNotFound when the space does not exist; ErrInvalid
	// for a limit below 1 or an after that is not a trash key.
	TrashItems(ctx context.Context, spaceID, after string, limit int) ([]TrashItem, error)
	// TrashNode returns the item key and the node names lead to below it
	// (the item's own node when names is empty), in one snapshot.
	// ErrNotFound when the item or a name does not exist, or a name is
	// below a file.
	TrashNode(ctx context.Context, spaceID, key string, names []string) (TrashItem, Node, error)
	// ReadTrashDir is ReadDir within trash item key: up to limit children
	// of folder folderID (the item itself or a folder below it), ordered by
	// name, after the name after.
	ReadTrashDir(ctx context.Context, spaceID, key, folderID, after string, limit int) ([]Node, error)
	// RestoreTrash moves node NodeID of trash item key (the item's own node
	// or one below it) back into the space, as Move would: to folder
	// NewParentID under NewName, keeping its id, its subtree and their
	// properties. An existing target is replaced only with Overwrite, and
	// goes to the trash in turn (ErrExists without; ErrConflict when the
	// folder is missing or a file). The restored node leaves the trash; a
	// node restored from below an item leaves the item smaller. It
	// reports whether an existing target was replaced. Conditions guard
	// the target's folder as Copy's do; Locks are those of the target.
	RestoreTrash(ctx context.Context, spaceID, key string, t Transfer) (Node, bool, error)
	// PurgeTrash destroys trash item key, with its versions (those of every
	// file in it): its bytes are given back at once, to the quota and, for
	// content nothing else holds, to the disk or the bucket. ErrNotFound
	// when there is no such item.
	PurgeTrash(ctx context.Context, spaceID, key string) error
	// EmptyTrash purges every item in the trash of space spaceID.
	EmptyTrash(ctx context.Context, spaceID string) error
}

// TrashKey returns the key of an item deleted at t with node id nodeID:
// the deletion time in Unix nanoseconds and the node id, so that keys are
// unique, sort by deletion time, and a node deleted again after a restore
// gets a new key.
func TrashKey(deleted time.Time, nodeID string) string {
	return strconv.FormatInt(deleted.UnixNano(), 10) + "." + nodeID
}

// ValidTrashKey checks a key from a request before a store looks it up:
// one path segment, as TrashKey makes them. A malformed key is ErrNotFound,
// as an unknown one.
func ValidTrashKey(key string) error {
	if _, ok := trashKeyNanos(key); !ok {
		return TrashItemNotFound(key)
	}
	return nil
}

// trashKeyNanos returns the deletion time, in Unix nanoseconds, that key
// holds; ok is false unless key is one TrashKey could have made.
func trashKeyNanos(key string) (nanos int64, ok bool) {
	digits, id, found := strings.Cut(key, ".")
	if !found || id == "" || len(key) > MaxNameLen || strings.ContainsAny(key, "/\x00") {
		return 0, false
	}
	nanos, err := strconv.ParseInt(digits, 10, 64)
	return nanos, err == nil
}

// TrashCursor is where a page of TrashItems starts: after the item
// deleted at Deleted (Unix nanoseconds) with key Key, in TrashOrder.
// The zero cursor starts at the newest item.
type TrashCursor struct {
	Deleted int64
	Key     string
}

// ParseTrashCursor reads the after of TrashItems: "" is the zero
// cursor, anything but a trash key ErrInvalid.
func ParseTrashCursor(after string) (TrashCursor, error) {
	if after == "" {
		return TrashCursor{}, nil
	}
	nanos, ok := trashKeyNanos(after)
	if !ok {
		return TrashCursor{}, fmt.Errorf("trash page after %.64q, not a trash key: %w", after, ErrInvalid)
	}
	return TrashCursor{Deleted: nanos, Key: after}, nil
}

// Admits reports whether an item deleted at deleted (Unix nanoseconds)
// with key key comes after c in TrashOrder.
func (c TrashCursor) Admits(deleted int64, key string) bool {
	if c.Key == "" {
		return true
	}
	return deleted < c.Deleted || deleted == c.Deleted && key > c.Key
}

// ValidTrashPage checks the page a caller asks TrashItems for and
// returns its cursor: ErrInvalid for a limit below 1 or a malformed
// after.
func ValidTrashPage(after string, limit int) (TrashCursor, error) {
	if limit < 1 {
		return TrashCursor{}, fmt.Errorf("trash page of %d items: %w", limit, ErrInvalid)
	}
	return ParseTrashCursor(after)
}

// TrashOrder compares two items as TrashItems orders them: newest first,
// then by key.
func TrashOrder(a, b TrashItem) int {
	if c := b.Deleted.Compare(a.Deleted); c != 0 {
		return c
	}
	return strings.Compare(a.Key, b.Key)
}

// EachTrashItem calls fn with every item of the trash of space spaceID,
// in TrashOrder, reading it pageSize items at a time: what a caller
// holds is one page, however big the trash. An item purged or restored
// meanwhile may be left out, none comes twice. fn's error ends the walk
// and is returned.
func EachTrashItem(ctx context.Context, t Trash, spaceID string, pageSize int, fn func(TrashItem) error) error {
	after := ""
	for {
		page, err := t.TrashItems(ctx, spaceID, after, pageSize)
		if err != nil {
			return err
		}
		for _, it := range page {
			if err := fn(it); err != nil {
				return err
			}
		}
		if len(page) < pageSize {
			return nil
		}
		after = page[len(page)-1].Key
	}
}

// TrashPageSize is the page EachTrashItem and AllTrashItems read when
// the caller has no reason to pick another.
const TrashPageSize = 500

// AllTrashItems returns every item of the trash of space spaceID, in
// TrashOrder, read page by page. It holds the whole trash: for tests and
// for callers that know the trash small; the others walk it with
// EachTrashItem.
func AllTrashItems(ctx context.Context, t Trash, spaceID string) ([]TrashItem, error) {
	var all []TrashItem
	err := EachTrashItem(ctx, t, spaceID, TrashPageSize, func(it TrashItem) error {
		all = append(all, it)
		return nil
	})
	return all, err
}

// TrashItemNotFound is the refusal of an unknown trash key.
func TrashItemNotFound(key string) error {
	return fmt.Errorf("trash item %q: %w", key, ErrNotFound)
}

// MaxTrashLocationBytes bounds the location a trash item records. The
// item counts as one node (NodeCap) however deep it was, and a tree made
// deep by moves has no other bound on its paths, which no request could
// name anyway beyond the path cap (ValidPathSize).
const MaxTrashLocationBytes = MaxPathBytes

// TrashLocation joins the names from a space's root to a node into the
// location a trash item records: "a/b/c", no leading "/". A location
// longer than MaxTrashLocationBytes keeps its last names after "…/", for
// display: the place they lead to has no path a client could restore to.
func TrashLocation(names []string) string {
	location := strings.Join(names, "/")
	if len(location) <= MaxTrashLocationBytes {
		return location
	}
	const elided = "…/"
	room := MaxTrashLocationBytes - len(elided)
	start := len(names)
	for start > 0 && len(names[start-1]) < room {
		room -= len(names[start-1]) + 1
		start--
	}
	return elided + strings.Join(names[start:], "/")
}

// SortTrash orders items newest first, then by key, as TrashItems returns
// them (TrashOrder).
func SortTrash(items []TrashItem) {
	slices.SortFunc(items, TrashOrder)
}

// Reviving picks the trash item a file newly created as name in folder
// parentID takes its history from: among items, those the space's trash
// still keeps, the newest file deleted from that very place, so that a
// client that deletes a file and uploads it again keeps its versions. ok
// is false when there is none.
func Reviving(items []TrashItem, parentID, name string) (TrashItem, bool) {
	var best TrashItem
	found := false
	for _, it := range items {
		n := it.Node
		if n.Kind != KindFile || n.ParentID != parentID || n.Name != name {
			continue
		}
		if !found || it.Deleted.After(best.Deleted) {
			best, found = it, true
		}
	}
	return best, found
}
