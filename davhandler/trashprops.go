package davhandler

import (
	"encoding/xml"
	"slices"
	"strconv"
	"time"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/storage"
)

// The trash-bin, the versions of a file and the meta resource are no nodes
// of a space: each answers PROPFIND from a fixed table of properties
// (fixedProps) rather than from liveProps and dead properties.

// fixedProp appends the XML content of one property of v to dst; ok=false
// when v does not have it (it is then reported in the 404 propstat).
type fixedProp[V any] func(v V, dst []byte) (out []byte, ok bool)

// fixedProps are the properties resources of one kind (trash items,
// versions) answer, and those an allprop request returns, in order.
type fixedProps[V any] struct {
	props   map[xml.Name]fixedProp[V]
	allprop []xml.Name
}

// writeResponse writes the d:response of v at href for pf, as writeNode
// does for a node; ps is reused by every response of a request.
func (fp *fixedProps[V]) writeResponse(ms *davxml.Multistatus, ps *propSet, pf propfindRequest, href davxml.Href, v V) {
	ms.BeginResponseAt(href)
	ps.reset()
	if pf.kind != findProp {
		for _, n := range fp.allprop {
			start := len(ps.values)
			out, ok := fp.props[n](v, ps.values)
			ps.keep(n, start, out, ok)
		}
	}
	if pf.kind != findPropname {
		// The names of a d:prop, or the d:include of an allprop.
		shown := len(ps.found)
		for _, n := range pf.names {
			if slices.ContainsFunc(ps.found[:shown], func(f foundProp) bool { return f.name == n }) {
				continue
			}
			fp.collect(ms, ps, n, v)
		}
	}
	ps.write(ms, pf.kind == findPropname)
	ms.EndResponse()
}

// collect records property n of v in ps, or as missing in ms.
func (fp *fixedProps[V]) collect(ms *davxml.Multistatus, ps *propSet, n xml.Name, v V) {
	prop, known := fp.props[n]
	if !known {
		ms.NotFound(n)
		return
	}
	start := len(ps.values)
	out, ok := prop(v, ps.values)
	if !ps.keep(n, start, out, ok) {
		ms.NotFound(n)
	}
}

// trashView is one resource of a trash-bin listing: the trash root (node
// nil), an item, or a node below an item.
type trashView struct {
	tl *trashListing
	// node is the trashed node, nil for the trash root.
	node *storage.Node
	// location is where node was in its space when it was deleted, from
	// the space's root, without a leading "/".
	location string
	deleted  time.Time
}

// trashListing is what every response of one trash-bin PROPFIND shares.
type trashListing struct {
	storageID string
	space     storage.Space
	access    access
	// spaceRef is the id of the space, as XML text.
	spaceRef []byte
}

// trashProps are the properties of the trash root and the deleted items,
// as oCIS names them (oc:trashbin-*), with the live properties of a node
// that still describe a deleted one.
var trashProps = fixedProps[trashView]{
	props: map[xml.Name]fixedProp[trashView]{
		ocName("trashbin-original-filename"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) { return text(dst, v.node.Name) }),
		ocName("trashbin-original-location"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) { return text(dst, v.location) }),
		ocName("trashbin-delete-timestamp"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) {
			return strconv.AppendInt(dst, v.deleted.Unix(), 10), true
		}),
		ocName("trashbin-delete-datetime"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) {
			return appendHTTPDate(dst, v.deleted), true
		}),
		// Nextcloud's names of the same (its Android app's trash bin).
		ncName("trashbin-filename"):          trashedOnly(func(v trashView, dst []byte) ([]byte, bool) { return text(dst, v.node.Name) }),
		ncName("trashbin-original-location"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) { return text(dst, v.location) }),
		ncName("trashbin-deletion-time"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) {
			return strconv.AppendInt(dst, v.deleted.Unix(), 10), true
		}),
		ocName("spaceid"):  func(v trashView, dst []byte) ([]byte, bool) { return append(dst, v.tl.spaceRef...), true },
		ocName("id"):       trashedOnly(trashFileID),
		ocName("fileid"):   trashedOnly(trashFileID),
		ocName("size"):     trashedOnly(func(v trashView, dst []byte) ([]byte, bool) { return strconv.AppendInt(dst, v.node.Size, 10), true }),
		davName("getetag"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) { return propETag(nil, &nodeView{node: v.node}, dst) }),
		davName("getlastmodified"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) {
			return appendHTTPDate(dst, v.node.ModTime), true
		}),
		davName("getcontentlength"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) {
			if v.node.IsFolder() {
				return dst, false
			}
			return strconv.AppendInt(dst, v.node.Size, 10), true
		}),
		davName("resourcetype"): func(v trashView, dst []byte) ([]byte, bool) {
			if v.node == nil || v.node.IsFolder() {
				return append(dst, "<d:collection/>"...), true
			}
			return dst, true
		},
		davName("getcontenttype"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) {
			if v.node.IsFolder() {
				return text(dst, folderContentType)
			}
			return text(dst, contentType(*v.node))
		}),
		ocName("permissions"): trashedOnly(func(v trashView, dst []byte) ([]byte, bool) {
			return appendPermissions(dst, v.tl.access, v.node.IsFolder(), false), true
		}),
	},
	allprop: []xml.Name{
		ocName("trashbin-original-filename"), ocName("trashbin-original-location"),
		ocName("trashbin-delete-timestamp"), ocName("trashbin-delete-datetime"),
		ocName("spaceid"), ocName("id"), ocName("fileid"), ocName("size"),
		davName("getetag"), davName("getlastmodified"), davName("getcontentlength"),
		davName("resourcetype"), davName("getcontenttype"), ocName("permissions"),
	},
}

// folderContentType is the content type ownCloud gives folders.
const folderContentType = "httpd/unix-directory"

// trashedOnly makes a property of deleted nodes, which the trash root does
// not have.
func trashedOnly(p fixedProp[trashView]) fixedProp[trashView] {
	return func(v trashView, dst []byte) ([]byte, bool) {
		if v.node == nil {
			return dst, false
		}
		return p(v, dst)
	}
}

// trashFileID is the resource id a deleted node has again once restored:
// its id is kept, and so is its space.
func trashFileID(v trashView, dst []byte) ([]byte, bool) {
	dst = append(dst, v.tl.spaceRef...)
	return resourceid.AppendNode(dst, v.node.ID, davxml.AppendText), true
}
