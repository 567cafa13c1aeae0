package graph

import "strings"

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
