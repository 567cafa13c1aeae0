package davhandler

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/storage"
)

// The trash-bin of a space, where ownCloud clients look for it
// (/dav/spaces/trash-bin/{space}, as oCIS serves it): PROPFIND lists the
// deleted items and, below a deleted folder, its children; MOVE restores
// an item or a node below one into the space; DELETE purges an item, or
// on the trash root every item.

// The refusals of the trash-bin to members who may not use it.
var (
	errTrashReadOnly = errorf(http.StatusForbidden, "You have no permission to change this space, nor to see or restore what was deleted from it")
	errNoPurge       = errorf(http.StatusForbidden, "You have no permission to purge the trash-bin of this space")
	// errOverwriteRefused is oCIS' answer to a restore onto an existing
	// name without Overwrite.
	errOverwriteRefused = &davError{status: http.StatusPreconditionFailed,
		message: "The destination node already exists, and the overwrite header is set to false", header: "Overwrite"}
)

// trashRequest is a request to the trash-bin of a space the caller may use.
type trashRequest struct {
	*request
	space storage.Space
	// access is the caller's, by their role in the space.
	access access
	// trash is the store's trash as the request's scope narrows it.
	trash storage.Trash
}

// key is the trash key the path names, "" for the trash root.
func (tr *trashRequest) key() string {
	if len(tr.path.segments) == 0 {
		return ""
	}
	return tr.path.segments[0]
}

// below are the names the path leads to below its trash item.
func (tr *trashRequest) below() []string {
	if len(tr.path.segments) < 2 {
		return nil
	}
	return tr.path.segments[1:]
}

// node reads the trash item the path names and the node it leads to in
// it (the item's own for no names below), with the item's key.
func (tr *trashRequest) node(ctx context.Context) (key string, item storage.TrashItem, node storage.Node, err error) {
	key = tr.key()
	if err := storage.ValidTrashKey(key); err != nil {
		return "", storage.TrashItem{}, storage.Node{}, err
	}
	item, node, err = tr.trash.TrashNode(ctx, tr.space.ID, key, tr.below())
	return key, item, node, err
}

func (h *Handler) serveTrash(w http.ResponseWriter, r *http.Request, req *request) error {
	if h.trash == nil {
		return errNotFound
	}
	tr, err := h.trashOf(r.Context(), req)
	if err != nil {
		return err
	}
	switch r.Method {
	case "PROPFIND":
		return h.handleTrashPropfind(w, r, tr)
	case "MOVE":
		return h.handleTrashRestore(w, r, tr)
	case http.MethodDelete:
		return h.handleTrashPurge(w, r, tr)
	}
	// oCIS answers 501; every other resource here that does not take a
	// method says 405 and what it takes, as uploads do.
	return methodNotAllowed(trashAllow(req.path.segments), r.Method+" is not allowed on the trash-bin")
}

// trashOf finds the space whose trash-bin a request names. A space the
// caller may not see answers 404, whatever the method and the key, so
// that neither the space nor its trash items can be told from nothing.
func (h *Handler) trashOf(ctx context.Context, req *request) (*trashRequest, error) {
	if req.path.nextcloud {
		// Nextcloud's trash of the caller: their personal space's.
		space, err := h.store.PersonalSpace(ctx, req.user)
		if err != nil {
			return nil, err
		}
		return h.trashRequestOf(req, space), nil
	}
	space, nodeID, err := h.spaceByRef(ctx, req.path.ref)
	if err != nil {
		return nil, err
	}
	if !h.visible(ctx, space, req.user) {
		return nil, errNotFound
	}
	if nodeID != "" && nodeID != space.ID {
		return nil, errorf(http.StatusBadRequest, "Invalid space id %q: a trash-bin is named by its space's id, not by a file's", req.path.ref)
	}
	return h.trashRequestOf(req, space), nil
}

// trashRequestOf is req's request of space's trash-bin, which it reads
// and changes through the user's scope.
func (h *Handler) trashRequestOf(req *request, space storage.Space) *trashRequest {
	return &trashRequest{request: req, space: space, access: memberAccess(space.RoleOf(req.user)),
		trash: storage.ScopedTrash(h.trash, req.user.Scope)}
}

