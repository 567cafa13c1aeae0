package davhandler

import (
	"net/http"
	"strings"
)

// corePreviewPath is where Nextcloud's Android app asks for a file's
// preview by its id: ?fileId=…&x=…&y=…&a=1 (ThumbnailsCacheManager).
const corePreviewPath = "/index.php/core/preview"

// Nextcloud's clients find a user's trash and a file's versions at paths
// of their own (Nextcloud's apps/dav): the Android app's trash bin
// (ReadTrashbinFolderRemoteOperation, RestoreTrashbinFileRemoteOperation,
// EmptyTrashbinRemoteOperation) and versions (ReadFileVersionsRemoteOperation,
// RestoreFileVersionRemoteOperation), and the desktop client's. They are
// the personal space's trash-bin and /dav/meta/{fileid}/v under other
// names:
//
//	/dav/trashbin/{user}/trash[/{key}[/…]]        the personal space's trash
//	/dav/trashbin/{user}/restore/{name}           Destination: restore in place
//	/dav/versions/{user}/versions/{fileid}[/{key}] the versions of a file
//	/dav/versions/{user}/restore/target           Destination: restore a version
//
// {user} must be the caller: anybody else's is 404, as if absent.

// The namespaces below /dav of Nextcloud's trash and versions, and their
// collections.
const (
	ncTrashbin = "trashbin"
	ncVersions = "versions"
	ncTrash    = "trash"
	ncRestore  = "restore"
)

// parseNextcloudTrash handles what follows /dav/trashbin (base).
func parseNextcloudTrash(base, user, rest string) (davPath, bool, *davError) {
	return parseNextcloudUser(base, user, rest, ncTrash, func(base, rest string) (davPath, *davError) {
		segs, err := splitSegments(rest)
		return davPath{kind: baseTrash, base: base, segments: segs}, err
	})
}

// parseNextcloudVersions handles what follows /dav/versions (base): the
// versions of a file are its /dav/meta/{fileid}/v.
func parseNextcloudVersions(base, user, rest string) (davPath, bool, *davError) {
	return parseNextcloudUser(base, user, rest, ncVersions, func(base, rest string) (davPath, *davError) {
		fileID, rest := cutSegment(rest)
		segs, err := refSegments(fileID, rest)
		if err != nil {
			return davPath{}, err
		}
		if len(segs) > 1 {
			return davPath{}, errNotFound
		}
		return davPath{kind: baseMeta, ref: fileID, base: base + "/" + fileID,
			segments: append([]string{versionsSegment}, segs...)}, nil
	})
}

// parseNextcloudUser handles what follows /dav/trashbin or /dav/versions
// (base): the user, then its restore collection or the namespace's own
// collection coll, whose rest parseColl reads below collBase. Listing the
// users is refused, as is a name no user can have.
func parseNextcloudUser(base, user, rest, coll string, parseColl func(collBase, rest string) (davPath, *davError)) (davPath, bool, *davError) {
	err := checkRef(user)
	if err != nil {
		return davPath{}, true, err
	}
	base += "/" + user
	name, rest := cutSegment(rest)
	var dp davPath
	switch name {
	case coll:
		dp, err = parseColl(base+"/"+coll, rest)
	case ncRestore:
		dp = davPath{kind: baseRestore, base: base + "/" + ncRestore}
	case "":
		err = errListingDisabled
	default:
		err = errNotFound
	}
	if err != nil {
		return davPath{}, true, err
	}
	dp.user, dp.nextcloud = user, true
	return dp, true, nil
}

// versionsHref is the href of the versions collection of a meta path:
// …/{fileid}/v, or Nextcloud's …/versions/{fileid}.
func (p davPath) versionsHref() string {
	if p.nextcloud {
		return escapePath(p.base)
	}
	return escapePath(p.base + "/" + versionsSegment)
}

// notCaller reports whether p is one of Nextcloud's paths of a user who
// is not id.
func (p davPath) notCaller(id string) bool {
	return p.nextcloud && !strings.EqualFold(p.user, id)
}

// errRestoreTarget answers a request to a …/restore path itself.
var errRestoreTarget = methodNotAllowed("OPTIONS", "a restore path is only the Destination of a MOVE that restores")

// serveCorePreview answers /index.php/core/preview?fileId=…: the preview
// of the file with that resource id, as a GET with ?preview=1 of its
// WebDAV path answers it; a file the caller may not read is 404.
func (h *Handler) serveCorePreview(w http.ResponseWriter, r *http.Request, req *request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return methodNotAllowed("OPTIONS, GET, HEAD", "a preview is read with GET")
	}
	id := r.URL.Query().Get("fileId")
	if id == "" {
		return errorf(http.StatusBadRequest, "fileId names the file whose preview is asked")
	}
	if err := validateName(id); err != nil {
		return err
	}
	req.path = davPath{kind: baseMeta, ref: id, base: "/dav/meta/" + id}
	t, err := h.resolveMeta(r.Context(), req)
	if err != nil {
		return err
	}
	return h.servePreview(w, r, t)
}
