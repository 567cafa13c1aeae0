package davhandler

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/shareid"
	"github.com/davspaces/davspaces/storage"
)

// /dav/meta/{resourceID} names a node by its id alone, as private links do:
// a PROPFIND asking for oc:meta-path-for-user tells where the node is in
// its space. Below it, …/v are the versions of a file (versions.go).

// maxMetaDepth bounds the walk from a node up to its space's root.
const maxMetaDepth = storage.MaxNodeDepth

var metaPathName = ocName("meta-path-for-user")

// errMetaPathRequired is oCIS' refusal of a meta PROPFIND that does not
// ask for the path.
var errMetaPathRequired = errorf(http.StatusBadRequest, "A PROPFIND of /dav/meta must ask for oc:meta-path-for-user")

// metaNotFound is the answer for a resource id that names nothing the
// caller may see.
func metaNotFound(ref string, cause error) *davError {
	return &davError{status: http.StatusNotFound, message: fmt.Sprintf("Resource %s not found", ref), cause: cause}
}

func (h *Handler) serveMeta(w http.ResponseWriter, r *http.Request, req *request) error {
	t, err := h.resolveMeta(r.Context(), req)
	if err != nil {
		return err
	}
	if len(req.path.segments) > 0 {
		return h.serveVersions(w, r, req, t)
	}
	if r.Method != "PROPFIND" {
		return methodNotAllowed(allowedOnMeta, "/dav/meta only answers PROPFIND")
	}
	return h.handleMetaPropfind(w, r, req, t)
}

// resolveMeta finds the node a /dav/meta path names by id. An id that
// names nothing, a node in the trash, or a node of a space the caller may
// not see are all the same 404.
func (h *Handler) resolveMeta(ctx context.Context, req *request) (*target, error) {
	ref := req.path.ref
	space, nodeID, err := h.spaceByRef(ctx, ref)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, metaNotFound(ref, err)
	}
	if err != nil {
		return nil, err
	}
	if nodeID == "" {
		nodeID = space.ID
	}
	a, reach, err := h.accessTo(ctx, req.user, space, nodeID)
	if storageError(err).status == http.StatusNotFound {
		return nil, metaNotFound(ref, err)
	}
	if err != nil {
		return nil, err
	}
	node, err := h.store.Node(ctx, space.ID, nodeID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, metaNotFound(ref, err)
	}
	if err != nil {
		return nil, err
	}
	a = reach.atNode(a, node.ID, true)
	return &target{space: space, access: a, share: reach, node: node, exists: true, isBase: true, hrefPath: req.path.base}, nil
}

// metaView is the one resource a meta PROPFIND answers.
type metaView struct {
	path string
	// id and spaceRef are the node's resource id and its space's, as XML
	// text.
	id, spaceRef []byte
}

var metaProps = fixedProps[metaView]{
	props: map[xml.Name]fixedProp[metaView]{
		metaPathName:      func(v metaView, dst []byte) ([]byte, bool) { return text(dst, v.path) },
		ocName("id"):      func(v metaView, dst []byte) ([]byte, bool) { return append(dst, v.id...), true },
		ocName("fileid"):  func(v metaView, dst []byte) ([]byte, bool) { return append(dst, v.id...), true },
		ocName("spaceid"): func(v metaView, dst []byte) ([]byte, bool) { return append(dst, v.spaceRef...), true },
	},
	allprop: []xml.Name{metaPathName, ocName("id"), ocName("fileid"), ocName("spaceid")},
}

// handleMetaPropfind answers where the node is: its path from its space's
// root (with a leading "/"), and its ids.
func (h *Handler) handleMetaPropfind(w http.ResponseWriter, r *http.Request, req *request, t *target) error {
	pf, err := h.readPropfind(w, r)
	if err != nil {
		return err
	}
	if pf.kind != findProp || !slices.Contains(pf.names, metaPathName) {
		return errMetaPathRequired
	}
	storageID := h.store.StorageID()
	p, spaceRef, err := h.metaPlace(r.Context(), req.user, t)
	if errors.Is(err, storage.ErrNotFound) {
		// Deleted or moved away while its path was read.
		return metaNotFound(req.path.ref, err)
	}
	if err != nil {
		return err
	}
	v := metaView{path: p, spaceRef: spaceRef}
	v.id = resourceid.AppendNode(appendSpaceRef(nil, storageID, t.space.ID), t.node.ID, davxml.AppendText)
	ms := davxml.StartMultistatus(w, davxml.MultistatusBuffer, &h.responseBuffers)
	var ps propSet
	metaProps.writeResponse(ms, &ps, pf, davxml.Href{Base: hrefFor(t.hrefPath, true)}, v)
	return h.endMultistatus(r, ms.Close())
}

// metaPlace is where the node of t is for user: its path in its space and
// the space's id (as XML text), or for a recipient its path in the Shares
// drive, below the mount point of the share that reaches it.
func (h *Handler) metaPlace(ctx context.Context, user storage.User, t *target) (string, []byte, error) {
	if t.share.root == "" {
		p, err := h.pathOf(ctx, t.node, "")
		return p, appendSpaceRef(nil, h.store.StorageID(), t.space.ID), err
	}
	// Every share, since a mount point's name depends on the others'.
	rs, err := h.receivedShares(ctx, user, nil)
	if err != nil {
		return "", nil, err
	}
	mount := findMount(rs, func(r *received) bool { return r.space.ID == t.space.ID && r.item.ID == t.share.root })
	if mount == nil {
		return "", nil, storage.NodeNotFound(t.space.ID, t.share.root)
	}
	p, err := h.pathOf(ctx, t.node, t.share.root)
	return path.Join("/", mount.name, p), davxml.AppendText(nil, shareid.DriveID), err
}

// pathOf returns the path of n from its space's root, or from the node
// top when not empty, "/" for that node (storage.NodeNames).
func (h *Handler) pathOf(ctx context.Context, n storage.Node, top string) (string, error) {
	names, err := storage.NodeNames(ctx, h.store, n, top)
	return "/" + strings.Join(names, "/"), err
}