// handleTrashPropfind lists the trash root (Depth 1: with one response per
// item), an item, or a node below one (Depth 1: with a deleted folder's
// children, so that one file can be restored from it).
func (h *Handler) handleTrashPropfind(w http.ResponseWriter, r *http.Request, tr *trashRequest) error {
	if !tr.access.mayUseTrash() {
		return errTrashReadOnly
	}
	depth, pf, err := h.readListingPropfind(w, r)
	if err != nil {
		return err
	}
	tl := &trashListing{storageID: h.store.StorageID(), space: tr.space, access: tr.access}
	tl.spaceRef = appendSpaceRef(nil, tl.storageID, tr.space.ID)
	if tr.key() == "" {
		return h.writeTrashRoot(w, r, tr, tl, pf, depth)
	}
	return h.writeTrashNode(w, r, tr, tl, pf, depth)
}

// maxTrashPage bounds the page a client asks the trash root for.
const maxTrashPage = 1000

// trashPage is the part of the trash a PROPFIND of its root asks for:
// every item (limit 0), streamed, as oCIS' clients expect; or, with the
// query ?limit=N[&after=KEY], N items after the item KEY, the answer
// naming the next page in a Link header (rel="next") unless it is the
// last.
type trashPage struct {
	after string
	limit int
}

// parseTrashPage reads the page a trash root's URL asks for: 400 for a
// limit that is not 1 to maxTrashPage or an after that is not a key.
func parseTrashPage(r *http.Request) (trashPage, error) {
	q := r.URL.Query()
	p := trashPage{after: q.Get("after")}
	if !q.Has("limit") {
		if q.Has("after") {
			return trashPage{}, errorf(http.StatusBadRequest, "after pages the trash: give a limit with it")
		}
		return p, nil
	}
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit < 1 || limit > maxTrashPage {
		return trashPage{}, errorf(http.StatusBadRequest, "limit %.32q: a page of the trash is 1 to %d items", q.Get("limit"), maxTrashPage)
	}
	p.limit = limit
	if _, err := storage.ParseTrashCursor(p.after); err != nil {
		return trashPage{}, errorf(http.StatusBadRequest, "after %.64q is not the key of a trash item", p.after)
	}
	return p, nil
}

// nextLink is the Link header that names the page after items: a
// reference relative to the request's URL, which holds whatever prefix a
// proxy in front strips.
func (p trashPage) nextLink(items []storage.TrashItem) string {
	q := url.Values{"limit": {strconv.Itoa(p.limit)}, "after": {items[len(items)-1].Key}}
	return "<?" + q.Encode() + `>; rel="next"`
}

// writeTrashRoot answers a PROPFIND of the trash root: the root, then,
// when depth is 1, the items of the page asked for, every item when none
// is. The first page is read before the 207 goes out, so that a failure
// there still gets its status.
func (h *Handler) writeTrashRoot(w http.ResponseWriter, r *http.Request, tr *trashRequest, tl *trashListing, pf propfindRequest, depth int) error {
	page, err := parseTrashPage(r)
	if err != nil {
		return err
	}
	var first []storage.TrashItem
	if depth > 0 {
		if first, err = tr.trash.TrashItems(r.Context(), tr.space.ID, page.after, page.firstLimit()); err != nil {
			return err
		}
		if page.limit > 0 && len(first) == page.limit {
			w.Header().Set("Link", page.nextLink(first))
		}
	}
	out := h.startTrashResponses(w, pf)
	rootHref := hrefFor(tr.path.base, true)
	out.write(davxml.Href{Base: rootHref}, trashView{tl: tl})
	if depth > 0 {
		err = writeTrashItems(r.Context(), tr, out, tl, strings.TrimSuffix(rootHref, "/"), page, first)
	}
	if err == nil {
		err = out.ms.Close()
	}
	return h.endMultistatus(r, err)
}

// firstLimit is the size of the first page to read: the one asked for,
// or a folder listing's first.
func (p trashPage) firstLimit() int {
	if p.limit > 0 {
		return p.limit
	}
	return firstReadDirPage
}

