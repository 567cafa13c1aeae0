package graph

import "github.com/davspaces/davspaces/resourceid"

// itemRef is a Graph item id taken apart: <storage>$<space>!<node>.
type itemRef struct {
	spaceID, nodeID string
}

// parseItemID reads an item id of this store's storage; ok is false for
// anything else (another storage, a malformed id, a drive's id), which
// the caller answers as a missing item.
func parseItemID(storageID, id string) (itemRef, bool) {
	ref, ok := parseOwnID(storageID, id)
	if !ok || ref.IsSpace() {
		return itemRef{}, false
	}
	return itemRef{spaceID: ref.Space, nodeID: ref.Node}, true
}

// parseDriveID reads a drive id of this store's storage,
// <storage>$<space>, and returns the space id. Like oCIS it takes an
// item id of the drive too (<storage>$<space>!<node>): ownCloud Web
// names the drive of a received share by its mount point's
// root.remoteItem.rootId, the id of the space's root.
func parseDriveID(storageID, id string) (string, bool) {
	ref, ok := parseOwnID(storageID, id)
	return ref.Space, ok
}

// parseOwnID reads a resource id of this store's storage.
func parseOwnID(storageID, id string) (resourceid.ID, bool) {
	ref, err := resourceid.Parse(id)
	if err != nil || !ref.Of(storageID) {
		return resourceid.ID{}, false
	}
	return ref, true
}

// formatItemID is the Graph id of node nodeID of space spaceID.
func formatItemID(storageID, spaceID, nodeID string) string {
	return resourceid.New(storageID, spaceID, nodeID).String()
}

// formatDriveID is the Graph id of space spaceID.
func formatDriveID(storageID, spaceID string) string {
	return resourceid.Space(storageID, spaceID).String()
}
