package davhandler

import "github.com/davspaces/davspaces/storage"

// The methods each kind of path allows, in one place: the Allow header of
// an OPTIONS and of a 405 is read from here.

// allowedMethods are the methods the interface implements.
const allowedMethods = "OPTIONS, GET, HEAD, PUT, DELETE, MKCOL, PROPFIND, PROPPATCH, REPORT, COPY, MOVE"

// The methods an existing resource allows, for the Allow header of a 405.
// MKCOL is never among them (the resource exists); a space root can be
// neither deleted, copied, moved nor replaced.
const (
	allowedOnFile   = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT, COPY, MOVE"
	allowedOnFolder = "OPTIONS, GET, HEAD, DELETE, PROPFIND, PROPPATCH, REPORT, COPY, MOVE"
	allowedOnRoot   = "OPTIONS, GET, HEAD, PROPFIND, PROPPATCH, REPORT"
	// allowedOnVirtual: the collections above the spaces only answer OPTIONS.
	allowedOnVirtual = "OPTIONS"
)

// allowedOn returns the methods node n allows.
func allowedOn(n storage.Node) string {
	switch {
	case n.ParentID == "":
		return allowedOnRoot
	case n.IsFolder():
		return allowedOnFolder
	}
	return allowedOnFile
}

// lockMethods are the methods locking adds to every resource.
const lockMethods = ", LOCK, UNLOCK"

// unlockable are the allow lists of what cannot be locked: the
// collections above the spaces, and uploads.
var unlockable = map[string]bool{
	allowedOnVirtual: true, allowedOnUploads: true,
	allowedOnChunkedUpload: true, allowedOnChunk: true, allowedOnAssemble: true,
	allowedOnTrash: true, allowedOnTrashItem: true, allowedInTrashItem: true,
	allowedOnMeta: true, allowedOnVersion: true,
	allowedOnPublic: true,
}

// withLocks adds LOCK and UNLOCK to a list of allowed methods when the
// handler offers locking.
func (h *Handler) withLocks(allow string) string {
	if h.locks == nil || unlockable[allow] {
		return allow
	}
	return allow + lockMethods
}

// allowedMethods lists the methods of the interface, with LOCK and UNLOCK
// when locking is offered and POST (TUS creation) when uploads are.
func (h *Handler) allowedMethods() string {
	allow := h.withLocks(allowedMethods)
	if h.uploads != nil {
		allow += ", POST"
	}
	return allow
}

// undoAllow returns the methods of a trash-bin or meta path; ok is false
// for any other path.
func undoAllow(dp davPath) (allow string, ok bool) {
	switch {
	case dp.kind == baseTrash:
		return trashAllow(dp.segments), true
	case dp.kind != baseMeta:
		return "", false
	case len(dp.segments) == 0:
		return allowedOnMeta, true
	case len(dp.segments) == 1:
		return allowedOnVersions, true
	}
	return allowedOnVersion, true
}

// The methods of the trash root and of what is below it.
const (
	allowedOnTrash     = "OPTIONS, PROPFIND, DELETE"
	allowedOnTrashItem = "OPTIONS, PROPFIND, MOVE, DELETE"
	// allowedInTrashItem: a node below an item is restored, never purged
	// alone.
	allowedInTrashItem = "OPTIONS, PROPFIND, MOVE"
)

// trashAllow returns the methods a trash-bin path allows.
func trashAllow(segments []string) string {
	switch len(segments) {
	case 0:
		return allowedOnTrash
	case 1:
		return allowedOnTrashItem
	}
	return allowedInTrashItem
}

// The methods allowed on an NG upload's folder and on its parts.
const (
	allowedOnChunkedUpload = "OPTIONS, PROPFIND, MKCOL, DELETE"
	allowedOnChunk         = "OPTIONS, PROPFIND, PUT, DELETE"
	allowedOnAssemble      = "OPTIONS, MOVE"
)

// The methods of the versions collection and of one version.
const (
	allowedOnVersions = "OPTIONS, PROPFIND"
	allowedOnVersion  = "OPTIONS, GET, HEAD, PROPFIND, COPY"
)

// The methods of the meta resource.
const allowedOnMeta = "OPTIONS, PROPFIND"

// allowedOnPublic are the methods a link's resources allow: no locks
// (it is among the unlockable lists, which are told apart by their text,
// so its order differs from allowedMethods').
const allowedOnPublic = "OPTIONS, GET, HEAD, PROPFIND, PROPPATCH, PUT, MKCOL, DELETE, COPY, MOVE"

// allowedOnUploads are the methods an upload URL allows.
const allowedOnUploads = "OPTIONS, HEAD, PATCH, DELETE"

// allowedOnBulk are the methods of /dav/bulk.
const allowedOnBulk = "OPTIONS, POST"
