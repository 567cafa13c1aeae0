package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/graph"
	"github.com/davspaces/davspaces/internal/testidp"
	"github.com/davspaces/davspaces/shareid"
)

// sharesDrivePath is the WebDAV path of every user's Shares drive.
var sharesDrivePath = "/dav/spaces/" + shareid.DriveID

// sharesLab is a project space of the test provider's users in which
// carol, whose token names no group, may share.
var sharesLab = []string{
	"space Lab {",
	"	id lab",
	"	manager group:admins",
	"	viewer group:developers",
	"	editor carol",
	"}",
}

const shareProps = `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
	`<oc:permissions/><oc:fileid/><oc:share-types/></d:prop></d:propfind>`

// invite shares item of drive as c with one user or group ("user" or
// "group") through Graph, as ownCloud Web does, and returns the
// permission's id: the share's.
func invite(t *testing.T, c *client, drive, item, kind, grantee, role string) string {
	t.Helper()
	body := fmt.Sprintf(`{"recipients":[{"objectId":%q,"@libre.graph.recipient.type":%q}],"roles":[%q]}`, grantee, kind, role)
	path := "/graph/v1beta1/drives/" + url.PathEscape(drive) + "/items/" + url.PathEscape(item) + "/invite"
	_, b := c.expect(http.StatusOK, http.MethodPost, path, body, "Content-Type", "application/json")
	var answer struct {
		Value []struct {
			ID string `json:"id"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(b), &answer); err != nil || len(answer.Value) != 1 || answer.Value[0].ID == "" {
		t.Fatalf("invite answered %s (%v)", b, err)
	}
	return answer.Value[0].ID
}

