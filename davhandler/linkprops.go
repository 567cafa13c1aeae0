package davhandler

import (
	"context"
	"strconv"

	"github.com/davspaces/davspaces/resourceid"
	"github.com/davspaces/davspaces/storage"
)

// publicLinkStorage is oCIS' storage id and space id of public links
// (reva's utils.PublicStorageProviderID and PublicStorageSpaceID, which
// ownCloud Web knows): the space a visitor sees every item of a link in.
const publicLinkStorage = "7993447f-687f-490d-875c-ac95e89a62a4"

// publicLinkSpaceRef is the id of the space of every item seen through a
// link. The item's own space is never named: its id may be its name
// (a configured project space), which a visitor could otherwise confirm.
var publicLinkSpaceRef = resourceid.Space(publicLinkStorage, publicLinkStorage).String()

// clientResourceID is the id of node n as the request's caller sees it:
// through a link, in the links' space (publicLinkSpaceRef), with the
// node's own id, which is random; for anybody else, resourceID.
func clientResourceID(ctx context.Context, storageID string, n storage.Node) string {
	if linkOf(ctx) != nil {
		return resourceid.New(publicLinkStorage, publicLinkStorage, n.ID).String()
	}
	return resourceID(storageID, n)
}

// The properties oCIS answers only through a public link, which a link's
// page reads to know what the link lets it do (a file drop shows an upload
// area, not a listing) and whose it is. Outside a link they are absent.

// OCS permission bits of a link's role, as oCIS' oc:public-link-permission
// and the OCS shares API give them: 1 read, 4 create, 5 read and create,
// 15 read, change, create and delete.
func linkPermissionBits(r storage.ShareRole) int {
	switch r {
	case storage.ShareUploader:
		return 5
	case storage.ShareEditor:
		return 15
	case storage.ShareFileDrop:
		return 4
	}
	return 1
}

// propPublicLinkPermission is the link's OCS permission bits.
func propPublicLinkPermission(pc *propContext, _ *nodeView, dst []byte) ([]byte, bool) {
	link := linkOf(pc.ctx)
	if link == nil {
		return dst, false
	}
	return strconv.AppendInt(dst, int64(linkPermissionBits(link.Role)), 10), true
}

// propPublicLinkItemType is "folder" or "file": what the link's item is.
func propPublicLinkItemType(pc *propContext, v *nodeView, dst []byte) ([]byte, bool) {
	link := linkOf(pc.ctx)
	if link == nil {
		return dst, false
	}
	// Every node a link's request sees is its item or below it; a file's
	// link sees the file alone.
	if v.node.ID == link.NodeID && !v.node.IsFolder() {
		return text(dst, "file")
	}
	return text(dst, "folder")
}

// propPublicLinkShareOwner is the user id of who made the link, to whom a
// file drop's uploads go.
func propPublicLinkShareOwner(pc *propContext, _ *nodeView, dst []byte) ([]byte, bool) {
	link := linkOf(pc.ctx)
	if link == nil {
		return dst, false
	}
	return text(dst, link.Creator)
}
