package graph

import "strings"

// SharesDriveID is the id of every user's Shares drive, the virtual drive
// whose root lists what was shared with them: oCIS' constant, which
// ownCloud Web and the apps recognise.
const SharesDriveID = sharesSpaceID + "$" + sharesSpaceID

// sharesSpaceID is the storage and space part of SharesDriveID.
const sharesSpaceID = "a0ca6a90-a365-4782-871e-d44447bbc668"

// MountID is the id of the mount point of share shareID in the Shares
// drive: the drive id, "!", the share id, as oCIS forms the ids of the
// items of its share jail. It names both the mount point drive in
// /me/drives and the item in sharedWithMe.
func MountID(shareID string) string {
	return SharesDriveID + "!" + shareID
}

// itemRef is a Graph item id taken apart: <storage>$<space>!<node>.
type itemRef struct {
	spaceID, nodeID string
}

// parseItemID reads an item id of this store's storage; ok is false for
// anything else (another storage, a malformed id), which the caller
// answers as a missing item.
func parseItemID(storageID, id string) (itemRef, bool) {
	space, node, ok := strings.Cut(id, "!")
	if !ok {
		return itemRef{}, false
	}
	spaceID, ok := parseDriveID(storageID, space)
	if !ok || node == "" || strings.ContainsAny(node, "$!/") {
		return itemRef{}, false
	}
	return itemRef{spaceID: spaceID, nodeID: node}, true
}

// parseDriveID reads a drive id of this store's storage,
// <storage>$<space>, and returns the space id.
func parseDriveID(storageID, id string) (string, bool) {
	storage, space, ok := strings.Cut(id, "$")
	if !ok || storage != storageID || space == "" || strings.ContainsAny(space, "$!/") {
		return "", false
	}
	return space, true
}

// formatItemID is the Graph id of node nodeID of space spaceID.
func formatItemID(storageID, spaceID, nodeID string) string {
	return storageID + "$" + spaceID + "!" + nodeID
}

// formatDriveID is the Graph id of space spaceID.
func formatDriveID(storageID, spaceID string) string {
	return storageID + "$" + spaceID
}