// writeTrashItems writes the items of page, starting with first, its
// first page as read. A complete listing reads the next pages as it
// writes, each in a read of its own, so that neither the items nor a
// store transaction are held while the client reads; an item restored or
// purged meanwhile may be left out, none comes twice.
func writeTrashItems(ctx context.Context, tr *trashRequest, out *trashResponses, tl *trashListing, base string, page trashPage, first []storage.TrashItem) error {
	items, limit := first, page.firstLimit()
	for {
		for i := range items {
			it := &items[i]
			href := davxml.Href{Base: base, Segment: escapeSegment(it.Key), Slash: it.Node.IsFolder()}
			out.write(href, trashView{tl: tl, node: &it.Node, location: it.Location, deleted: it.Deleted})
		}
		if page.limit > 0 || len(items) < limit {
			return nil
		}
		after := items[len(items)-1].Key
		limit = readDirPage
		var err error
		if items, err = tr.trash.TrashItems(ctx, tr.space.ID, after, limit); err != nil {
			return err
		}
	}
}

// writeTrashNode answers a PROPFIND of an item or of a node below one:
// the node, then, for a folder at depth 1, its children a page at a time.
func (h *Handler) writeTrashNode(w http.ResponseWriter, r *http.Request, tr *trashRequest, tl *trashListing, pf propfindRequest, depth int) error {
	key, item, node, err := tr.node(r.Context())
	if err != nil {
		return err
	}
	view := trashView{tl: tl, node: &node, location: trashLocation(item, tr.below()), deleted: item.Deleted}
	out := h.startTrashResponses(w, pf)
	href := hrefFor(tr.path.base+"/"+strings.Join(tr.path.segments, "/"), node.IsFolder())
	out.write(davxml.Href{Base: href}, view)
	if node.IsFolder() && depth > 0 {
		err = writeTrashChildren(r.Context(), tr.trash, out, view, key, strings.TrimSuffix(href, "/"))
	}
	if err == nil {
		err = out.ms.Close()
	}
	return h.endMultistatus(r, err)
}

// trashResponses is where the responses of a PROPFIND in the trash go:
// the 207, the properties asked for and the set they are collected in.
type trashResponses struct {
	ms *davxml.Multistatus
	ps propSet
	pf propfindRequest
}

// startTrashResponses sends the 207 of a PROPFIND in the trash.
func (h *Handler) startTrashResponses(w http.ResponseWriter, pf propfindRequest) *trashResponses {
	return &trashResponses{ms: davxml.StartMultistatus(w, davxml.MultistatusBuffer, &h.responseBuffers), pf: pf}
}

// write writes the response of one trash item or node.
func (out *trashResponses) write(href davxml.Href, v trashView) {
	trashProps.writeResponse(out.ms, &out.ps, out.pf, href, v)
}

// writeTrashChildren streams the children of the deleted folder of
// parent, within trash item key of trash, page by page. A folder restored or
// purged while it is listed ends its listing; what was sent stays
// well-formed.
func writeTrashChildren(ctx context.Context, trash storage.Trash, out *trashResponses, parent trashView, key, parentHref string) error {
	read := func(after string, limit int) ([]storage.Node, error) {
		return trash.ReadTrashDir(ctx, parent.tl.space.ID, key, parent.node.ID, after, limit)
	}
	return readPages(read, nodeName, func(page []storage.Node) error {
		for i := range page {
			child := &page[i]
			view := parent
			view.node, view.location = child, parent.location+"/"+child.Name
			out.write(childHref(parentHref, *child), view)
		}
		return nil
	})
}

// nodeName is the name readPages pages a listing of nodes by.
func nodeName(n *storage.Node) string { return n.Name }

// trashLocation is where the node names lead to below item was.
func trashLocation(item storage.TrashItem, names []string) string {
	if len(names) == 0 {
		return item.Location
	}
	return item.Location + "/" + strings.Join(names, "/")
}

