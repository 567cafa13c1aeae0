package davhandler

import (
	"fmt"
	"net/http"
	"path"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestVersionsHostile: the versions of a file of a space the caller may
// not see do not exist for them; readers may not restore; malformed keys
// and folders have no versions.
func TestVersionsHostile(t *testing.T) {
	e := newEnv(t)
	own := e.putFile("einstein", "/webdav/f.txt", "one")
	shared := e.putFile("einstein", "/dav/spaces/physics/p.txt", "one")
	e.mkcol("einstein", "/webdav", "folder")
	folder := e.fileID("einstein", "/webdav/folder")
	key := "1700000000000000000.0"
	v := func(id string) string { return "/dav/meta/" + id + "/v" }

	tests := []struct {
		name, user, method, path string
		hdr                      []string
		status                   int
	}{
		{"stranger lists", "marie", "PROPFIND", v(own), []string{"Depth", "1"}, http.StatusNotFound},
		{"stranger gets", "marie", "GET", v(own) + "/" + key, nil, http.StatusNotFound},
		{"stranger heads", "marie", "HEAD", v(own) + "/" + key, nil, http.StatusNotFound},
		{"stranger restores", "marie", "COPY", v(own) + "/" + key, nil, http.StatusNotFound},
		{"stranger, malformed key", "marie", "GET", v(own) + "/nokey", nil, http.StatusNotFound},
		{"stranger to a project space", "alan", "PROPFIND", v(shared), []string{"Depth", "1"}, http.StatusNotFound},
		{"viewer restores", "richard", "COPY", v(shared) + "/" + key, nil, http.StatusForbidden},
		{"malformed key", "einstein", "GET", v(own) + "/nokey", nil, http.StatusNotFound},
		{"malformed key, restore", "einstein", "COPY", v(own) + "/1.x", nil, http.StatusNotFound},
		{"malformed key, propfind", "einstein", "PROPFIND", v(own) + "/x", []string{"Depth", "0"}, http.StatusNotFound},
		{"a folder", "einstein", "PROPFIND", v(folder), []string{"Depth", "1"}, http.StatusNotFound},
		{"below a version", "einstein", "GET", v(own) + "/" + key + "/x", nil, http.StatusNotFound},
		{"put to the collection", "einstein", "PUT", v(own), nil, http.StatusMethodNotAllowed},
		{"delete a version", "einstein", "DELETE", v(own) + "/" + key, nil, http.StatusMethodNotAllowed},
		{"depth infinity", "einstein", "PROPFIND", v(own), []string{"Depth", "infinity"}, http.StatusBadRequest},
		{"anonymous", "", "GET", v(own) + "/" + key, nil, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do(tt.user, tt.method, tt.path, "", tt.hdr...)
			if tt.method == http.MethodHead {
				wantStatus(t, rec, tt.status)
				return
			}
			wantError(t, rec, tt.status, exceptions[tt.status], "")
			if tt.status == http.StatusMethodNotAllowed && rec.Header().Get("Allow") == "" {
				t.Error("a 405 without Allow")
			}
		})
	}
	rec := e.do("richard", "COPY", v(shared)+"/"+key, "")
	wantError(t, rec, http.StatusForbidden, "Forbidden", "You have no permission to restore versions on this resource")
}

// versionPropNames are the properties a versions listing asks for.
const versionPropNames = "<d:getetag/><d:getlastmodified/><d:getcontentlength/><d:resourcetype/><d:getcontenttype/><oc:checksums/>"

// listVersions lists the versions of file id at Depth 1 as user.
func (e *env) listVersions(user, id string) []msResponse {
	e.t.Helper()
	return parseMultistatus(e.t, e.do(user, "PROPFIND", "/dav/meta/"+id+"/v", fmt.Sprintf(propfindBody, versionPropNames), "Depth", "1"))
}

