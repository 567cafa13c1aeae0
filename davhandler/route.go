package davhandler

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/davspaces/davspaces/davhandler/internal/davxml"
	"github.com/davspaces/davspaces/storage"
)

// baseKind tells how the first part of a DAV path names a space.
type baseKind int

const (
	// baseHome: /webdav/… — the user's personal space.
	baseHome baseKind = iota + 1
	// baseFiles: /dav/files/{user}/… — the named user's personal space.
	baseFiles
	// baseSpaces: /dav/spaces/{resourceID}/… — any space by resource id.
	baseSpaces
	// baseUploads: /dav/uploads/{id} — a resumable (TUS) upload.
	baseUploads
	// baseChunked: /dav/uploads/{user}/{transfer}/… — a Nextcloud
	// chunking NG upload; its one segment, if any, names a part.
	baseChunked
	// baseTrash: /dav/spaces/trash-bin/{spaceref}/… — the trash of a
	// space; the first segment, if any, is a trash key, the others names
	// below that item.
	baseTrash
	// baseMeta: /dav/meta/{resourceID}[/v[/{key}]] — a node by id: its
	// path, and a file's versions.
	baseMeta
	// basePublic: /dav/public-files/{token}/… — the item of a public
	// link, for anybody with its token (and password).
	basePublic
	// basePublicUpload: /dav/public-files/.uploads/{id} — a resumable
	// (TUS) upload started through a public link.
	basePublicUpload
	// baseBulk: /dav/bulk — Nextcloud's bulk upload of small files
	// (bulk.go).
	baseBulk
	// baseAllSpaces: /dav/spaces/ itself, which nothing lists; a search
	// REPORT there looks in every space of the user (report_spaces.go).
	baseAllSpaces
	// baseFilesRoot: /dav/files/ itself, which names no user and which
	// nothing lists; a PROPFIND with a Depth there is the user's own
	// files (ownFiles).
	baseFilesRoot
	// baseRestore: /dav/trashbin/{user}/restore/… and
	// /dav/versions/{user}/restore/…, Nextcloud's Destination of a MOVE
	// that restores (nextcloud.go); nothing is there.
	baseRestore
	// baseCorePreview: /index.php/core/preview?fileId=…, Nextcloud's
	// preview of a file by id (nextcloud.go).
	baseCorePreview
	// baseMassDeletes: /dav/spaces/mass-deletes/{spaceref}/… — the
	// mass-delete events of a space (massdelete_api.go).
	baseMassDeletes
)

// maxNameBytes is the longest file or folder name accepted.
const maxNameBytes = 255

// davPath is a request path split into its base and the path below it.
type davPath struct {
	kind baseKind
	// base is the decoded base path as the client used it (with or without
	// /remote.php), e.g. "/dav/spaces/S$P!N"; hrefs start with it.
	base string
	// user is the {user} of /dav/files/{user} and
	// /dav/uploads/{user}/{transfer}.
	user string
	// ref is the {resourceID} of /dav/spaces/{resourceID} and
	// /dav/meta/{resourceID}, or the {spaceref} of
	// /dav/spaces/trash-bin/{spaceref}.
	ref string
	// upload is the {id} of /dav/uploads/{id} and
	// /dav/public-files/.uploads/{id}, or the {transfer} of
	// /dav/uploads/{user}/{transfer}.
	upload string
	// token is the {token} of /dav/public-files/{token}.
	token string
	// segments below the base, validated and without empty ones.
	segments []string
	// nextcloud marks Nextcloud's paths of the user's trash and versions
	// (/dav/trashbin/{user}, /dav/versions/{user}): user must be the
	// caller, and hrefs keep Nextcloud's form.
	nextcloud bool
}

// name is the last segment, or "" for the base itself.
func (p davPath) name() string {
	if len(p.segments) == 0 {
		return ""
	}
	return p.segments[len(p.segments)-1]
}

// parseDAVPath splits a decoded request path. It reports ok=false for paths
// that are not WebDAV paths at all, so the request can go to the next handler.
func parseDAVPath(p string) (dp davPath, ok bool, err *davError) {
	if p == corePreviewPath {
		return davPath{kind: baseCorePreview, base: p}, true, nil
	}
	rest, remote := strings.CutPrefix(p, "/remote.php")
	if remote && rest != "" && rest[0] != '/' {
		return davPath{}, false, nil
	}
	prefix := ""
	if remote {
		prefix = "/remote.php"
	}
	first, rest := cutSegment(rest)
	if first != "webdav" && first != "dav" {
		return davPath{}, false, nil
	}
	if err := pathSizeError(p, http.StatusRequestURITooLong); err != nil {
		return davPath{}, true, err
	}
	if first == "dav" {
		return parseDAVNamespace(prefix+"/dav", rest)
	}
	dp = davPath{kind: baseHome, base: prefix + "/webdav"}
	dp.segments, err = splitSegments(rest)
	return dp, true, err
}

