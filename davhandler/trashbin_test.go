package davhandler

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
		{"other method", "einstein", "PUT", physics + "/" + key, nil, http.StatusMethodNotAllowed},
		{"unknown method", "einstein", "PATCH", physics, nil, http.StatusMethodNotAllowed},
		{"viewer, other method", "richard", "GET", physics, nil, http.StatusMethodNotAllowed},
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

// trashProps are the properties a trash-bin listing asks for, and one
// that no trash item has.
var trashPropNames = "<oc:trashbin-original-filename/><oc:trashbin-original-location/><oc:trashbin-delete-timestamp/>" +
	"<oc:trashbin-delete-datetime/><oc:spaceid/><oc:size/><d:getcontentlength/><d:resourcetype/><d:getcontenttype/>" +
	"<oc:permissions/><oc:fileid/><oc:nope/>"

// listTrash lists the trash of spaceID at Depth 1 as user.
func (e *env) listTrash(user, path string) []msResponse {
	e.t.Helper()
	return parseMultistatus(e.t, e.do(user, "PROPFIND", path, fmt.Sprintf(propfindBody, trashPropNames), "Depth", "1"))
}

// trashKey is the key of the item an href of a trash listing names.
func trashKey(t testing.TB, href string) string {
	t.Helper()
	p, err := url.PathUnescape(strings.TrimSuffix(href, "/"))
	if err != nil {
		t.Fatal(err)
	}
	return path.Base(p)
}

// TestTrashListAndRestore: a deleted file is listed in its space's trash
// as oCIS lists it, and comes back with its id and content.
func TestTrashListAndRestore(t *testing.T) {
	e := newEnv(t)
	e.mkcol("einstein", "/webdav", "a")
	id := e.putFile("einstein", "/webdav/a/f.txt", "hello")
	space := e.personalSpaceID("einstein")
	before := time.Now().Add(-time.Second)
	wantStatus(t, e.do("einstein", "DELETE", "/webdav/a/f.txt", ""), http.StatusNoContent)
	wantStatus(t, e.do("einstein", "GET", "/webdav/a/f.txt", ""), http.StatusNotFound)

	for _, base := range []string{trashPath(space), "/remote.php" + trashPath(space)} {
		rs := e.listTrash("einstein", base)
		if len(rs) != 2 {
			t.Fatalf("%d responses, want the root and one item", len(rs))
		}
		root, item := rs[0], rs[1]
		if root.Href != escapePath(base)+"/" || root.Props[nsDAV+" resourcetype"] != "<d:collection/>" {
			t.Errorf("root %+v", root)
		}
		key := trashKey(t, item.Href)
		if err := storage.ValidTrashKey(key); err != nil || item.Href != escapePath(base+"/"+key) {
			t.Errorf("item href %q", item.Href)
		}
		p := item.Props
		want := map[string]string{
			nsOC + " trashbin-original-filename": "f.txt",
			nsOC + " trashbin-original-location": "a/f.txt",
			nsOC + " spaceid":                    testStorageID + "$" + space,
			nsOC + " size":                       "5",
			nsDAV + " getcontentlength":          "5",
			nsDAV + " resourcetype":              "",
			nsDAV + " getcontenttype":            "text/plain; charset=utf-8",
			nsOC + " permissions":                "RDNVWZP",
			nsOC + " fileid":                     id,
		}
		for k, v := range want {
			if p[k] != v {
				t.Errorf("%s = %q, want %q", k, p[k], v)
			}
		}
		ts, err := strconv.ParseInt(p[nsOC+" trashbin-delete-timestamp"], 10, 64)
		if err != nil || time.Unix(ts+1, 0).Before(before) || time.Unix(ts, 0).After(time.Now()) {
			t.Errorf("delete timestamp %q", p[nsOC+" trashbin-delete-timestamp"])
		}
		dt, err := http.ParseTime(p[nsOC+" trashbin-delete-datetime"])
		if err != nil || dt.Unix() != ts || !strings.HasSuffix(p[nsOC+" trashbin-delete-datetime"], " GMT") {
			t.Errorf("delete datetime %q (timestamp %d)", p[nsOC+" trashbin-delete-datetime"], ts)
		}
		if len(item.NotFound) != 1 || item.NotFound[0] != nsOC+" nope" {
			t.Errorf("404 propstat %v", item.NotFound)
		}
	}
	root := parseMultistatus(t, e.do("einstein", "PROPFIND", trashPath(space), "", "Depth", "0"))
	if len(root) != 1 {
		t.Fatalf("Depth 0 answered %d responses", len(root))
	}

	key := trashKey(t, e.listTrash("einstein", trashPath(space))[1].Href)
	rec := e.do("einstein", "MOVE", trashPath(space)+"/"+key, "", "Destination", "/dav/spaces/"+testStorageID+"$"+space+"/a/f.txt")
	wantStatus(t, rec, http.StatusCreated)
	if got := rec.Header().Get("OC-FileId"); got != id {
		t.Errorf("restored as %q, want the id %q it had", got, id)
	}
	if got := e.do("einstein", "GET", "/webdav/a/f.txt", ""); got.Body.String() != "hello" {
		t.Errorf("restored content %q", got.Body)
	}
	if rs := e.listTrash("einstein", trashPath(space)); len(rs) != 1 {
		t.Errorf("%d responses after the restore, want the root alone", len(rs))
	}
	wantError(t, e.do("einstein", "MOVE", trashPath(space)+"/"+key, "", "Destination", "/webdav/g.txt"), http.StatusNotFound, "NotFound", "")
}

