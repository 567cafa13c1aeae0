package davhandler

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/shareid"
	"github.com/davspaces/davspaces/storage"
)

// request is one authenticated WebDAV request.
type request struct {
	user storage.User
	path davPath
}

// target is what a DAV path names: an existing node, or a free name in an
// existing folder, or a name whose parent is missing.
type target struct {
	space storage.Space
	// access is what the caller may do with the target.
	access access
	// share tells how a recipient reached the target through a share;
	// zero for a member.
	share shareReach
	// mounts are the mount points of the Shares drive when the target is
	// its root (isSharesRoot).
	mounts []received
	// parent is the folder holding the target; valid when hasParent.
	parent    storage.Node
	hasParent bool
	// node is the target itself; valid when exists.
	node   storage.Node
	exists bool
	name   string
	// isBase: the path names the node its base names (no segments).
	isBase bool
	// hrefPath is the decoded path of the target, without trailing slash.
	hrefPath string
}

// href is the escaped href of the target node.
func (t *target) href() string {
	return hrefFor(t.hrefPath, t.exists && t.node.IsFolder())
}

// hrefFor escapes a decoded path; collections end with a slash.
func hrefFor(p string, folder bool) string {
	h := escapePath(p)
	if folder && !strings.HasSuffix(h, "/") {
		h += "/"
	}
	return h
}

// errScopeReadOnly is the answer to a change through a read-only app
// password, whatever it would change.
var errScopeReadOnly = errorf(http.StatusForbidden, "This app password is read-only")

// errReadOnly is the answer to a viewer's change request.
var errReadOnly = errorf(http.StatusForbidden, "You have no permission to change this space")

// resourceID formats the id of a node the way clients see it.
func resourceID(storageID string, n storage.Node) string {
	return resourceid.New(storageID, n.SpaceID, n.ID).String()
}

// resolve finds the space and node a DAV path names, as seen by user, or,
// for a request through a public link, as the link sees it.
func (h *Handler) resolve(ctx context.Context, user storage.User, dp davPath) (*target, error) {
	if dp.kind == basePublic {
		return h.resolvePublic(ctx, dp)
	}
	b, err := h.resolveBase(ctx, user, dp)
	if err != nil {
		return nil, err
	}
	if b.sharesRoot != nil {
		return sharesRootTarget(b), nil
	}
	nodes, err := h.walk(ctx, b.space.ID, b.nodeID, b.segments)
	if err != nil {
		return nil, err
	}
	dp.base, dp.segments = b.hrefPath, b.segments
	t := newTarget(b.space, b.access, dp, nodes)
	t.share = b.share
	t.access = t.share.atNode(t.access, t.node.ID, t.exists)
	return t, nil
}

// newTarget is the target of dp in space, with access acc, from the nodes
// its segments lead to (pathWalker.Walk's answer).
func newTarget(space storage.Space, acc access, dp davPath, nodes []storage.Node) *target {
	t := &target{space: space, access: acc, hrefPath: joinPath(dp.base, dp.segments)}
	t.node, t.exists, t.isBase = nodes[0], true, len(dp.segments) == 0
	for i, seg := range dp.segments {
		t.name = seg
		if !t.exists || !t.node.IsFolder() {
			// An ancestor is missing or is a file.
			t.hasParent, t.exists = false, false
			continue
		}
		t.parent, t.hasParent = t.node, true
		if i+1 < len(nodes) {
			t.node = nodes[i+1]
		} else {
			t.exists = false
		}
	}
	return t
}

// joinPath is base followed by each of segments after a slash, built
// once: appending a segment at a time copies the path per segment.
func joinPath(base string, segments []string) string {
	if len(segments) == 0 {
		return base
	}
	return base + "/" + strings.Join(segments, "/")
}

// pathWalker is a store that resolves the segments of a path in one
// snapshot, as boltstore's does, instead of a lookup per segment.
type pathWalker interface {
	// Walk returns the node nodeID, then the child called names[0] of it,
	// the child called names[1] of that, and so on, stopping before the
	// first name that does not exist or is below a file.
	Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error)
}