// pathSizeError refuses, with status, a path a client sent that is longer
// or deeper than storage.ValidPathSize allows; nil for any other path.
func pathSizeError(p string, status int) *davError {
	err := storage.ValidPathSize(p)
	if err == nil {
		return nil
	}
	return &davError{status: status, cause: err, reason: reasonPathSize,
		message: fmt.Sprintf("A path has at most %d bytes and %d names", storage.MaxPathBytes, storage.MaxPathSegments)}
}

// parseDAVNamespace handles what follows /dav.
func parseDAVNamespace(base, p string) (davPath, bool, *davError) {
	ns, rest := cutSegment(p)
	owner, rest := cutSegment(rest)
	var dp davPath
	switch ns {
	case "spaces":
		if owner == trashBin {
			return parseTrashPath(base+"/spaces/"+trashBin, rest)
		}
		if owner == massDeletesSegment {
			dp, ok, err := parseTrashPath(base+"/spaces/"+massDeletesSegment, rest)
			dp.kind = baseMassDeletes
			return dp, ok, err
		}
		dp = davPath{kind: baseSpaces, ref: owner, base: base + "/spaces/" + owner}
	case "files":
		dp = davPath{kind: baseFiles, user: owner, base: base + "/files/" + owner}
	case "uploads":
		return parseUploadPath(base, owner, rest)
	case "meta":
		return parseMetaPath(base+"/meta", owner, rest)
	case publicFiles:
		return parsePublicPath(base+"/"+publicFiles, owner, rest)
	case bulkSegment:
		return parseBulkPath(base, owner, rest)
	case ncTrashbin:
		return parseNextcloudTrash(base+"/"+ncTrashbin, owner, rest)
	case ncVersions:
		return parseNextcloudVersions(base+"/"+ncVersions, owner, rest)
	default:
		return davPath{}, true, errorf(http.StatusNotFound, "File not found in root")
	}
	if owner == "" {
		var dp davPath
		switch ns {
		case "spaces":
			dp = davPath{kind: baseAllSpaces, base: base + "/spaces"}
		case "files":
			dp = davPath{kind: baseFilesRoot, base: base + "/files"}
		}
		return dp, true, errorf(http.StatusMethodNotAllowed, "Listing members of this collection is disabled")
	}
	if err := validateName(owner); err != nil {
		return davPath{}, true, err
	}
	segs, err := splitSegments(rest)
	dp.segments = segs
	return dp, true, err
}

// ownFiles reports whether r is a PROPFIND of /dav/files/ with a Depth
// header, and returns the path of user's own files it stands for. oCIS
// answers it so (ocdav's filesNoUser), and the ownCloud apps check their
// token with it: Android's GetBaseUrlRemoteOperation.kt (Depth 0, 2xx or
// 404, before it signs in) and the iOS connection validator (OCConnection.m).
// Without a Depth it stays 405, as in oCIS; other methods never reach a
// space through it.
func ownFiles(r *http.Request, dp davPath, user string) (davPath, bool) {
	if dp.kind != baseFilesRoot || r.Method != "PROPFIND" || r.Header.Get("Depth") == "" || user == "" {
		return dp, false
	}
	return davPath{kind: baseFiles, user: user, base: dp.base + "/" + user}, true
}

// trashBin is the segment after /dav/spaces that names the trash of the
// space after it rather than a space.
const trashBin = "trash-bin"

// parseTrashPath handles what follows /dav/spaces/trash-bin (base): a
// space reference, then a trash key and names below its item.
func parseTrashPath(base, p string) (davPath, bool, *davError) {
	ref, rest := cutSegment(p)
	segs, err := refSegments(ref, rest)
	if err != nil {
		return davPath{}, true, err
	}
	return davPath{kind: baseTrash, ref: ref, base: base + "/" + ref, segments: segs}, true, nil
}

// versionsSegment is the segment below /dav/meta/{resourceID} that names
// the versions of the file.
const versionsSegment = "v"