// TestTrashRestoreTargets: where a restore may go, and what it answers.
func TestTrashRestoreTargets(t *testing.T) {
	e := newEnv(t)
	spaceURL := "/dav/spaces/" + testStorageID + "$physics"
	trash := trashPath("physics")
	// deleted puts a file called name with body into the trash of physics
	// and returns its key.
	deleted := func(name, body string) string {
		t.Helper()
		e.putFile("marie", spaceURL+"/"+name, body)
		wantStatus(t, e.do("marie", "DELETE", spaceURL+"/"+name, ""), http.StatusNoContent)
		rs := e.listTrash("marie", trash)
		return trashKey(t, rs[1].Href) // newest first
	}
	e.putFile("marie", spaceURL+"/existing.txt", "old")

	key := deleted("f.txt", "one")
	rec := e.do("marie", "MOVE", trash+"/"+key, "", "Destination", spaceURL+"/existing.txt", "Overwrite", "F")
	wantError(t, rec, http.StatusPreconditionFailed, "PreconditionFailed", "The destination node already exists, and the overwrite header is set to false")
	if !strings.Contains(rec.Body.String(), "<s:header>Overwrite</s:header>") {
		t.Errorf("412 without s:header: %s", rec.Body)
	}
	wantError(t, e.do("marie", "MOVE", trash+"/"+key, "", "Destination", spaceURL+"/missing/f.txt"), http.StatusConflict, "Conflict", "")
	wantError(t, e.do("marie", "MOVE", trash+"/"+key, "", "Destination", e.personalSpacePath("marie")+"/f.txt"), http.StatusBadGateway, "BadGateway", "")
	wantError(t, e.do("marie", "MOVE", trash+"/"+key, "", "Destination", e.personalSpacePath("einstein")+"/f.txt"), http.StatusNotFound, "NotFound", "")
	wantError(t, e.do("marie", "MOVE", trash+"/"+key, "", "Destination", spaceURL), http.StatusForbidden, "Forbidden", "")

	// Over an existing file, which goes to the trash in turn.
	wantStatus(t, e.do("marie", "MOVE", trash+"/"+key, "", "Destination", "http://example.com/remote.php"+spaceURL+"/existing.txt"), http.StatusNoContent)
	if got := e.do("marie", "GET", spaceURL+"/existing.txt", ""); got.Body.String() != "one" {
		t.Errorf("content %q after restoring over it", got.Body)
	}
	rs := e.listTrash("marie", trash)
	if len(rs) != 2 || rs[1].Props[nsOC+" trashbin-original-filename"] != "existing.txt" {
		t.Fatalf("the replaced file is not in the trash: %+v", rs)
	}
	// Elsewhere, under another name.
	key = trashKey(t, rs[1].Href)
	wantStatus(t, e.do("marie", "MOVE", trash+"/"+key, "", "Destination", spaceURL+"/renamed.txt"), http.StatusCreated)
	if got := e.do("marie", "GET", spaceURL+"/renamed.txt", ""); got.Body.String() != "old" {
		t.Errorf("content %q restored elsewhere", got.Body)
	}
}

