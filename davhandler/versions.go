package davhandler

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

// The versions of a file, where ownCloud clients look for them
// (/dav/meta/{fileid}/v, as oCIS serves them): PROPFIND lists them, GET
// and HEAD send one, COPY makes one the file's content again. Members
// who may read the file may list and download its versions; restoring
// one is a write.

// errNoVersionRestore is oCIS' refusal of a restore to a reader.
var errNoVersionRestore = errorf(http.StatusForbidden, "You have no permission to restore versions on this resource")

// serveVersions answers …/v and …/v/{key} of file t.
func (h *Handler) serveVersions(w http.ResponseWriter, r *http.Request, req *request, t *target) error {
	if h.versions == nil {
		return errNotFound
	}
	key := ""
	if len(req.path.segments) > 1 {
		key = req.path.segments[1]
	}
	if t.node.IsFolder() {
		if r.Method != "COPY" || key == "" {
			// A folder has no versions: there is nothing at its …/v.
			return errNotFound
		}
		file, err := h.restoredChild(r, t)
		if err != nil {
			return err
		}
		t = file
	}
	switch {
	case r.Method == "PROPFIND":
		return h.handleVersionsPropfind(w, r, req, t, key)
	case key == "":
		return methodNotAllowed(allowedOnVersions, "the versions of a file are listed with PROPFIND")
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		return h.handleVersionGet(w, r, t, key)
	case r.Method == "COPY", r.Method == "MOVE" && req.path.nextcloud:
		// Nextcloud's clients MOVE to …/restore/target.
		return h.handleVersionRestore(w, r, req, t, key)
	}
	return methodNotAllowed(allowedOnVersion, "a version is read with GET and restored with COPY")
}

// versionView is one resource of a versions listing: the …/v collection
// (node nil) or a version.
type versionView struct {
	node *storage.Node
}

// versionProps are the properties of a version: those of the file as it
// was.
var versionProps = fixedProps[versionView]{
	props: map[xml.Name]fixedProp[versionView]{
		davName("resourcetype"): func(v versionView, dst []byte) ([]byte, bool) {
			if v.node == nil {
				return append(dst, "<d:collection/>"...), true
			}
			return dst, true
		},
		davName("getetag"): versionOnly(func(v versionView, dst []byte) ([]byte, bool) { return propETag(nil, &nodeView{node: v.node}, dst) }),
		davName("getlastmodified"): versionOnly(func(v versionView, dst []byte) ([]byte, bool) {
			return appendHTTPDate(dst, v.node.ModTime), true
		}),
		davName("getcontentlength"): versionOnly(func(v versionView, dst []byte) ([]byte, bool) {
			return strconv.AppendInt(dst, v.node.Size, 10), true
		}),
		ocName("size"): versionOnly(func(v versionView, dst []byte) ([]byte, bool) {
			return strconv.AppendInt(dst, v.node.Size, 10), true
		}),
		davName("getcontenttype"): versionOnly(func(v versionView, dst []byte) ([]byte, bool) { return text(dst, contentType(*v.node)) }),
		ocName("checksums"): versionOnly(func(v versionView, dst []byte) ([]byte, bool) {
			return propChecksums(nil, &nodeView{node: v.node}, dst)
		}),
	},
	allprop: []xml.Name{
		davName("resourcetype"), davName("getetag"), davName("getlastmodified"),
		davName("getcontentlength"), ocName("size"), davName("getcontenttype"), ocName("checksums"),
	},
}

// versionOnly makes a property of versions, which the …/v collection
// does not have.
func versionOnly(p fixedProp[versionView]) fixedProp[versionView] {
	return func(v versionView, dst []byte) ([]byte, bool) {
		if v.node == nil {
			return dst, false
		}
		return p(v, dst)
	}
}

// versionNode is version v of file as a node: the file's id, space and
// name (a version keeps none), with the version's content's state.
func versionNode(file storage.Node, v storage.Version) storage.Node {
	n := v.Node
	n.ID, n.SpaceID, n.ParentID, n.Name, n.Kind = file.ID, file.SpaceID, file.ParentID, file.Name, storage.KindFile
	return n
}