// walk returns the node nodeID and the nodes names lead to below it, as
// pathWalker.Walk does, looking up one segment at a time where the store
// cannot do it at once.
func (h *Handler) walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error) {
	if w, ok := h.store.(pathWalker); ok {
		return w.Walk(ctx, spaceID, nodeID, names)
	}
	n, err := h.store.Node(ctx, spaceID, nodeID)
	if err != nil {
		return nil, err
	}
	nodes := []storage.Node{n}
	for _, name := range names {
		if !n.IsFolder() {
			break
		}
		n, err = h.store.Child(ctx, spaceID, n.ID, name)
		if errors.Is(err, storage.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// resolveExisting resolves a path that must name an existing node.
func (h *Handler) resolveExisting(ctx context.Context, user storage.User, dp davPath) (*target, error) {
	t, err := h.resolve(ctx, user, dp)
	if err == nil && !t.exists {
		err = errNotFound
	}
	return t, err
}

// base is where a DAV path starts: a node of a space, what the caller
// may do there, and the names of the path below it.
type base struct {
	space  storage.Space
	nodeID string
	access access
	// share tells how a recipient reached the node through a share; zero
	// for a member.
	share shareReach
	// hrefPath is the decoded path naming the node: the DAV base, and in
	// the Shares drive the mount point's name too.
	hrefPath string
	segments []string
	// sharesRoot, when not nil, is the root of the Shares drive with its
	// mount points: the path names it, not a node.
	sharesRoot []received
}

// resolveBase finds the space and the node the base of a DAV path names.
func (h *Handler) resolveBase(ctx context.Context, user storage.User, dp davPath) (base, error) {
	b := base{hrefPath: dp.base, segments: dp.segments}
	if linkOf(ctx) != nil {
		// A request through a link reaches its link's paths only.
		return b, errNotFound
	}
	var err error
	switch dp.kind {
	default:
		return b, errNotFound
	case baseHome:
		b.space, err = h.store.PersonalSpace(ctx, user)
	case baseFiles:
		if !strings.EqualFold(dp.user, user.ID) {
			return b, errNotFound
		}
		b.space, err = h.store.PersonalSpace(ctx, user)
	case baseSpaces:
		if shareID, inJail := shareid.Parse(dp.ref); inJail {
			return h.resolveSharesDrive(ctx, user, dp, shareID)
		}
		b.space, b.nodeID, err = h.spaceByRef(ctx, dp.ref)
	}
	if err != nil {
		return b, err
	}
	if b.nodeID == "" {
		b.nodeID = b.space.ID
	}
	b.access, b.share, err = h.accessTo(ctx, user, b.space, b.nodeID, b.segments...)
	return b, err
}

// accessTo is what user may do with node nodeID of space and below it, or
// with what names lead to below it: a member's role, or else what the
// user's live shares of the node or of a folder above it give. A space the
// user may not see, a node no share reaches and one outside the request's
// scope are the same errNotFound.
func (h *Handler) accessTo(ctx context.Context, user storage.User, space storage.Space, nodeID string, names ...string) (access, shareReach, error) {
	if err := h.inScope(ctx, user.Scope, space.ID, nodeID, names); err != nil {
		return access{}, shareReach{}, err
	}
	if h.visible(ctx, space, user) {
		return memberAccess(space.RoleOf(user)), shareReach{}, nil
	}
	if !user.Scope.ReachesShares() {
		return access{}, shareReach{}, errNotFound
	}
	return h.sharedAccess(ctx, user, space, nodeID)
}

// inScope answers errNotFound unless scope reaches what names lead to
// below node nodeID of space spaceID. Only a scope naming a folder reads
// the node's path, one lookup per folder above it.
func (h *Handler) inScope(ctx context.Context, scope storage.Scope, spaceID, nodeID string, names []string) error {
	if !scope.ReachesSpace(spaceID) {
		return errNotFound
	}
	if scope.Path == "" {
		return nil
	}
	var path []string
	if nodeID != spaceID {
		n, err := h.store.Node(ctx, spaceID, nodeID)
		if err != nil {
			return err
		}
		if path, err = storage.NodeNames(ctx, h.store, n, ""); err != nil {
			return err
		}
	}
	if !scope.Reaches(spaceID, append(path, names...)) {
		return errNotFound
	}
	return nil
}

// visible reports whether user may learn that space exists
// (storage.SpacePolicy.Visible): it is served here and user is a member. Every other space answers as one that does not
// exist, so that neither a stranger nor a former member can tell them apart.
// A visible space is noted as the request's, for the log of a refusal.
func (h *Handler) visible(ctx context.Context, space storage.Space, user storage.User) bool {
	if h.spaces.Visible(user, space) != nil {
		return false
	}
	noteSpace(ctx, space.ID)
	return true
}

// spaceByRef parses a resource id (<storage>$<space>!<node>, <storage>$<space>
// or a bare <space>) and loads its space.
func (h *Handler) spaceByRef(ctx context.Context, ref string) (storage.Space, string, error) {
	id, err := resourceid.Parse(ref)
	if err != nil {
		return storage.Space{}, "", errorf(http.StatusBadRequest, "Invalid space id %q", ref)
	}
	// The space first: a store that has not reached its backends yet knows
	// no storage id, and answers 503, not 404.
	space, err := h.store.Space(ctx, id.Space)
	if err != nil {
		return storage.Space{}, "", err
	}
	if id.Storage != "" && id.Storage != h.store.StorageID() {
		return storage.Space{}, "", errNotFound
	}
	return space, id.Node, nil
}