// handleTrashRestore restores an item, or a node below one, to the
// Destination, a place in the same space: 201 at a free name, 204 over
// an existing node (which goes to the trash in turn).
func (h *Handler) handleTrashRestore(w http.ResponseWriter, r *http.Request, tr *trashRequest) error {
	if tr.key() == "" {
		return methodNotAllowed(allowedOnTrash, "MOVE restores one trash item: name it by its key")
	}
	if !tr.access.mayUseTrash() {
		return errTrashReadOnly
	}
	overwrite, err := parseOverwrite(r)
	if err != nil {
		return err
	}
	dstPath, err := parseDestination(r)
	if err != nil {
		return err
	}
	key, item, node, err := tr.node(r.Context())
	if err != nil {
		return err
	}
	if dstPath.kind == baseRestore {
		// Nextcloud's clients restore to …/restore/{name}: where the
		// item was.
		if dstPath.notCaller(tr.user.ID) {
			return errorf(http.StatusBadRequest, "the Destination %s is another user's", dstPath.base)
		}
		dstPath = h.originalPlace(tr.space, trashLocation(item, tr.below()))
	}
	dst, err := h.resolve(r.Context(), tr.user, dstPath)
	if err != nil {
		return err
	}
	t, err := restoreTransfer(tr.space, node, dst, overwrite)
	if err != nil {
		return err
	}
	cond, err := h.changeConditions(r, tr.request, dst, replaced(dst)...)
	if err != nil {
		return err
	}
	// The store repeats what guards the destination (whether it exists,
	// and its locks) with the restore; If-Match was about the request's
	// state, which the check above has seen.
	t.IfNoneMatch, t.Locks = cond.IfNoneMatch, cond.Locks
	restored, replacedTarget, err := tr.trash.RestoreTrash(r.Context(), tr.space.ID, key, t)
	if errors.Is(err, storage.ErrExists) {
		return withCause(errOverwriteRefused, err)
	}
	if errors.Is(err, storage.ErrConflict) {
		return &davError{status: http.StatusConflict, message: "The parent collection of the destination does not exist", cause: err}
	}
	if err != nil {
		return err
	}
	h.answerPlaced(r.Context(), w, restored, replacedTarget)
	return nil
}

// restoreTransfer checks the destination dst of a restore of node into
// space and names its target, as transferOf does for a MOVE.
func restoreTransfer(space storage.Space, node storage.Node, dst *target, overwrite bool) (storage.Transfer, error) {
	t := storage.Transfer{NodeID: node.ID, Overwrite: overwrite}
	switch {
	case dst.space.ID != space.ID:
		return t, errorf(http.StatusBadGateway, "cross-space restores are not supported: restore into the space the item was deleted from")
	case dst.exists && dst.node.ParentID == "":
		return t, errorf(http.StatusForbidden, "the root of a space can not be replaced")
	case dst.exists && !overwrite:
		return t, errOverwriteRefused
	}
	var err error
	if t.NewParentID, t.NewName, err = dst.placement(); err != nil {
		return t, err
	}
	if !dst.mayPlace(true) {
		return t, errReadOnly
	}
	return t, nil
}

// handleTrashPurge destroys an item (DELETE …/{key}) or every item
// (DELETE on the trash root): what purging frees is given back at once.
func (h *Handler) handleTrashPurge(w http.ResponseWriter, r *http.Request, tr *trashRequest) error {
	if !tr.access.mayUseTrash() {
		return errTrashReadOnly
	}
	if !tr.access.mayPurge() {
		return errNoPurge
	}
	key := tr.key()
	var err error
	switch {
	case key == "":
		err = tr.trash.EmptyTrash(r.Context(), tr.space.ID)
	case len(tr.below()) > 0:
		err = h.refusePurgeBelow(r.Context(), tr)
	default:
		if err = storage.ValidTrashKey(key); err == nil {
			err = tr.trash.PurgeTrash(r.Context(), tr.space.ID, key)
		}
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// refusePurgeBelow answers a DELETE of a node below a trash item: only
// whole items are purged. A node that is not there is 404 first.
func (h *Handler) refusePurgeBelow(ctx context.Context, tr *trashRequest) error {
	if err := storage.ValidTrashKey(tr.key()); err != nil {
		return err
	}
	if _, _, err := tr.trash.TrashNode(ctx, tr.space.ID, tr.key(), tr.below()); err != nil {
		return err
	}
	return methodNotAllowed(allowedInTrashItem, "only a whole trash item can be purged: DELETE its key")
}

// originalPlace is the path in space of location, where a trashed node was.
func (h *Handler) originalPlace(space storage.Space, location string) davPath {
	ref := resourceid.Space(h.store.StorageID(), space.ID).String()
	return davPath{kind: baseSpaces, ref: ref, base: "/dav/spaces/" + ref, segments: strings.Split(location, "/")}
}