// TestVersionsListGetRestore: every replaced content is listed, sent as
// a file is, and restored as the current content, which becomes a
// version in turn.
func TestVersionsListGetRestore(t *testing.T) {
	e := newEnv(t)
	spaceURL := "/dav/spaces/" + testStorageID + "$physics"
	id := e.putFile("marie", spaceURL+"/f.txt", "one")
	e.putFile("marie", spaceURL+"/f.txt", "two!")
	e.putFile("marie", spaceURL+"/f.txt", "three")

	rs := e.listVersions("richard", id)
	if len(rs) != 3 {
		t.Fatalf("%d responses, want the collection and 2 versions", len(rs))
	}
	base := escapePath("/dav/meta/" + id + "/v")
	if rs[0].Href != base+"/" || rs[0].Props[nsDAV+" resourcetype"] != "<d:collection/>" {
		t.Errorf("collection %+v", rs[0])
	}
	var keys []string
	for i, want := range []string{"4", "3"} {
		v := rs[i+1]
		key := path.Base(v.Href)
		keys = append(keys, key)
		if err := storage.ValidVersionKey("", key); err != nil || v.Href != base+"/"+key {
			t.Errorf("version href %q", v.Href)
		}
		if v.Props[nsDAV+" getcontentlength"] != want || !etagPattern.MatchString(v.Props[nsDAV+" getetag"]) ||
			v.Props[nsDAV+" resourcetype"] != "" || v.Props[nsDAV+" getcontenttype"] != "text/plain; charset=utf-8" ||
			!strings.Contains(v.Props[nsOC+" checksums"], "SHA1:") {
			t.Errorf("version %d: %+v", i, v.Props)
		}
		if _, err := http.ParseTime(v.Props[nsDAV+" getlastmodified"]); err != nil {
			t.Errorf("getlastmodified %q", v.Props[nsDAV+" getlastmodified"])
		}
	}
	one := "/dav/meta/" + id + "/v/" + keys[1]

	// Sent as a file is, to readers too.
	get := e.do("richard", "GET", one, "")
	wantStatus(t, get, http.StatusOK)
	etag := get.Header().Get("ETag")
	if get.Body.String() != "one" || etag == "" || get.Header().Get("OC-FileId") != id {
		t.Errorf("GET: %q, headers %v", get.Body, get.Header())
	}
	if got := e.do("richard", "GET", one, "", "Range", "bytes=1-"); got.Code != http.StatusPartialContent || got.Body.String() != "ne" {
		t.Errorf("range: %d %q", got.Code, got.Body)
	}
	wantStatus(t, e.do("richard", "GET", one, "", "If-None-Match", etag), http.StatusNotModified)
	wantStatus(t, e.do("richard", "GET", one, "", "If-Match", `"other"`), http.StatusPreconditionFailed)
	head := e.do("richard", "HEAD", "/remote.php"+one, "")
	if head.Code != http.StatusOK || head.Header().Get("Content-Length") != "3" || head.Body.Len() != 0 {
		t.Errorf("HEAD: %d %v", head.Code, head.Header())
	}
	one0 := parseMultistatus(t, e.do("richard", "PROPFIND", one, fmt.Sprintf(propfindBody, versionPropNames), "Depth", "0"))
	if len(one0) != 1 || one0[0].Props[nsDAV+" getcontentlength"] != "3" {
		t.Errorf("PROPFIND of one version: %+v", one0)
	}
	wantError(t, e.do("richard", "GET", "/dav/meta/"+id+"/v/1.0", ""), http.StatusNotFound, "NotFound", "")

	// Restored: a write of the file.
	wantStatus(t, e.do("marie", "COPY", one, "", "If-Match", `"stale"`), http.StatusPreconditionFailed)
	rec := e.do("marie", "COPY", one, "", "Destination", spaceURL+"/f.txt")
	wantStatus(t, rec, http.StatusNoContent)
	if rec.Header().Get("OC-FileId") != id {
		t.Errorf("restore answered for %q", rec.Header().Get("OC-FileId"))
	}
	if got := e.do("marie", "GET", spaceURL+"/f.txt", ""); got.Body.String() != "one" {
		t.Errorf("content %q after the restore", got.Body)
	}
	rs = e.listVersions("marie", id)
	if len(rs) != 3 || rs[1].Props[nsDAV+" getcontentlength"] != "5" || rs[2].Props[nsDAV+" getcontentlength"] != "4" {
		t.Errorf("after the restore the versions are %+v, want three and two!", rs)
	}
	wantError(t, e.do("marie", "COPY", one, ""), http.StatusNotFound, "NotFound", "")
}

