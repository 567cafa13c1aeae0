package davhandler

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/davspaces/davspaces/storage"
)

// /dav/meta/{resourceID} names a node by its id alone, as private links do:
// a PROPFIND asking for oc:meta-path-for-user tells where the node is in
// its space. Below it, …/v are the versions of a file (versions.go).

// The methods of the meta resource.
const allowedOnMeta = "OPTIONS, PROPFIND"

// maxMetaDepth bounds the walk from a node up to its space's root: a
// deeper tree is no tree a client made through WebDAV.
const maxMetaDepth = 4096

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
	if !h.visible(ctx, space, req.user) {
		return nil, metaNotFound(ref, nil)
	}
	if nodeID == "" {
		nodeID = space.ID
	}
	node, err := h.store.Node(ctx, space.ID, nodeID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, metaNotFound(ref, err)
	}
	if err != nil {
		return nil, err
	}
	return &target{space: space, access: memberAccess(space.RoleOf(req.user)), node: node, exists: true, isBase: true, hrefPath: req.path.base}, nil
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
	p, err := h.pathOf(r.Context(), t.node)
	if errors.Is(err, storage.ErrNotFound) {
		// Deleted or moved away while its path was read.
		return metaNotFound(req.path.ref, err)
	}
	if err != nil {
		return err
	}
	storageID := h.store.StorageID()
	v := metaView{path: p, spaceRef: appendSpaceRef(nil, storageID, t.space.ID)}
	v.id = appendXMLText(append(slices.Clone(v.spaceRef), '!'), t.node.ID)
	ms := startMultistatus(w)
	var ps propSet
	metaProps.writeResponse(ms, &ps, pf, responseHref{base: hrefFor(t.hrefPath, true)}, v)
	return h.endMultistatus(r, ms.close())
}

// pathOf returns the path of n from its space's root, "/" for the root,
// walking up its folders one lookup each.
func (h *Handler) pathOf(ctx context.Context, n storage.Node) (string, error) {
	var names []string
	for n.ParentID != "" {
		if len(names) == maxMetaDepth {
			return "", fmt.Errorf("the path of node %s: deeper than %d folders", n.ID, maxMetaDepth)
		}
		names = append(names, n.Name)
		parent, err := h.store.Node(ctx, n.SpaceID, n.ParentID)
		if err != nil {
			return "", fmt.Errorf("the path of node %s: %w", n.ID, err)
		}
		n = parent
	}
	slices.Reverse(names)
	return "/" + strings.Join(names, "/"), nil
}
