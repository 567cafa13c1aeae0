package davhandler

import (
	"fmt"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// ncTrashProps are the properties Nextcloud's Android app asks of its
// trash bin (WebdavUtils.getTrashbinPropSet).
const ncTrashProps = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns"><d:prop>` +
	`<nc:trashbin-filename/><nc:trashbin-original-location/><nc:trashbin-deletion-time/><d:getcontentlength/><d:resourcetype/><oc:id/></d:prop></d:propfind>`

// TestNextcloudTrashbin: Nextcloud's path of the caller's trash lists,
// restores in place (MOVE to …/restore/{name}) and empties the personal
// space's trash; another user's is 404.
func TestNextcloudTrashbin(t *testing.T) {
	e := newEnv(t)
	e.mkcol("einstein", "/webdav", "docs")
	e.putFile("einstein", "/webdav/docs/f.txt", "hello")
	e.putFile("einstein", "/webdav/g.txt", "bye")
	wantStatus(t, e.do("einstein", "DELETE", "/webdav/docs/f.txt", ""), http.StatusNoContent)
	wantStatus(t, e.do("einstein", "DELETE", "/webdav/g.txt", ""), http.StatusNoContent)
	const trash = "/remote.php/dav/trashbin/einstein/trash"

	items := parseMultistatus(t, e.do("einstein", "PROPFIND", trash, ncTrashProps, "Depth", "1"))
	if len(items) != 3 || items[0].Href != trash+"/" {
		t.Fatalf("trash listing %+v", items)
	}
	var fKey string
	for _, it := range items[1:] {
		if !strings.HasPrefix(it.Href, trash+"/") || it.Props[nsNextcloud+" trashbin-deletion-time"] == "" || it.Props[nsOC+" id"] == "" {
			t.Errorf("item %+v", it)
		}
		if it.Props[nsNextcloud+" trashbin-filename"] == "f.txt" {
			fKey = trashKey(t, it.Href)
			if loc := it.Props[nsNextcloud+" trashbin-original-location"]; loc != "docs/f.txt" {
				t.Errorf("original location %q", loc)
			}
		}
	}
	if fKey == "" {
		t.Fatalf("f.txt not in the trash: %+v", items)
	}

	tests := []struct {
		name, user, method, path string
		hdr                      []string
		status                   int
	}{
		{"another user's trash", "marie", "PROPFIND", trash, []string{"Depth", "1"}, http.StatusNotFound},
		{"another user's restore", "marie", "MOVE", trash + "/" + fKey, []string{"Destination", "/remote.php/dav/trashbin/marie/restore/f.txt"}, http.StatusNotFound},
		{"a restore to another user's", "einstein", "MOVE", trash + "/" + fKey, []string{"Destination", "/remote.php/dav/trashbin/marie/restore/f.txt"}, http.StatusBadRequest},
		{"the restore path itself", "einstein", "PROPFIND", "/remote.php/dav/trashbin/einstein/restore/f.txt", []string{"Depth", "0"}, http.StatusMethodNotAllowed},
		{"the users", "einstein", "PROPFIND", "/remote.php/dav/trashbin/", []string{"Depth", "1"}, http.StatusMethodNotAllowed},
		{"the user's root", "einstein", "PROPFIND", "/remote.php/dav/trashbin/einstein", []string{"Depth", "1"}, http.StatusMethodNotAllowed},
		{"something else", "einstein", "PROPFIND", "/remote.php/dav/trashbin/einstein/other", []string{"Depth", "1"}, http.StatusNotFound},
		{"anonymous", "", "PROPFIND", trash, []string{"Depth", "1"}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do(tt.user, tt.method, tt.path, "", tt.hdr...), tt.status, exceptions[tt.status], "")
		})
	}

	// Restored where it was, into its folder.
	wantStatus(t, e.do("einstein", "MOVE", trash+"/"+fKey, "", "Destination", "http://example.com/remote.php/dav/trashbin/einstein/restore/f.txt"), http.StatusCreated)
	if rec := e.do("einstein", "GET", "/webdav/docs/f.txt", ""); rec.Code != http.StatusOK || rec.Body.String() != "hello" {
		t.Fatalf("after the restore: %d %q", rec.Code, rec.Body)
	}
	// Emptied.
	wantStatus(t, e.do("einstein", "DELETE", trash, ""), http.StatusNoContent)
	if items := parseMultistatus(t, e.do("einstein", "PROPFIND", trash, ncTrashProps, "Depth", "1")); len(items) != 1 {
		t.Errorf("after emptying: %+v", items)
	}
}