// TestTrashFolder: a deleted folder's children are listed below its key,
// and one of them can be restored alone.
func TestTrashFolder(t *testing.T) {
	e := newEnv(t)
	e.mkcol("einstein", "/webdav", "d", "sub")
	e.putFile("einstein", "/webdav/d/x.txt", "xx")
	yID := e.putFile("einstein", "/webdav/d/sub/y.txt", "yyy")
	wantStatus(t, e.do("einstein", "DELETE", "/webdav/d", ""), http.StatusNoContent)
	trash := trashPath(e.personalSpaceID("einstein"))

	rs := e.listTrash("einstein", trash)
	if len(rs) != 2 {
		t.Fatalf("%d responses", len(rs))
	}
	item := rs[1]
	key := trashKey(t, item.Href)
	if !strings.HasSuffix(item.Href, "/") || item.Props[nsDAV+" resourcetype"] != "<d:collection/>" ||
		item.Props[nsDAV+" getcontenttype"] != "httpd/unix-directory" || item.Props[nsOC+" size"] != "5" {
		t.Errorf("folder item %+v", item)
	}
	children := e.listTrash("einstein", trash+"/"+key+"/")
	var hrefs []string
	for _, c := range children {
		hrefs = append(hrefs, c.Href)
	}
	base := escapePath(trash + "/" + key)
	if want := []string{base + "/", base + "/sub/", base + "/x.txt"}; !slices.Equal(hrefs, want) {
		t.Fatalf("hrefs %q, want %q", hrefs, want)
	}
	if got := children[2].Props[nsOC+" trashbin-original-location"]; got != "d/x.txt" {
		t.Errorf("location of a child %q", got)
	}
	sub := e.listTrash("einstein", trash+"/"+key+"/sub")
	if len(sub) != 2 || sub[1].Href != base+"/sub/y.txt" || sub[1].Props[nsOC+" trashbin-original-location"] != "d/sub/y.txt" {
		t.Fatalf("sub-folder listing %+v", sub)
	}
	wantError(t, e.do("einstein", "PROPFIND", trash+"/"+key+"/nope", "", "Depth", "1"), http.StatusNotFound, "NotFound", "")
	wantError(t, e.do("einstein", "DELETE", trash+"/"+key+"/x.txt", ""), http.StatusMethodNotAllowed, "MethodNotAllowed", "")

	rec := e.do("einstein", "MOVE", trash+"/"+key+"/sub/y.txt", "", "Destination", "/webdav/y.txt")
	wantStatus(t, rec, http.StatusCreated)
	if rec.Header().Get("OC-FileId") != yID {
		t.Errorf("restored as %q, want %q", rec.Header().Get("OC-FileId"), yID)
	}
	if sub := e.listTrash("einstein", trash+"/"+key+"/sub"); len(sub) != 1 {
		t.Errorf("y.txt is still listed in the trash: %+v", sub)
	}
	if got := e.listTrash("einstein", trash)[1].Props[nsOC+" size"]; got != "2" {
		t.Errorf("the item's size is %s after y.txt left it, want 2", got)
	}
}

// TestTrashPurge: a manager purges an item or empties the trash, and the
// space's usage shows it at once; an unknown key is 404.
func TestTrashPurge(t *testing.T) {
	e := newEnv(t)
	spaceURL := "/dav/spaces/" + testStorageID + "$physics"
	trash := trashPath("physics")
	for _, name := range []string{"a.txt", "b.txt", "c.txt"} {
		e.putFile("marie", spaceURL+"/"+name, "1234")
		wantStatus(t, e.do("marie", "DELETE", spaceURL+"/"+name, ""), http.StatusNoContent)
	}
	trashBytes := func() int64 {
		u, err := e.store.Usage(context.Background(), "physics")
		if err != nil {
			t.Fatal(err)
		}
		return u.Trash
	}
	if got := trashBytes(); got != 12 {
		t.Fatalf("Usage.Trash %d, want 12", got)
	}
	rs := e.listTrash("marie", trash)
	key := trashKey(t, rs[1].Href)
	wantError(t, e.do("marie", "DELETE", trash+"/"+key, ""), http.StatusForbidden, "Forbidden", "purge")
	wantStatus(t, e.do("einstein", "DELETE", trash+"/"+key, ""), http.StatusNoContent)
	wantError(t, e.do("einstein", "DELETE", trash+"/"+key, ""), http.StatusNotFound, "NotFound", "")
	if got := len(e.listTrash("marie", trash)); got != 3 {
		t.Errorf("%d responses after a purge, want the root and 2 items", got)
	}
	if got := trashBytes(); got != 8 {
		t.Errorf("Usage.Trash %d after a purge, want 8", got)
	}
	wantStatus(t, e.do("einstein", "DELETE", "/remote.php"+trash, ""), http.StatusNoContent)
	if got := len(e.listTrash("marie", trash)); got != 1 {
		t.Errorf("%d responses after emptying, want the root alone", got)
	}
	if got := trashBytes(); got != 0 {
		t.Errorf("Usage.Trash %d after emptying, want 0", got)
	}
}

