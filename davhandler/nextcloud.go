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

// errListingDisabled is the answer where a listing would name others'
// collections.
var errListingDisabled = errorf(http.StatusMethodNotAllowed, "Listing members of this collection is disabled")

// nextcloudUserBase is the base of a Nextcloud trash or versions path of
// user: listing the users is refused, as is a name no user can have.
func nextcloudUserBase(base, user string) (string, *davError) {
	if user == "" {
		return "", errListingDisabled
	}
	if err := validateName(user); err != nil {
		return "", err
	}
	return base + "/" + user, nil
}

// parseNextcloudTrash handles what follows /dav/trashbin (base).
func parseNextcloudTrash(base, user, rest string) (davPath, bool, *davError) {
	base, err := nextcloudUserBase(base, user)
	if err != nil {
		return davPath{}, true, err
	}
	coll, rest := cutSegment(rest)
	switch coll {
	case ncTrash:
		segs, err := splitSegments(rest)
		if err != nil {
			return davPath{}, true, err
		}
		return davPath{kind: baseTrash, user: user, nextcloud: true, base: base + "/" + ncTrash, segments: segs}, true, nil
	case ncRestore:
		return davPath{kind: baseRestore, user: user, nextcloud: true, base: base + "/" + ncRestore}, true, nil
	case "":
		return davPath{}, true, errListingDisabled
	}
	return davPath{}, true, errNotFound
}

// parseNextcloudVersions handles what follows /dav/versions (base): the
// versions of a file are its /dav/meta/{fileid}/v.
func parseNextcloudVersions(base, user, rest string) (davPath, bool, *davError) {
	base, err := nextcloudUserBase(base, user)
	if err != nil {
		return davPath{}, true, err
	}
	coll, rest := cutSegment(rest)
	switch coll {
	case ncVersions:
	case ncRestore:
		return davPath{kind: baseRestore, user: user, nextcloud: true, base: base + "/" + ncRestore}, true, nil
	case "":
		return davPath{}, true, errListingDisabled
	default:
		return davPath{}, true, errNotFound
	}
	fileID, rest := cutSegment(rest)
	if fileID == "" {
		return davPath{}, true, errListingDisabled
	}
	if err := validateName(fileID); err != nil {
		return davPath{}, true, err
	}
	segs, err := splitSegments(rest)
	if err != nil {
		return davPath{}, true, err
	}
	if len(segs) > 1 {
		return davPath{}, true, errNotFound
	}
	dp := davPath{kind: baseMeta, ref: fileID, user: user, nextcloud: true, base: base + "/" + ncVersions + "/" + fileID}
	dp.segments = append([]string{versionsSegment}, segs...)
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
