package davhandler

import (
	"net/http"
	"testing"
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