// TestNextcloudVersions: Nextcloud's path of a file's versions lists them
// with Nextcloud's hrefs, sends one, and restores one by MOVE to
// …/restore/target; another user's path is 404.
func TestNextcloudVersions(t *testing.T) {
	e := newEnv(t)
	e.putFile("einstein", "/webdav/f.txt", "one")
	id := e.putFile("einstein", "/webdav/f.txt", "two")
	base := "/remote.php/dav/versions/einstein/versions/" + id
	escaped := escapePath(base)

	versions := parseMultistatus(t, e.do("einstein", "PROPFIND", base, fmt.Sprintf(propfindBody, "<d:getetag/><d:getcontentlength/>"), "Depth", "1"))
	if len(versions) != 2 || versions[0].Href != escaped+"/" || !strings.HasPrefix(versions[1].Href, escaped+"/") ||
		versions[1].Props["DAV: getcontentlength"] != "3" {
		t.Fatalf("versions %+v", versions)
	}
	version := base + "/" + trashKey(t, versions[1].Href)
	if rec := e.do("einstein", "GET", version, ""); rec.Code != http.StatusOK || rec.Body.String() != "one" {
		t.Fatalf("GET the version: %d %q", rec.Code, rec.Body)
	}

	tests := []struct {
		name, user, method, path string
		hdr                      []string
		status                   int
	}{
		{"another user's path", "marie", "PROPFIND", base, []string{"Depth", "1"}, http.StatusNotFound},
		{"a file marie may not see", "marie", "PROPFIND", "/remote.php/dav/versions/marie/versions/" + id, []string{"Depth", "1"}, http.StatusNotFound},
		{"below a version", "einstein", "GET", version + "/x", nil, http.StatusNotFound},
		{"the restore path itself", "einstein", "GET", "/remote.php/dav/versions/einstein/restore/target", nil, http.StatusMethodNotAllowed},
		{"no file", "einstein", "PROPFIND", "/remote.php/dav/versions/einstein/versions/", []string{"Depth", "1"}, http.StatusMethodNotAllowed},
		{"something else", "einstein", "PROPFIND", "/remote.php/dav/versions/einstein/other", []string{"Depth", "1"}, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do(tt.user, tt.method, tt.path, "", tt.hdr...), tt.status, exceptions[tt.status], "")
		})
	}

	wantStatus(t, e.do("einstein", "MOVE", version, "", "Destination", "/remote.php/dav/versions/einstein/restore/target"), http.StatusNoContent)
	if rec := e.do("einstein", "GET", "/webdav/f.txt", ""); rec.Body.String() != "one" {
		t.Fatalf("after the restore: %q", rec.Body)
	}
}

// TestNextcloudCorePreview: Nextcloud's Android app asks a preview by the
// file's id (ThumbnailsCacheManager: /index.php/core/preview?fileId=…);
// it is the preview of the file's WebDAV path, for those who may read it.
func TestNextcloudCorePreview(t *testing.T) {
	e := newPreviewEnv(t)
	id := e.putFile("marie", physicsURL+"/pic.png", testPNG(t, 400, 200))
	preview := "/index.php/core/preview?fileId=" + url.QueryEscape(id) + "&x=64&y=64&a=1&mode=cover&forceIcon=0"
	rec := e.do("richard", "GET", preview, "")
	wantStatus(t, rec, http.StatusOK)
	if img, err := png.Decode(rec.Body); err != nil || img.Bounds().Dx() != 64 {
		t.Fatalf("preview: %v", err)
	}
	tests := []struct {
		name, user, method, path string
		status                   int
	}{
		{"a stranger", "alan", "GET", preview, http.StatusNotFound},
		// (A "%" keeps env.do from escaping the query.)
		{"no file id", "richard", "GET", "/index.php/core/preview?x=64&y=64&c=%22e%22", http.StatusBadRequest},
		{"an unknown id", "richard", "GET", "/index.php/core/preview?fileId=no%20thing", http.StatusNotFound},
		{"a bad size", "richard", "GET", "/index.php/core/preview?fileId=" + url.QueryEscape(id) + "&x=big", http.StatusBadRequest},
		{"PUT", "richard", "PUT", preview, http.StatusMethodNotAllowed},
		{"anonymous", "", "GET", preview, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, e.do(tt.user, tt.method, tt.path, ""), tt.status, exceptions[tt.status], "")
		})
	}
}