// handleVersionsPropfind lists the versions of file t (…/v, Depth 1: the
// collection, then one response per version, newest first) or describes
// one (…/v/{key}).
func (h *Handler) handleVersionsPropfind(w http.ResponseWriter, r *http.Request, req *request, t *target, key string) error {
	depth, pf, err := h.readListingPropfind(w, r)
	if err != nil {
		return err
	}
	if key != "" {
		if err := storage.ValidVersionKey(t.node.ID, key); err != nil {
			return err
		}
	}
	var versions []storage.Version
	if key != "" || depth > 0 {
		if versions, err = h.versions.FileVersions(r.Context(), t.space.ID, t.node.ID); err != nil {
			return err
		}
	}
	collectionHref := req.path.versionsHref()
	if key != "" {
		i := slices.IndexFunc(versions, func(v storage.Version) bool { return v.Key == key })
		if i < 0 {
			return storage.VersionNotFound(t.node.ID, key)
		}
		versions = versions[i : i+1]
	}
	ms := davxml.StartMultistatus(w, davxml.MultistatusBuffer, &h.responseBuffers)
	var ps propSet
	if key == "" {
		versionProps.writeResponse(ms, &ps, pf, davxml.Href{Base: collectionHref, Slash: true}, versionView{})
	}
	for _, v := range versions {
		node := versionNode(t.node, v)
		href := davxml.Href{Base: collectionHref, Segment: escapeSegment(v.Key)}
		versionProps.writeResponse(ms, &ps, pf, href, versionView{node: &node})
	}
	return h.endMultistatus(r, ms.Close())
}

// handleVersionGet sends a version's content as a GET of the file sends
// the file's: ranges and conditional requests against the version's etag
// and modification time.
func (h *Handler) handleVersionGet(w http.ResponseWriter, r *http.Request, t *target, key string) error {
	if err := storage.ValidVersionKey(t.node.ID, key); err != nil {
		return err
	}
	v, content, err := h.versions.OpenVersion(r.Context(), t.space.ID, t.node.ID, key)
	if err != nil {
		return err
	}
	defer content.Close()
	return h.sendContent(w, r, versionNode(t.node, v), content)
}

// restoredChild is the file a version restore through its folder names.
// ownCloud Web restores with COPY …/meta/{the file's parent folder}/v/{key}
// and names the file only as the last segment of Destination
// (web-client/src/webdav/restoreFileVersion.ts passes parentFolderId);
// oCIS finds the file by the key, which here names no file.
func (h *Handler) restoredChild(r *http.Request, folder *target) (*target, error) {
	dst, err := url.Parse(r.Header.Get("Destination"))
	if err != nil || r.Header.Get("Destination") == "" {
		return nil, errNotFound
	}
	name := path.Base(dst.Path)
	if name == "/" || name == "." || name == ".." {
		return nil, errNotFound
	}
	child, err := h.store.Child(r.Context(), folder.space.ID, folder.node.ID, name)
	if errors.Is(err, storage.ErrNotFound) || err == nil && child.IsFolder() {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("the file %q of folder %s: %w", name, folder.node.ID, err)
	}
	file := *folder
	file.parent, file.hasParent = folder.node, true
	file.node, file.name = child, child.Name
	file.hrefPath = path.Join(folder.hrefPath, child.Name)
	return &file, nil
}

// handleVersionRestore makes version key the content of file t again
// (204); the content it replaces becomes the newest version. It is a
// write of the file, guarded as a PUT to it is: its locks, If-Match and
// If-None-Match. The Destination header, which clients set to the file,
// is not read: the version names its file.
func (h *Handler) handleVersionRestore(w http.ResponseWriter, r *http.Request, req *request, t *target, key string) error {
	if !t.access.mayChange() {
		return errNoVersionRestore
	}
	if err := storage.ValidVersionKey(t.node.ID, key); err != nil {
		return err
	}
	cond, err := h.changeConditions(r, req, t, written(t)...)
	if err != nil {
		return err
	}
	node, err := h.versions.RestoreVersion(r.Context(), t.space.ID, t.node.ID, key, cond)
	if err != nil {
		return err
	}
	h.setNodeHeaders(r.Context(), w, node)
	w.WriteHeader(http.StatusNoContent)
	return nil
}