// TestTrashRestoreHonoursLocks: a restore writes its destination, so the
// locks there need their tokens, submitted in an If header as for MOVE.
func TestTrashRestoreHonoursLocks(t *testing.T) {
	e := newEnv(t, withLocks)
	spaceURL := "/dav/spaces/" + testStorageID + "$physics"
	trash := trashPath("physics")
	e.putFile("marie", spaceURL+"/f.txt", "one")
	wantStatus(t, e.do("marie", "DELETE", spaceURL+"/f.txt", ""), http.StatusNoContent)
	key := trashKey(t, e.listTrash("marie", trash)[1].Href)
	e.mkcol("marie", spaceURL, "locked")
	token := e.lock("marie", spaceURL+"/locked", lockExclusive)

	dst := []string{"Destination", spaceURL + "/locked/f.txt"}
	wantStatus(t, e.do("einstein", "MOVE", trash+"/"+key, "", dst...), http.StatusLocked)
	wantStatus(t, e.do("einstein", "MOVE", trash+"/"+key, "", append(dst, "If", "(<"+token+">)")...), http.StatusLocked)
	if rs := e.listTrash("marie", trash); len(rs) != 2 {
		t.Fatalf("a refused restore changed the trash: %+v", rs)
	}
	wantStatus(t, e.do("marie", "MOVE", trash+"/"+key, "", append(dst, "If", "(<"+token+">)")...), http.StatusCreated)
}

// TestTrashRecreateKeepsHistory: a file deleted and uploaded again at the
// same place, as a sync client does, comes back with its id, and its
// deleted content is its newest version.
func TestTrashRecreateKeepsHistory(t *testing.T) {
	e := newEnv(t)
	id := e.putFile("einstein", "/webdav/f.txt", "first")
	wantStatus(t, e.do("einstein", "DELETE", "/webdav/f.txt", ""), http.StatusNoContent)
	rec := e.do("einstein", "PUT", "/webdav/f.txt", "second")
	wantStatus(t, rec, http.StatusCreated)
	if got := rec.Header().Get("OC-FileId"); got != id {
		t.Errorf("re-created as %q, want %q", got, id)
	}
	rs := e.listVersions("einstein", id)
	if len(rs) != 2 {
		t.Fatalf("%d responses, want the collection and the deleted content", len(rs))
	}
	if got := e.do("einstein", "GET", rs[1].Href, ""); got.Body.String() != "first" {
		t.Errorf("version %q", got.Body)
	}
}

// TestTrashMakesRoomForUploads: the trash counts in the quota, and an
// upload that needs its room gets it: the oldest items are purged first,
// and nothing is purged for an upload refused anyway.
func TestTrashMakesRoomForUploads(t *testing.T) {
	e := newEnv(t)
	e.store.SetPersonalQuota(10)
	space := e.personalSpaceID("einstein")
	for _, name := range []string{"a", "b"} {
		e.putFile("einstein", "/webdav/"+name, "12345")
		wantStatus(t, e.do("einstein", "DELETE", "/webdav/"+name, ""), http.StatusNoContent)
	}
	root := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav", fmt.Sprintf(propfindBody, "<d:quota-used-bytes/><d:quota-available-bytes/>"), "Depth", "0"))[0]
	if used, room := root.Props[nsDAV+" quota-used-bytes"], root.Props[nsDAV+" quota-available-bytes"]; used != "10" || room != "10" {
		t.Errorf("quota used %s, available %s; want 10 used by the trash and 10 an upload can have", used, room)
	}
	wantError(t, e.do("einstein", "PUT", "/webdav/big", "12345678901"), http.StatusInsufficientStorage, "InsufficientStorage", "")
	if rs := e.listTrash("einstein", trashPath(space)); len(rs) != 3 {
		t.Fatalf("a refused upload purged the trash: %d responses", len(rs))
	}
	wantStatus(t, e.do("einstein", "PUT", "/webdav/c", "123"), http.StatusCreated)
	rs := e.listTrash("einstein", trashPath(space))
	if len(rs) != 2 || rs[1].Props[nsOC+" trashbin-original-filename"] != "b" {
		t.Fatalf("want the oldest item purged, b kept: %+v", rs)
	}
}
