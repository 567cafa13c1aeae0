package davhandler

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/shareid"
	"github.com/davspaces/davspaces/storage"
)

// sharesSpace is the Shares drive as a space: a virtual one, which no
// store keeps, without a quota.
var sharesSpace = storage.Space{ID: shareid.Jail, Type: "virtual", Name: "Shares", Quota: storage.NoQuota}

// sharesRootTarget is the target of the Shares drive's root, or of a free
// name in it (one segment): a folder that may be listed and read, where
// nothing may be created.
func sharesRootTarget(b base) *target {
	root := sharesRootNode(b.sharesRoot)
	t := &target{space: sharesSpace, access: memberAccess(storage.RoleViewer), mounts: b.sharesRoot,
		node: root, exists: true, isBase: true, hrefPath: b.hrefPath}
	if len(b.segments) == 1 {
		t.parent, t.hasParent = root, true
		t.exists, t.isBase, t.name = false, false, b.segments[0]
		t.hrefPath += "/" + t.name
	}
	return t
}

// isSharesRoot reports whether t is the root of the Shares drive.
func (t *target) isSharesRoot() bool { return t.exists && t.node.SpaceID == shareid.Jail }

// sharesRootNode is the root of the Shares drive as a folder: its size
// and time those of its mount points, its etag changing with any of them.
func sharesRootNode(mounts []received) storage.Node {
	n := storage.Node{ID: shareid.Jail, SpaceID: shareid.Jail, Kind: storage.KindFolder}
	sum := sha256.New()
	for _, m := range mounts {
		n.Size += m.item.Size
		if m.item.ModTime.After(n.ModTime) {
			n.ModTime = m.item.ModTime
		}
		sum.Write([]byte(m.name + "\x00" + m.item.ETag + "\x00" + strconv.Itoa(int(m.access.may)) + "\x00"))
	}
	n.ETag = hex.EncodeToString(sum.Sum(nil)[:16])
	return n
}

// propfindSharesRoot answers a PROPFIND of the Shares drive's root: the
// root, then for Depth 1 each mount point, named as in the drive, with
// the props its share gives (and below them for Depth infinity).
func (h *Handler) propfindSharesRoot(w http.ResponseWriter, r *http.Request, req *request, t *target, pf propfindRequest, depth int) error {
	pc := h.newPropContext(r, req, t, pf)
	pc.storageID = shareid.Jail
	pc.spaceRef = appendSpaceRef(nil, shareid.Jail, shareid.Jail)
	root := &nodeView{node: &t.node, loaded: true}
	ms := davxml.StartMultistatus(w, davxml.ListingBuffer, &h.responseBuffers)
	err := pc.writeNode(ms, pf, root, davxml.Href{Base: t.href()})
	l := &mountListing{r: r, req: req, ms: ms, pf: pf, rootHref: escapePath(t.hrefPath), rootPath: t.hrefPath, depth: depth}
	for i := 0; err == nil && depth != 0 && i < len(t.mounts); i++ {
		err = h.writeMount(l, &t.mounts[i])
	}
	if err == nil {
		err = ms.Close()
	}
	return h.endMultistatus(r, err)
}

// mountListing is a PROPFIND of the Shares drive's root, which each mount
// point is written into.
type mountListing struct {
	r   *http.Request
	req *request
	ms  *davxml.Multistatus
	pf  propfindRequest
	// rootHref is the root's href, escaped; rootPath its path.
	rootHref, rootPath string
	depth              int
}

// writeMount writes the response of one mount point of the Shares drive,
// and for Depth infinity everything below it.
func (h *Handler) writeMount(l *mountListing, m *received) error {
	mt := &target{space: m.space, access: m.access, share: shareReach{root: m.item.ID, mounted: true}}
	mt.access = mt.share.atNode(mt.access, m.item.ID, true)
	pc := h.newPropContext(l.r, l.req, mt, l.pf)
	node := m.item
	node.Name = m.name
	v := &nodeView{node: &node}
	if pc.withDeadProps {
		_, err := pc.deadProps(v)
		if errors.Is(err, storage.ErrNotFound) {
			// Deleted since the drive was read: no longer shared.
			return nil
		}
		if err != nil {
			return err
		}
	}
	if err := pc.writeNode(l.ms, l.pf, v, childHref(l.rootHref, node)); err != nil {
		return err
	}
	if node.IsFolder() && l.depth == depthInfinity {
		// Below the mount point the share's access holds, with delete.
		pc.access = m.access
		return h.writeChildren(pc, l.ms, l.pf, v, l.rootPath+"/"+m.name, l.depth)
	}
	return nil
}

// isMountPoint reports whether v is the mount point the request came
// through (oc:permissions "M").
func (pc *propContext) isMountPoint(v *nodeView) bool {
	return pc.share.mounted && v.node.ID == pc.share.root
}

// propShareTypes lists the kinds of live shares of a node
// (<oc:share-type>N</oc:share-type>, N the storage.ShareKind), for
// members of its space: who came through a share or a link learns nothing
// of the item's other shares.
func propShareTypes(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	// A link's access is no share's (it carries no S), so the link is
	// asked for by itself.
	if pc.access.viaShare || linkOf(pc.ctx) != nil || v.node.ParentID == "" {
		return dst, false
	}
	kinds := pc.shareKinds()[v.node.ID]
	if len(kinds) == 0 {
		return dst, false
	}
	for _, k := range kinds {
		dst = append(dst, "<oc:share-type>"...)
		dst = strconv.AppendUint(dst, uint64(k), 10)
		dst = append(dst, "</oc:share-type>"...)
	}
	return dst, true
}

// shareKinds reads, once per request, the kinds of live shares of every
// item of the request's space, by node id, each sorted: one read of the
// space's shares whatever the size of the listing. A store without
// shares, or one that cannot answer, shows none.
func (pc *propContext) shareKinds() map[string][]storage.ShareKind {
	if pc.shareKindsRead {
		return pc.shareKindsByNode
	}
	pc.shareKindsRead = true
	ss, ok := pc.store.(sharingStore)
	if !ok {
		return nil
	}
	shares, err := ss.ItemShares(pc.ctx, pc.space.ID, "")
	if err != nil {
		return nil
	}
	judge := storage.NewShareJudge(ss, time.Now())
	byNode := make(map[string][]storage.ShareKind)
	for _, s := range shares {
		live, err := judge.Live(pc.ctx, s)
		if err != nil || !live || slices.Contains(byNode[s.NodeID], s.Kind) {
			continue
		}
		byNode[s.NodeID] = append(byNode[s.NodeID], s.Kind)
	}
	for _, kinds := range byNode {
		slices.Sort(kinds)
	}
	pc.shareKindsByNode = byNode
	return byNode
}
