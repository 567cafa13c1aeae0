package davhandler

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/internal/origin"
	"github.com/davspaces/davspaces/storage"
)

// Children are read from the store a page at a time, which bounds the
// memory a listing holds whatever the folder's size. The first page is
// small, enough for most folders; the next ones are larger, so that a big
// folder costs few pages.
const (
	firstReadDirPage = 128
	readDirPage      = 512
)

// readPages reads a folder's children with read, a page at a time (first
// small, then larger) each after the name nameOf gives the last child of
// the page before, and hands each page to each. A folder gone meanwhile
// (storage.ErrNotFound) ends the listing without an error: what was sent
// of it stays well-formed.
func readPages[T any](read func(after string, limit int) ([]T, error), nameOf func(*T) string, each func(page []T) error) error {
	after := ""
	for limit := firstReadDirPage; ; limit = readDirPage {
		page, err := read(after, limit)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := each(page); err != nil {
			return err
		}
		if len(page) < limit {
			return nil
		}
		after = nameOf(&page[len(page)-1])
	}
}

func (h *Handler) handlePropfind(w http.ResponseWriter, r *http.Request, req *request) error {
	depth, err := parseDepth(r, depthInfinity)
	if err != nil {
		return err
	}
	if depth == depthInfinity && !h.depthInfinity {
		return errorf(http.StatusBadRequest, "Depth infinity is disabled on this server: send Depth 0 or 1 (a missing Depth header means infinity)")
	}
	pf, err := h.readPropfind(w, r)
	if err != nil {
		return err
	}
	t, err := h.resolveExisting(r.Context(), req.user, req.path)
	if err != nil {
		return err
	}
	if t.isSharesRoot() {
		return h.propfindSharesRoot(w, r, req, t, pf, depth)
	}
	if !t.access.mayRead() && !t.isBase {
		return errNotFound
	}
	if !t.access.mayList() {
		// A file drop answers its root alone.
		depth = 0
	}
	if h.uploads != nil && t.node.IsFolder() {
		// ownCloud clients learn here that they may upload into it with TUS.
		setTusDiscovery(w.Header())
		if err := h.setTusMaxSize(r.Context(), w.Header(), t.space); err != nil {
			return err
		}
	}
	pc := h.newPropContext(r, req, t, pf)
	target, err := pc.targetView(t)
	if err != nil {
		// Nothing is sent yet: a target gone meanwhile is still a 404.
		return err
	}
	if pc.locking && wantsLockDiscovery(pf) {
		if err := pc.loadLocks(h.locks, target); err != nil {
			return err
		}
	}
	listing := t.node.IsFolder() && depth != 0
	buffer := davxml.MultistatusBuffer
	if listing {
		buffer = davxml.ListingBuffer
	}
	ms := davxml.StartMultistatus(w, buffer, &h.responseBuffers)
	err = pc.writeNode(ms, pf, target, davxml.Href{Base: t.href()})
	if err == nil && listing {
		err = h.writeChildren(pc, ms, pf, target, t.hrefPath, depth)
	}
	if err == nil {
		err = ms.Close()
	}
	return h.endMultistatus(r, err)
}

func (h *Handler) newPropContext(r *http.Request, req *request, t *target, pf propfindRequest) *propContext {
	pc := &propContext{
		ctx:       r.Context(),
		store:     h.store,
		storageID: h.store.StorageID(),
		space:     t.space,
		access:    t.access,
		share:     t.share,
		user:      req.user,
		linkBase:  origin.Of(r),
		locking:   h.locks != nil,

		spaceRef:      appendSpaceRef(nil, h.store.StorageID(), t.space.ID),
		withDeadProps: needsDeadProps(pf),
		requested:     resolveProps(pf.names),
		missing:       make([]int, 0, len(pf.names)),
	}
	if linkOf(r.Context()) != nil {
		// Every node a link's request sees is in the request's space, so
		// every id names the links' space instead (clientResourceID).
		pc.spaceRef = []byte(publicLinkSpaceRef)
	}
	return pc
}

// wantsLockDiscovery reports whether answering pf shows d:lockdiscovery,
// the one property that needs the locks read.
func wantsLockDiscovery(pf propfindRequest) bool {
	if pf.kind != findProp {
		return true
	}
	return slices.Contains(pf.names, davName("lockdiscovery"))
}

// needsDeadProps reports whether answering pf reads dead properties or
// favourites, which are then read together with each page of children.
func needsDeadProps(pf propfindRequest) bool {
	if pf.kind != findProp {
		return true
	}
	for _, n := range pf.names {
		if _, live := liveProps[n]; !live || n == favoriteName {
			return true
		}
	}
	return false
}

// targetView is the node a PROPFIND names, with its dead properties read
// before the 207 goes out, when they are needed.
func (pc *propContext) targetView(t *target) (*nodeView, error) {
	v := &nodeView{node: &t.node}
	if pc.withDeadProps {
		if _, err := pc.deadProps(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// writeChildren streams the responses of a folder's children, page by page,
// descending into sub-folders for Depth: infinity. A folder deleted while it
// is listed ends its listing; what was sent stays well-formed.
func (h *Handler) writeChildren(pc *propContext, ms *davxml.Multistatus, pf propfindRequest, parent *nodeView, folderPath string, depth int) error {
	folder := parent.node
	inherited := deepLocks(parent.locks)
	parentHref := escapePath(folderPath)
	// The views of a page are kept for the next: a sub-folder's listing,
	// for Depth: infinity, has its own.
	var views []nodeView
	read := func(after string, limit int) ([]nodeView, error) {
		var err error
		views, err = pc.readChildren(views[:0], *folder, after, limit)
		return views, err
	}
	nameOf := func(v *nodeView) string { return v.node.Name }
	return readPages(read, nameOf, func(page []nodeView) error {
		for i := range page {
			child := &page[i]
			child.locks = pc.locks.covering(inherited, child.node.ID)
			href := childHref(parentHref, *child.node)
			if err := pc.writeNode(ms, pf, child, href); err != nil {
				return err
			}
			if child.node.IsFolder() && depth == depthInfinity {
				if err := h.writeChildren(pc, ms, pf, child, folderPath+"/"+child.node.Name, depth); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// readChildren appends to views a page of a folder's children, with their
// dead properties from the same snapshot when the listing needs them, so
// that a child deleted meanwhile is either complete or absent.
func (pc *propContext) readChildren(views []nodeView, folder storage.Node, after string, limit int) ([]nodeView, error) {
	if !pc.withDeadProps {
		nodes, err := pc.store.ReadDir(pc.ctx, folder.SpaceID, folder.ID, after, limit)
		if err != nil {
			return nil, fmt.Errorf("listing folder %s: %w", folder.ID, err)
		}
		// Room for the page at once, rather than growing by doubling.
		views = slices.Grow(views, len(nodes))
		for i := range nodes {
			views = append(views, nodeView{node: &nodes[i]})
		}
		return views, nil
	}
	entries, err := pc.store.ReadDirProps(pc.ctx, folder.SpaceID, folder.ID, pc.user.ID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("listing folder %s with properties: %w", folder.ID, err)
	}
	views = slices.Grow(views, len(entries))
	for i := range entries {
		views = append(views, nodeView{node: &entries[i].Node, props: entries[i].Props, loaded: true})
	}
	return views, nil
}