// parseMetaPath handles /dav/meta/{resourceID}, its versions collection
// …/v and one version …/v/{key}; nothing else lives there.
func parseMetaPath(base, id, rest string) (davPath, bool, *davError) {
	segs, err := refSegments(id, rest)
	if err != nil {
		return davPath{}, true, err
	}
	if len(segs) > 2 || (len(segs) > 0 && segs[0] != versionsSegment) {
		return davPath{}, true, errNotFound
	}
	return davPath{kind: baseMeta, ref: id, base: base + "/" + id, segments: segs}, true, nil
}

// uploadsPath is where upload URLs live below /dav and /remote.php/dav.
const uploadsPath = "/uploads/"

// parseUploadPath handles what follows /dav/uploads: one TUS upload id, or
// a user and a chunking NG transfer with at most a part below it. Whether
// uploads are offered at all is the handler's decision.
func parseUploadPath(base, first, rest string) (davPath, bool, *davError) {
	if strings.Trim(rest, "/") != "" {
		return parseChunkedPath(base, first, rest)
	}
	if first == "" {
		return davPath{}, true, errNotFound
	}
	if err := validateName(first); err != nil {
		return davPath{}, true, errNotFound
	}
	return davPath{kind: baseUploads, upload: first, base: base + uploadsPath + first}, true, nil
}

// parseChunkedPath handles /dav/uploads/{user}/{transfer}[/{part}]: the
// base is the transfer's folder, below which only parts live.
func parseChunkedPath(base, user, rest string) (davPath, bool, *davError) {
	transfer, rest := cutSegment(rest)
	if err := validateName(user); err != nil {
		return davPath{}, true, err
	}
	segs, err := splitSegments(rest)
	if err != nil {
		return davPath{}, true, err
	}
	if err := validateName(transfer); err != nil {
		return davPath{}, true, err
	}
	if len(segs) > 1 {
		return davPath{}, true, errNotFound
	}
	return davPath{kind: baseChunked, user: user, upload: transfer,
		base: base + uploadsPath + user + "/" + transfer, segments: segs}, true, nil
}

// cutSegment returns the first segment of p and the rest (with its slash).
func cutSegment(p string) (string, string) {
	p = strings.TrimLeft(p, "/")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i:]
	}
	return p, ""
}

// errListingDisabled is the answer where a listing would name others'
// collections.
var errListingDisabled = errorf(http.StatusMethodNotAllowed, "Listing members of this collection is disabled")

// checkRef refuses the reference to one of a base's collections (a space,
// a resource id, a user): none would list them all.
func checkRef(ref string) *davError {
	if ref == "" {
		return errListingDisabled
	}
	return validateName(ref)
}

// refSegments validates a reference to one of a base's collections and
// the segments of rest, what follows it.
func refSegments(ref, rest string) ([]string, *davError) {
	if err := checkRef(ref); err != nil {
		return nil, err
	}
	return splitSegments(rest)
}

// splitSegments validates each segment of a relative path; repeated slashes
// collapse.
func splitSegments(p string) ([]string, *davError) {
	var segs []string
	for _, s := range strings.Split(p, "/") {
		if s == "" {
			continue
		}
		if err := validateName(s); err != nil {
			return nil, err
		}
		segs = append(segs, s)
	}
	return segs, nil
}

// validateName refuses names that could escape their folder or that clients,
// file systems and XML listings cannot handle.
func validateName(s string) *davError {
	if s == "." || s == ".." {
		return errorf(http.StatusBadRequest, "name validation failed: . and .. are reserved names")
	}
	if len(s) > maxNameBytes {
		return errorf(http.StatusBadRequest, "name validation failed: must be shorter than %d bytes", maxNameBytes+1)
	}
	if !utf8.ValidString(s) {
		// Surrogates encoded in UTF-8 are invalid UTF-8 too.
		return errorf(http.StatusBadRequest, "name validation failed: must be valid UTF-8")
	}
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			return errorf(http.StatusBadRequest, "name validation failed: must not contain control characters")
		case r == '\\':
			// Windows clients read it as a separator, as "/" is everywhere.
			return errorf(http.StatusBadRequest, "name validation failed: must not contain \\")
		case !davxml.IsChar(r):
			// Every listing of the folder would carry it, and no XML parser
			// would read that listing.
			return errorf(http.StatusBadRequest, "name validation failed: must not contain %U", r)
		}
	}
	return nil
}

// escapePath percent-encodes a path for an href: "$" stays literal, "!"
// becomes %21, as ownCloud clients expect.
func escapePath(p string) string {
	return (&url.URL{Path: p}).EscapedPath()
}
