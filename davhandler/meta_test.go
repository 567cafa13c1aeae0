package davhandler

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

const metaPathBody = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:meta-path-for-user/>%s</d:prop></d:propfind>`

// putFile writes body at path as user and returns the file's resource id.
func (e *env) putFile(user, path, body string) string {
	e.t.Helper()
	rec := e.do(user, "PUT", path, body)
	if rec.Code != http.StatusCreated && rec.Code != http.StatusNoContent {
		e.t.Fatalf("PUT %s: status %d\n%s", path, rec.Code, rec.Body)
	}
	return rec.Header().Get("OC-FileId")
}

// fileID is the resource id of the node at path, as user sees it.
func (e *env) fileID(user, path string) string {
	e.t.Helper()
	rs := parseMultistatus(e.t, e.do(user, "PROPFIND", path, fmt.Sprintf(propfindBody, "<oc:fileid/>"), "Depth", "0"))
	return rs[0].Props[nsOC+" fileid"]
}

// mkcol creates the folders of path, each in turn, as user.
func (e *env) mkcol(user, base string, names ...string) {
	e.t.Helper()
	for _, n := range names {
		base += "/" + n
		wantStatus(e.t, e.do(user, "MKCOL", base, ""), http.StatusCreated)
	}
}

// TestMetaPathForUser: /dav/meta/{id} tells a member where a node is in
// its space, however the id is written, and tells nobody else anything.
func TestMetaPathForUser(t *testing.T) {
	e := newEnv(t)
	e.mkcol("einstein", "/webdav", "a", "b c")
	id := e.putFile("einstein", "/webdav/a/b c/f.txt", "x")
	e.mkcol("einstein", "/dav/spaces/physics", "shared")
	physicsID := e.putFile("einstein", "/dav/spaces/physics/shared/p.txt", "p")
	space, _, _ := strings.Cut(id, "!")
	escaped := strings.NewReplacer("$", "%24", "!", "%21").Replace(id)

	tests := []struct {
		name, user, path string
		wantPath         string
	}{
		{"file", "einstein", "/dav/meta/" + id, "/a/b c/f.txt"},
		{"remote.php, encoded", "einstein", "/remote.php/dav/meta/" + escaped, "/a/b c/f.txt"},
		{"space root", "einstein", "/dav/meta/" + space, "/"},
		{"viewer of a project space", "richard", "/dav/meta/" + physicsID, "/shared/p.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do(tt.user, "PROPFIND", tt.path, fmt.Sprintf(metaPathBody, "<oc:fileid/><oc:spaceid/><oc:id/><oc:size/>"))
			rs := parseMultistatus(t, rec)
			if len(rs) != 1 {
				t.Fatalf("%d responses, want 1", len(rs))
			}
			r := rs[0]
			if got := r.Props[nsOC+" meta-path-for-user"]; got != tt.wantPath {
				t.Errorf("path %q, want %q", got, tt.wantPath)
			}
			wantID := r.Props[nsOC+" fileid"]
			if tt.wantPath != "/" && wantID != id && wantID != physicsID {
				t.Errorf("oc:fileid %q", wantID)
			}
			if r.Props[nsOC+" id"] != wantID || !strings.HasPrefix(wantID, r.Props[nsOC+" spaceid"]+"!") {
				t.Errorf("ids disagree: %v", r.Props)
			}
			if len(r.NotFound) != 1 || r.NotFound[0] != nsOC+" size" {
				t.Errorf("404 propstat %v, want oc:size alone", r.NotFound)
			}
			if u, _ := url.PathUnescape(r.Href); !strings.HasSuffix(u, "/") || !strings.Contains(u, "/dav/meta/") {
				t.Errorf("href %q", r.Href)
			}
		})
	}
}

// TestMetaRefusals: what /dav/meta answers besides a path. A node of a
// space the caller is no member of is as unknown as one that never was.
func TestMetaRefusals(t *testing.T) {
	e := newEnv(t)
	id := e.putFile("einstein", "/webdav/f.txt", "x")
	e.mkcol("einstein", "/webdav", "gone")
	gone := e.putFile("einstein", "/webdav/gone/g.txt", "g")
	wantStatus(t, e.do("einstein", "DELETE", "/webdav/gone", ""), http.StatusNoContent)
	space, _, _ := strings.Cut(id, "!")
	body := fmt.Sprintf(metaPathBody, "")

	tests := []struct {
		name, user, method, path, body string
		status                         int
		message                        string
	}{
		{"stranger", "marie", "PROPFIND", "/dav/meta/" + id, body, http.StatusNotFound, "Resource " + id + " not found"},
		{"stranger, root", "marie", "PROPFIND", "/dav/meta/" + space, body, http.StatusNotFound, "not found"},
		{"stranger, other method", "marie", "GET", "/dav/meta/" + id, "", http.StatusNotFound, "not found"},
		{"deleted", "einstein", "PROPFIND", "/dav/meta/" + gone, body, http.StatusNotFound, "not found"},
		{"unknown node", "einstein", "PROPFIND", "/dav/meta/" + space + "!nope", body, http.StatusNotFound, "not found"},
		{"unknown space", "einstein", "PROPFIND", "/dav/meta/" + testStorageID + "$nope!nope", body, http.StatusNotFound, "not found"},
		{"other storage", "einstein", "PROPFIND", "/dav/meta/other" + strings.TrimPrefix(id, testStorageID), body, http.StatusNotFound, "not found"},
		{"no space id", "einstein", "PROPFIND", "/dav/meta/$!x", body, http.StatusBadRequest, "Invalid space id"},
		{"path not asked", "einstein", "PROPFIND", "/dav/meta/" + id, fmt.Sprintf(propfindBody, "<oc:fileid/>"), http.StatusBadRequest, "meta-path-for-user"},
		{"allprop", "einstein", "PROPFIND", "/dav/meta/" + id, "", http.StatusBadRequest, "meta-path-for-user"},
		{"malformed body", "einstein", "PROPFIND", "/dav/meta/" + id, "<d:propfind", http.StatusBadRequest, ""},
		{"GET", "einstein", "GET", "/dav/meta/" + id, "", http.StatusMethodNotAllowed, "PROPFIND"},
		{"below", "einstein", "PROPFIND", "/dav/meta/" + id + "/x", body, http.StatusNotFound, ""},
		{"no id", "einstein", "PROPFIND", "/dav/meta/", body, http.StatusMethodNotAllowed, ""},
		{"anonymous", "", "PROPFIND", "/dav/meta/" + id, body, http.StatusUnauthorized, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do(tt.user, tt.method, tt.path, tt.body)
			wantError(t, rec, tt.status, exceptions[tt.status], tt.message)
			if tt.status == http.StatusMethodNotAllowed && rec.Header().Get("Allow") == "" {
				t.Error("a 405 without Allow")
			}
		})
	}
}

// TestUndoOptions: OPTIONS on the new paths answers, without credentials,
// what each serves.
func TestUndoOptions(t *testing.T) {
	e := newEnv(t)
	tests := map[string]string{
		"/dav/spaces/trash-bin/s$p":                allowedOnTrash,
		"/remote.php/dav/spaces/trash-bin/s$p/1.n": allowedOnTrashItem,
		"/dav/spaces/trash-bin/s$p/1.n/a":          allowedInTrashItem,
		"/dav/meta/s$p!n":                          allowedOnMeta,
		"/dav/meta/s$p!n/v":                        allowedOnVersions,
		"/dav/meta/s$p!n/v/1.0":                    allowedOnVersion,
	}
	for path, allow := range tests {
		rec := e.do("", "OPTIONS", path, "")
		wantStatus(t, rec, http.StatusNoContent)
		if got := rec.Header().Get("Allow"); got != allow {
			t.Errorf("%s: Allow %q, want %q", path, got, allow)
		}
	}
}