// TestVersionRestoreHonoursLocks: restoring a version writes the file, so
// its lock's token is needed, as for a PUT.
func TestVersionRestoreHonoursLocks(t *testing.T) {
	e := newEnv(t, withLocks)
	spaceURL := "/dav/spaces/" + testStorageID + "$physics"
	id := e.putFile("marie", spaceURL+"/f.txt", "one")
	e.putFile("marie", spaceURL+"/f.txt", "two")
	one := e.listVersions("marie", id)[1].Href
	token := e.lock("marie", spaceURL+"/f.txt", lockExclusive)
	wantStatus(t, e.do("einstein", "COPY", one, ""), http.StatusLocked)
	wantStatus(t, e.do("marie", "COPY", one, ""), http.StatusLocked)
	if got := e.do("marie", "GET", spaceURL+"/f.txt", ""); got.Body.String() != "two" {
		t.Fatalf("a refused restore changed the file to %q", got.Body)
	}
	wantStatus(t, e.do("marie", "COPY", one, "", "If", "(<"+token+">)"), http.StatusNoContent)
	if got := e.do("marie", "GET", spaceURL+"/f.txt", ""); got.Body.String() != "one" {
		t.Fatalf("content %q after the restore", got.Body)
	}
}

// TestVersionRestoreThroughFolder: ownCloud Web restores a version with
// COPY at the meta path of the file's parent folder and names the file
// only as Destination's last segment (web-client/src/webdav/
// restoreFileVersion.ts); anything else at a folder's …/v stays 404.
func TestVersionRestoreThroughFolder(t *testing.T) {
	e := newEnv(t)
	spaceURL := "/dav/spaces/" + testStorageID + "$physics"
	e.mkcol("marie", spaceURL, "docs", "sub")
	id := e.putFile("marie", spaceURL+"/docs/f.txt", "one")
	e.putFile("marie", spaceURL+"/docs/f.txt", "two")
	key := path.Base(e.listVersions("marie", id)[1].Href)
	folder := "/dav/meta/" + e.fileID("marie", spaceURL+"/docs") + "/v"
	// Web's Destination: /dav/files/ + the space's webDavPath + the path.
	webDst := "/dav/files/spaces/" + testStorageID + "$physics/docs/"

	for _, c := range []struct {
		name, user, method, path string
		hdr                      []string
		want                     int
	}{
		{"no Destination", "marie", "COPY", folder + "/" + key, nil, http.StatusNotFound},
		{"an absent file", "marie", "COPY", folder + "/" + key, []string{"Destination", webDst + "absent.txt"}, http.StatusNotFound},
		{"a sub-folder", "marie", "COPY", folder + "/" + key, []string{"Destination", webDst + "sub"}, http.StatusNotFound},
		{"an unknown key", "marie", "COPY", folder + "/1.0", []string{"Destination", webDst + "f.txt"}, http.StatusNotFound},
		{"a folder's versions", "marie", "PROPFIND", folder, []string{"Depth", "1"}, http.StatusNotFound},
		{"a reader", "richard", "COPY", folder + "/" + key, []string{"Destination", webDst + "f.txt"}, http.StatusForbidden},
		{"Web's restore", "marie", "COPY", folder + "/" + key, []string{"Destination", "http://example.org" + webDst + "f.txt", "Overwrite", "F"}, http.StatusNoContent},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := e.do(c.user, c.method, c.path, "", c.hdr...)
			wantStatus(t, rec, c.want)
			if c.want == http.StatusNoContent && rec.Header().Get("OC-FileId") != id {
				t.Errorf("restore answered for %q, want %q", rec.Header().Get("OC-FileId"), id)
			}
		})
	}
	if got := e.do("marie", "GET", spaceURL+"/docs/f.txt", ""); got.Body.String() != "one" {
		t.Errorf("content %q after Web's restore, want the first", got.Body)
	}
}
