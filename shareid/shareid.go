// Package shareid forms and reads the ids of the Shares drive and of its
// mount points, as oCIS forms them, so that WebDAV (davhandler) and Graph
// name them alike and ownCloud clients find them where they look.
//
// oCIS keeps what was shared with a user in a virtual "share jail": its
// storage id and space id are one constant, so the drive's id is
// "<jail>$<jail>", and the mount point of share S (the item shared, as the
// recipient reaches it) is "<jail>$<jail>!S" (services/graph's
// sharedwithme.go, reva's utils.ShareStorageProviderID and
// ShareStorageSpaceID).
package shareid

import (
	"strings"

	"github.com/davspaces/davspaces/resourceid"
)

// Jail is oCIS' storage id and space id of the share jail.
const Jail = "a0ca6a90-a365-4782-871e-d44447bbc668"

// DriveID is the id of the Shares drive: the one virtual drive of every
// user whose root lists what was shared with them.
var DriveID = resourceid.Space(Jail, Jail).String()

// RootID is the id of the Shares drive's root, the parent of its mount
// points.
var RootID = Mount(Jail)

// Mount is the id of the mount point of share shareID in the Shares drive
// (a Graph "mountpoint" drive, and a drive item's id in sharedWithMe).
func Mount(shareID string) string { return resourceid.New(Jail, Jail, shareID).String() }

// Parse reads a resource id: inJail is true when it names the Shares
// drive, and then shareID is the share of the mount point it names, empty
// for the drive itself. Anything else is not in the jail, the drive's id
// with an empty mount point ("…!") included: it names no mount point
// and is not the drive's own id.
func Parse(ref string) (shareID string, inJail bool) {
	id, err := resourceid.Parse(ref)
	if err != nil || id.Storage != Jail || id.Space != Jail || strings.HasSuffix(ref, "!") {
		return "", false
	}
	return id.Node, true
}