// TestSharesOverDAV: through the real Caddy, einstein shares a folder with
// marie as editor through Graph; marie finds it in her Shares drive,
// writes there, and einstein reads it; a viewer writes nothing; a group
// share reaches a member whose token names the group; revoking stops
// marie's next request; a creator who loses the right to share (the
// Caddyfile reloaded) takes the share with them.
func TestSharesOverDAV(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startReloadableWith(t, serverOptions{issuer: idp.Issuer, davspaces: sharesLab})
	einstein := newClient(t, s.URL, "einstein")
	marie := newClient(t, s.URL, "marie")
	richard := newClient(t, s.URL, "richard")
	bob := &client{t: t, base: s.URL, token: idp.Token(t, "bob"), http: http.DefaultClient}
	carol := &client{t: t, base: s.URL, token: idp.Token(t, "carol"), http: http.DefaultClient}

	einstein.expect(http.StatusCreated, "MKCOL", "/webdav/Project", "")
	einstein.expect(http.StatusCreated, "PUT", "/webdav/Project/notes.txt", "relativity")
	einstein.expect(http.StatusCreated, "PUT", "/webdav/private.txt", "mine")
	drive := personalSpaceRef(t, s.server, "einstein")
	item := einstein.prop("/webdav/Project", ocNS, "fileid")
	share := invite(t, einstein, drive, item, "user", "marie", graph.RoleEditorID)

	t.Run("editor writes, owner reads", func(t *testing.T) {
		marie := marie.in(t)
		rs := marie.propfind(sharesDrivePath, "1", shareProps)
		if len(rs) != 2 || !strings.HasSuffix(rs[1].href, "/Project/") || rs[1].props[ocNS+" fileid"] != item {
			t.Fatalf("marie's Shares drive: %+v", rs)
		}
		if got := rs[1].props[ocNS+" permissions"]; got != "SMCK" {
			t.Errorf("the mount point's permissions %q, want SMCK", got)
		}
		marie.expect(http.StatusCreated, "PUT", sharesDrivePath+"/Project/from-marie.txt", "radium")
		if _, b := einstein.in(t).expect(http.StatusOK, "GET", "/webdav/Project/from-marie.txt", ""); b != "radium" {
			t.Fatalf("einstein reads %q", b)
		}
		// The mount point's id and the item's own id reach it too, and
		// nothing above it.
		marie.expect(http.StatusOK, "GET", "/dav/spaces/"+shareid.Mount(share)+"/from-marie.txt", "")
		marie.expect(http.StatusOK, "GET", "/dav/spaces/"+item+"/notes.txt", "")
		marie.expect(http.StatusNotFound, "PROPFIND", "/dav/spaces/"+drive, "", "Depth", "0")
		marie.expect(http.StatusNotFound, "GET", "/dav/spaces/"+drive+"/private.txt", "")
		marie.expect(http.StatusForbidden, "PUT", sharesDrivePath+"/new.txt", "no")
	})

	t.Run("viewer writes nothing", func(t *testing.T) {
		richard := richard.in(t)
		invite(t, einstein.in(t), drive, item, "user", "richard", graph.RoleViewerID)
		if _, b := richard.expect(http.StatusOK, "GET", sharesDrivePath+"/Project/notes.txt", ""); b != "relativity" {
			t.Fatalf("richard reads %q", b)
		}
		richard.expect(http.StatusForbidden, "PUT", sharesDrivePath+"/Project/notes.txt", "changed")
		richard.expect(http.StatusForbidden, "PUT", sharesDrivePath+"/Project/new.txt", "new")
		richard.expect(http.StatusForbidden, "DELETE", sharesDrivePath+"/Project/notes.txt", "")
	})

	t.Run("group share", func(t *testing.T) {
		invite(t, einstein.in(t), drive, item, "group", "developers", graph.RoleViewerID)
		bob.in(t).expect(http.StatusOK, "GET", sharesDrivePath+"/Project/notes.txt", "")
		carol.in(t).expect(http.StatusNotFound, "GET", sharesDrivePath+"/Project/notes.txt", "")
		rs := einstein.in(t).propfind("/webdav/", "1", shareProps)
		for _, r := range rs {
			if strings.HasSuffix(r.href, "/Project/") {
				if got := r.props[ocNS+" share-types"]; got != "<oc:share-type>0</oc:share-type><oc:share-type>1</oc:share-type>" {
					t.Errorf("the folder's share-types %q", got)
				}
			}
		}
	})

	t.Run("revoked", func(t *testing.T) {
		marie := marie.in(t)
		path := "/graph/v1beta1/drives/" + url.PathEscape(drive) + "/items/" + url.PathEscape(item) + "/permissions/" + url.PathEscape(share)
		einstein.in(t).expect(http.StatusNoContent, http.MethodDelete, path, "")
		marie.expect(http.StatusNotFound, "GET", sharesDrivePath+"/Project/notes.txt", "")
		marie.expect(http.StatusNotFound, "GET", "/dav/spaces/"+shareid.Mount(share)+"/notes.txt", "")
		marie.expect(http.StatusNotFound, "GET", "/dav/spaces/"+item+"/notes.txt", "")
		if rs := marie.propfind(sharesDrivePath, "1", shareProps); len(rs) != 1 {
			t.Errorf("marie's Shares drive still lists %d entries", len(rs)-1)
		}
	})

	t.Run("creator loses the role", func(t *testing.T) {
		carol := carol.in(t)
		storageID, _, _ := strings.Cut(drive, "$")
		lab := storageID + "$lab"
		carol.expect(http.StatusCreated, "MKCOL", "/dav/spaces/"+lab+"/Data", "")
		data := carol.prop("/dav/spaces/"+lab+"/Data", ocNS, "fileid")
		invite(t, carol, lab, data, "user", "einstein", graph.RoleEditorID)
		einstein := einstein.in(t)
		einstein.expect(http.StatusCreated, "PUT", sharesDrivePath+"/Data/results.txt", "42")
		s.load(t, "editor carol", "viewer carol")
		einstein.expect(http.StatusNotFound, "GET", sharesDrivePath+"/Data/results.txt", "")
		einstein.expect(http.StatusNotFound, "GET", "/dav/spaces/"+data+"/results.txt", "")
	})
}
