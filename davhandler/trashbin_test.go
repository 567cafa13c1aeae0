package davhandler

import (
	"context"
	"net/http"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// trashPath is the trash-bin of space spaceID.
func trashPath(spaceID string) string {
	return "/dav/spaces/trash-bin/" + testStorageID + "$" + spaceID
}

// personalSpaceID is the id of user's personal space.
func (e *env) personalSpaceID(user string) string {
	e.t.Helper()
	s, err := e.store.PersonalSpace(context.Background(), storage.User{ID: user})
	if err != nil {
		e.t.Fatal(err)
	}
	return s.ID
}

// TestTrashHostile: whoever may not see a space learns nothing of its
// trash, whatever the method and the key; members who may not change it
// are refused; malformed keys and references are client errors.
func TestTrashHostile(t *testing.T) {
	e := newEnv(t)
	physics := trashPath("physics")
	home := trashPath(e.personalSpaceID("einstein"))
	key := "1700000000000000000.n1"
	restoreTo := []string{"Destination", "/dav/spaces/physics/r.txt"}

	tests := []struct {
		name, user, method, path string
		hdr                      []string
		status                   int
	}{
		// A stranger: 404 for the space's trash, every key, every method.
		{"stranger lists", "marie", "PROPFIND", home, []string{"Depth", "1"}, http.StatusNotFound},
		{"stranger lists an item", "marie", "PROPFIND", home + "/" + key, []string{"Depth", "1"}, http.StatusNotFound},
		{"stranger lists a malformed key", "marie", "PROPFIND", home + "/nokey", []string{"Depth", "1"}, http.StatusNotFound},
		{"stranger restores", "marie", "MOVE", home + "/" + key, []string{"Destination", home + "/x"}, http.StatusNotFound},
		{"stranger purges", "marie", "DELETE", home + "/" + key, nil, http.StatusNotFound},
		{"stranger empties", "marie", "DELETE", home, nil, http.StatusNotFound},
		{"stranger patches", "marie", "PATCH", home, nil, http.StatusNotFound},
		{"stranger to a project space", "alan", "PROPFIND", physics, []string{"Depth", "0"}, http.StatusNotFound},
		{"stranger purges a project item", "alan", "DELETE", physics + "/" + key, nil, http.StatusNotFound},
		{"unknown space", "einstein", "PROPFIND", trashPath("nope"), []string{"Depth", "0"}, http.StatusNotFound},
		{"other storage", "einstein", "PROPFIND", "/dav/spaces/trash-bin/other$physics", []string{"Depth", "0"}, http.StatusNotFound},
		// A viewer: 403, as for the space's own changes.
		{"viewer lists", "richard", "PROPFIND", physics, []string{"Depth", "1"}, http.StatusForbidden},
		{"viewer restores", "richard", "MOVE", physics + "/" + key, restoreTo, http.StatusForbidden},
		{"viewer purges", "richard", "DELETE", physics + "/" + key, nil, http.StatusForbidden},
		{"viewer empties", "richard", "DELETE", physics, nil, http.StatusForbidden},
		// An editor restores but does not purge.
		{"editor purges", "marie", "DELETE", physics + "/" + key, nil, http.StatusForbidden},
		{"editor empties", "marie", "DELETE", physics, nil, http.StatusForbidden},
		// Malformed requests.
		{"malformed key", "einstein", "PROPFIND", physics + "/nokey", []string{"Depth", "0"}, http.StatusNotFound},
		{"malformed key, number", "einstein", "PROPFIND", physics + "/x.n1", []string{"Depth", "0"}, http.StatusNotFound},
		{"purge a malformed key", "einstein", "DELETE", physics + "/nokey", nil, http.StatusNotFound},
		{"purge below a malformed key", "einstein", "DELETE", physics + "/nokey/a", nil, http.StatusNotFound},
		{"restore a malformed key", "marie", "MOVE", physics + "/.", restoreTo, http.StatusBadRequest},
		{"restore without Destination", "marie", "MOVE", physics + "/" + key, nil, http.StatusBadRequest},
		{"restore with a bad Overwrite", "marie", "MOVE", physics + "/" + key, append([]string{"Overwrite", "X"}, restoreTo...), http.StatusBadRequest},
		{"restore the root", "marie", "MOVE", physics, restoreTo, http.StatusMethodNotAllowed},
		{"restore into the trash", "marie", "MOVE", physics + "/" + key, []string{"Destination", physics + "/x"}, http.StatusBadRequest},
		{"a file id", "einstein", "PROPFIND", physics + "!n1", []string{"Depth", "0"}, http.StatusBadRequest},
		{"no space id", "einstein", "PROPFIND", "/dav/spaces/trash-bin/$", []string{"Depth", "0"}, http.StatusBadRequest},
		{"no space", "einstein", "PROPFIND", "/dav/spaces/trash-bin/", []string{"Depth", "0"}, http.StatusMethodNotAllowed},
		{"bad depth", "einstein", "PROPFIND", physics, []string{"Depth", "2"}, http.StatusBadRequest},
		{"depth infinity", "einstein", "PROPFIND", physics, []string{"Depth", "infinity"}, http.StatusBadRequest},
		{"move a file into the trash", "einstein", "MOVE", "/webdav/f.txt", []string{"Destination", home + "/" + key}, http.StatusBadRequest},
		{"copy a file onto a version", "einstein", "COPY", "/webdav/f.txt", []string{"Destination", "/dav/meta/x/v/1.0"}, http.StatusBadRequest},
		{"other method", "einstein", "PUT", physics + "/" + key, nil, http.StatusNotImplemented},
		{"anonymous", "", "PROPFIND", physics, []string{"Depth", "0"}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do(tt.user, tt.method, tt.path, "", tt.hdr...)
			wantError(t, rec, tt.status, exceptions[tt.status], "")
			if tt.status == http.StatusMethodNotAllowed && rec.Header().Get("Allow") == "" {
				t.Error("a 405 without Allow")
			}
		})
	}
}
