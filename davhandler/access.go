package davhandler

import "github.com/davspaces/davspaces/storage"

// access is what the caller may do with a target and, for a folder,
// everything below it: what their role in the space allows
// (memberAccess), or what the share or link they came through allows
// (shareAccess, linkAccess). Every method file asks it the question of its
// change instead of comparing roles, so that a share's narrower rights (an
// uploader adds but never overwrites) hold everywhere at once.
type access struct {
	may permission
	// viaShare: the target was reached through a share with a user or
	// group, not through a membership of its space (oc:permissions "S").
	viaShare bool
}

// permission is a set of things a caller may do.
type permission uint16

const (
	// permRead: download files and read properties.
	permRead permission = 1 << iota
	// permList: see a folder's children.
	permList
	// permCreate: add new files and folders (PUT, MKCOL, COPY or MOVE to a
	// free name, uploads).
	permCreate
	// permChange: overwrite a file's content, change properties, lock,
	// restore a version.
	permChange
	// permDelete: delete, move away or rename, and replace with COPY or
	// MOVE (the replaced node goes to the trash).
	permDelete
	// permShare: create and manage shares and links (storage.MayShare).
	permShare
	// permTrash: see and restore what was deleted from the space.
	permTrash
	// permManage: purge the trash, remove anybody's lock: a space's
	// manager's housekeeping.
	permManage
)

// memberAccess is the access of a member with role r in a space.
func memberAccess(r storage.Role) access {
	var p permission
	if r >= storage.RoleViewer {
		p |= permRead | permList
	}
	if r >= storage.RoleEditor {
		p |= permCreate | permChange | permDelete | permTrash
	}
	if storage.MayShare(r) {
		p |= permShare
	}
	if r >= storage.RoleManager {
		p |= permManage
	}
	return access{may: p}
}

// shareAccess is the access a share with role r gives to its item
// (design: links never give more than their role). It never includes
// sharing (no resharing), the trash or a manager's housekeeping.
func shareAccess(r storage.ShareRole) access {
	var p permission
	switch r {
	case storage.ShareViewer:
		p = permRead | permList
	case storage.ShareUploader:
		p = permRead | permList | permCreate
	case storage.ShareEditor:
		p = permRead | permList | permCreate | permChange | permDelete
	case storage.ShareFileDrop:
		p = permCreate
	}
	return access{may: p, viaShare: true}
}

// linkAccess is the access a public link with role r gives to its item:
// a share's (shareAccess), but not marked as reached through a share, as
// oCIS marks no item of a public link "S".
func linkAccess(r storage.ShareRole) access {
	a := shareAccess(r)
	a.viaShare = false
	return a
}

func (a access) has(p permission) bool { return a.may&p == p }

// mayRead reports whether the caller may download files and read
// properties.
func (a access) mayRead() bool { return a.has(permRead) }

// mayList reports whether the caller may see a folder's children.
func (a access) mayList() bool { return a.has(permList) }

// mayCreate reports whether the caller may add a new file or folder.
func (a access) mayCreate() bool { return a.has(permCreate) }

// mayChange reports whether the caller may change an existing node's
// content or properties.
func (a access) mayChange() bool { return a.has(permChange) }

// mayDelete reports whether the caller may delete, move away, rename or
// replace an existing node.
func (a access) mayDelete() bool { return a.has(permDelete) }

// mayShare reports whether the caller may share the node and manage its
// shares.
func (a access) mayShare() bool { return a.has(permShare) }

// mayLock reports whether the caller may lock (or refresh a lock): a
// lock keeps others from changing, so only who may change takes one.
func (a access) mayLock() bool { return a.has(permChange) }

// mayUnlockAny reports whether the caller may remove somebody else's
// lock (one left behind must not keep a resource read-only until it
// expires).
func (a access) mayUnlockAny() bool { return a.has(permManage) }

// mayUseTrash reports whether the caller may see and restore what was
// deleted from the space.
func (a access) mayUseTrash() bool { return a.has(permTrash) }

// mayPurge reports whether the caller may destroy trash items for good.
func (a access) mayPurge() bool { return a.has(permManage | permTrash) }

// mayPlace reports whether the caller may put something at t by an upload,
// COPY, MOVE or restore: at a free name if they may create, over an
// existing node if they may change it (a PUT, replace is true: a COPY,
// MOVE or restore, whose replaced node goes to the trash, then asks
// delete too).
func (t *target) mayPlace(replace bool) bool {
	if !t.exists {
		return t.access.mayCreate()
	}
	return t.access.mayChange() && (!replace || t.access.mayDelete())
}

// permissions are the oc:permissions letters (and OC-Perm) of access a to a
// file or folder: R share, D delete, NV rename and move, W write a file,
// CK create files and folders in a folder, Z and P a manager's (deny,
// purge), S reached through a share.
func permissions(a access, folder bool) string {
	return string(appendPermissions(nil, a, folder, false))
}

// appendPermissions appends the letters of permissions to dst, with "M"
// after "S" for the mount point of a share (as oCIS orders them): a
// listing writes them for every entry, and building a string for each was
// a large share of a big listing's allocations.
func appendPermissions(dst []byte, a access, folder, mountPoint bool) []byte {
	if a.viaShare {
		dst = append(dst, 'S')
	}
	if mountPoint {
		dst = append(dst, 'M')
	}
	if a.mayShare() && a.has(permManage) {
		dst = append(dst, 'R')
	}
	if a.mayDelete() {
		dst = append(dst, "DNV"...)
	}
	switch {
	case folder && a.mayCreate():
		dst = append(dst, "CK"...)
	case !folder && a.mayChange():
		dst = append(dst, 'W')
	}
	if a.has(permManage) {
		dst = append(dst, "ZP"...)
	}
	return dst
}
