package davhandler

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/shareid"
	"github.com/davspaces/davspaces/storage"
)

// sharesDrive is the /dav/spaces path of the Shares drive.
var sharesDrive = "/dav/spaces/" + shareid.DriveID

// withGroups makes the Basic user "lise" a member of the group physicists.
func withGroups(c *Config) {
	c.User = func(r *http.Request) (storage.User, bool) {
		u, ok := basicAuthUser(r)
		if u.ID == "lise" {
			u.Groups = []string{"physicists"}
		}
		return u, ok
	}
}

// share makes a share of the node id (a resource id) by creator.
func (e *env) share(creator, resourceID string, kind storage.ShareKind, grantee string, role storage.ShareRole) storage.Share {
	e.t.Helper()
	_, rest, _ := strings.Cut(resourceID, "$")
	spaceID, nodeID, _ := strings.Cut(rest, "!")
	s, err := e.store.CreateShare(context.Background(), storage.Share{
		Kind: kind, SpaceID: spaceID, NodeID: nodeID, Creator: creator, Role: role, Grantee: grantee,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// einsteinShares gives einstein a folder Project with a file in it,
// shared with marie with role; it returns the share and the folder's id.
func einsteinShares(t *testing.T, e *env, role storage.ShareRole) (storage.Share, string) {
	t.Helper()
	home := e.personalSpacePath("einstein")
	e.mkcol("einstein", home, "Project")
	e.putFile("einstein", home+"/Project/notes.txt", "relativity")
	id := e.fileID("einstein", home+"/Project")
	return e.share("einstein", id, storage.ShareWithUser, "marie", role), id
}

func permsProp() string {
	return fmt.Sprintf(propfindBody, "<oc:permissions/><oc:fileid/><oc:name/><oc:share-types/><oc:file-parent/>")
}

// TestSharesDriveEditor: marie finds einstein's folder in her Shares drive,
// writes there, and einstein reads what she wrote in his space.
func TestSharesDriveEditor(t *testing.T) {
	e := newEnv(t)
	s, folderID := einsteinShares(t, e, storage.ShareEditor)

	rs := parseMultistatus(t, e.do("marie", "PROPFIND", sharesDrive, permsProp(), "Depth", "1"))
	if len(rs) != 2 {
		t.Fatalf("%d responses, want the root and one mount point", len(rs))
	}
	mount := rs[1]
	if mount.Href != sharesDrive+"/Project/" || mount.Props[nsOC+" name"] != "Project" || mount.Props[nsOC+" fileid"] != folderID {
		t.Errorf("mount point %+v", mount)
	}
	if got := mount.Props[nsOC+" permissions"]; got != "SMCK" {
		t.Errorf("mount point permissions %q, want SMCK", got)
	}
	if _, ok := mount.Props[nsOC+" file-parent"]; ok {
		t.Error("the mount point names its parent, which the recipient may not see")
	}

	wantStatus(t, e.do("marie", "PUT", sharesDrive+"/Project/from-marie.txt", "radium"), http.StatusCreated)
	got := e.do("einstein", "GET", e.personalSpacePath("einstein")+"/Project/from-marie.txt", "")
	if got.Code != http.StatusOK || got.Body.String() != "radium" {
		t.Fatalf("einstein reads %d %q", got.Code, got.Body)
	}
	rs = parseMultistatus(t, e.do("marie", "PROPFIND", sharesDrive+"/Project/notes.txt", permsProp(), "Depth", "0"))
	if got := rs[0].Props[nsOC+" permissions"]; got != "SDNVW" {
		t.Errorf("a file in the share: permissions %q, want SDNVW", got)
	}

	// The mount point's id and the item's resource id reach it too.
	for _, base := range []string{"/dav/spaces/" + shareid.Mount(s.ID), "/dav/spaces/" + folderID} {
		got := e.do("marie", "GET", base+"/from-marie.txt", "")
		if got.Code != http.StatusOK || got.Body.String() != "radium" {
			t.Errorf("GET through %s: %d %q", base, got.Code, got.Body)
		}
	}
	// The shared folder itself stays where einstein put it.
	wantStatus(t, e.do("marie", "DELETE", sharesDrive+"/Project", ""), http.StatusForbidden)
	wantStatus(t, e.do("marie", "DELETE", sharesDrive+"/Project/from-marie.txt", ""), http.StatusNoContent)
}

// TestSharesNeverReachAbove: a recipient reaches nothing above or beside
// the shared item, by path, resource id or /dav/meta; the root of the
// Shares drive takes nothing.
func TestSharesNeverReachAbove(t *testing.T) {
	e := newEnv(t)
	_, folderID := einsteinShares(t, e, storage.ShareEditor)
	home := e.personalSpacePath("einstein")
	besideID := e.putFile("einstein", home+"/secret.txt", "private")
	rootID := e.fileID("einstein", home)

	for _, path := range []string{
		home, home + "/secret.txt",
		"/dav/spaces/" + rootID, "/dav/spaces/" + besideID,
		"/dav/meta/" + rootID, "/dav/meta/" + besideID,
		sharesDrive + "/secret.txt", sharesDrive + "/Project/nothing",
		"/dav/spaces/" + shareid.Mount("no-such-share"),
	} {
		rec := e.do("marie", "PROPFIND", path, fmt.Sprintf(metaPathBody, ""), "Depth", "0")
		if rec.Code != http.StatusNotFound {
			t.Errorf("PROPFIND %s: %d, want 404", path, rec.Code)
		}
	}
	wantStatus(t, e.do("marie", "PROPFIND", "/dav/spaces/"+folderID+"/..", "", "Depth", "0"), http.StatusBadRequest)
	// Somebody else's share answers as one that never existed.
	s := e.share("einstein", besideID, storage.ShareWithUser, "richard", storage.ShareViewer)
	theirs := e.do("marie", "GET", "/dav/spaces/"+shareid.Mount(s.ID), "")
	none := e.do("marie", "GET", "/dav/spaces/"+shareid.Mount("no-such-share"), "")
	if theirs.Code != http.StatusNotFound || theirs.Body.String() != none.Body.String() {
		t.Errorf("another's mount point: %d %q, a missing one: %q", theirs.Code, theirs.Body, none.Body)
	}
	wantStatus(t, e.do("marie", "PUT", sharesDrive+"/new.txt", "x"), http.StatusForbidden)
	wantStatus(t, e.do("marie", "MKCOL", sharesDrive+"/New", ""), http.StatusForbidden)
	// Moving out of the share into marie's own space is no copy across.
	rec := e.do("marie", "MOVE", sharesDrive+"/Project/notes.txt", "", "Destination", e.personalSpacePath("marie")+"/stolen.txt")
	if rec.Code < 400 {
		t.Errorf("MOVE out of the share: %d", rec.Code)
	}
}

// TestSharesMetaPath: /dav/meta of a node below a shared item tells the
// recipient its place in the Shares drive.
func TestSharesMetaPath(t *testing.T) {
	e := newEnv(t)
	einsteinShares(t, e, storage.ShareViewer)
	fileID := e.fileID("einstein", e.personalSpacePath("einstein")+"/Project/notes.txt")
	rs := parseMultistatus(t, e.do("marie", "PROPFIND", "/dav/meta/"+fileID, fmt.Sprintf(metaPathBody, "<oc:spaceid/><oc:fileid/>")))
	p := rs[0].Props
	if p[nsOC+" meta-path-for-user"] != "/Project/notes.txt" || p[nsOC+" spaceid"] != shareid.DriveID || p[nsOC+" fileid"] != fileID {
		t.Errorf("meta of a shared file: %v", p)
	}
}

// TestSharesViewer: a viewer reads and changes nothing.
func TestSharesViewer(t *testing.T) {
	e := newEnv(t)
	einsteinShares(t, e, storage.ShareViewer)
	wantStatus(t, e.do("marie", "GET", sharesDrive+"/Project/notes.txt", ""), http.StatusOK)
	wantStatus(t, e.do("marie", "PUT", sharesDrive+"/Project/notes.txt", "changed"), http.StatusForbidden)
	wantStatus(t, e.do("marie", "PUT", sharesDrive+"/Project/new.txt", "new"), http.StatusForbidden)
	wantStatus(t, e.do("marie", "DELETE", sharesDrive+"/Project/notes.txt", ""), http.StatusForbidden)
	wantStatus(t, e.do("marie", "MKCOL", sharesDrive+"/Project/Sub", ""), http.StatusForbidden)
	rs := parseMultistatus(t, e.do("marie", "PROPFIND", sharesDrive+"/Project", permsProp(), "Depth", "1"))
	if rs[0].Props[nsOC+" permissions"] != "SM" || rs[1].Props[nsOC+" permissions"] != "S" {
		t.Errorf("viewer's letters: %q, %q", rs[0].Props[nsOC+" permissions"], rs[1].Props[nsOC+" permissions"])
	}
}

// TestSharesUploader: an uploader adds but overwrites and deletes nothing.
func TestSharesUploader(t *testing.T) {
	e := newEnv(t)
	einsteinShares(t, e, storage.ShareUploader)
	wantStatus(t, e.do("marie", "PUT", sharesDrive+"/Project/new.txt", "new"), http.StatusCreated)
	wantStatus(t, e.do("marie", "PUT", sharesDrive+"/Project/notes.txt", "changed"), http.StatusForbidden)
	wantStatus(t, e.do("marie", "DELETE", sharesDrive+"/Project/new.txt", ""), http.StatusForbidden)
}

// TestSharesRevoked: a deleted share, an expired one, and one whose
// creator may no longer share are gone at the next request.
func TestSharesRevoked(t *testing.T) {
	ctx := context.Background()
	t.Run("deleted", func(t *testing.T) {
		e := newEnv(t)
		s, folderID := einsteinShares(t, e, storage.ShareEditor)
		wantStatus(t, e.do("marie", "GET", sharesDrive+"/Project/notes.txt", ""), http.StatusOK)
		if err := e.store.DeleteShare(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{sharesDrive + "/Project/notes.txt", "/dav/spaces/" + shareid.Mount(s.ID), "/dav/spaces/" + folderID} {
			wantStatus(t, e.do("marie", "GET", p, ""), http.StatusNotFound)
		}
		rs := parseMultistatus(t, e.do("marie", "PROPFIND", sharesDrive, permsProp(), "Depth", "1"))
		if len(rs) != 1 {
			t.Errorf("the Shares drive lists %d entries after the revocation", len(rs)-1)
		}
	})
	t.Run("expired", func(t *testing.T) {
		e := newEnv(t)
		home := e.personalSpacePath("einstein")
		id := e.putFile("einstein", home+"/soon.txt", "x")
		_, rest, _ := strings.Cut(id, "$")
		spaceID, nodeID, _ := strings.Cut(rest, "!")
		expires := time.Now().Add(time.Second)
		if _, err := e.store.CreateShare(ctx, storage.Share{Kind: storage.ShareWithUser, SpaceID: spaceID, NodeID: nodeID,
			Creator: "einstein", Role: storage.ShareViewer, Grantee: "marie", Expires: expires}); err != nil {
			t.Fatal(err)
		}
		if rec := e.do("marie", "GET", sharesDrive+"/soon.txt", ""); rec.Code != http.StatusOK && time.Now().Before(expires) {
			t.Fatalf("before expiry: %d", rec.Code)
		}
		time.Sleep(time.Until(expires) + 10*time.Millisecond)
		wantStatus(t, e.do("marie", "GET", sharesDrive+"/soon.txt", ""), http.StatusNotFound)
		wantStatus(t, e.do("marie", "GET", "/dav/spaces/"+id, ""), http.StatusNotFound)
	})
	t.Run("creator lost the role", func(t *testing.T) {
		e := newEnv(t)
		physics := "/dav/spaces/" + testStorageID + "$" + e.physics.ID
		e.mkcol("marie", physics, "Paper")
		e.share("marie", e.fileID("marie", physics+"/Paper"), storage.ShareWithUser, "ada", storage.ShareEditor)
		wantStatus(t, e.do("ada", "PROPFIND", sharesDrive+"/Paper", "", "Depth", "0"), http.StatusMultiStatus)
		sp := e.physics
		sp.Members = map[string]storage.Role{"einstein": storage.RoleManager, "marie": storage.RoleViewer}
		if _, err := e.store.PutSpace(ctx, sp); err != nil {
			t.Fatal(err)
		}
		wantStatus(t, e.do("ada", "PROPFIND", sharesDrive+"/Paper", "", "Depth", "0"), http.StatusNotFound)
	})
}

// TestSharesOfUnservedSpace: a project space the configuration no longer
// serves hides its shares as it hides the space.
func TestSharesOfUnservedSpace(t *testing.T) {
	e := newEnv(t)
	physics := "/dav/spaces/" + testStorageID + "$" + e.physics.ID
	e.mkcol("marie", physics, "Paper")
	id := e.fileID("marie", physics+"/Paper")
	e.share("marie", id, storage.ShareWithUser, "ada", storage.ShareViewer)
	wantStatus(t, e.do("ada", "PROPFIND", sharesDrive+"/Paper", "", "Depth", "0"), http.StatusMultiStatus)
	unserved, err := New(Config{Store: e.store, User: basicAuthUser})
	if err != nil {
		t.Fatal(err)
	}
	e.h = unserved
	for _, p := range []string{sharesDrive + "/Paper", "/dav/spaces/" + id, "/dav/meta/" + id} {
		if rec := e.do("ada", "PROPFIND", p, fmt.Sprintf(metaPathBody, ""), "Depth", "0"); rec.Code != http.StatusNotFound {
			t.Errorf("PROPFIND %s: %d, want 404", p, rec.Code)
		}
	}
}

// TestSharesGroupsAndNames: a group share reaches the group's members;
// several shares of one item give one mount point with the strongest
// role; items of equal names get "name (2)".
func TestSharesGroupsAndNames(t *testing.T) {
	e := newEnv(t, withGroups)
	_, folderID := einsteinShares(t, e, storage.ShareViewer)
	e.share("einstein", folderID, storage.ShareWithGroup, "physicists", storage.ShareViewer)
	e.share("einstein", folderID, storage.ShareWithUser, "lise", storage.ShareEditor)
	marieHome := e.personalSpacePath("marie")
	e.mkcol("marie", marieHome, "Project")
	e.share("marie", e.fileID("marie", marieHome+"/Project"), storage.ShareWithGroup, "physicists", storage.ShareViewer)

	rs := parseMultistatus(t, e.do("lise", "PROPFIND", sharesDrive, permsProp(), "Depth", "1"))
	if len(rs) != 3 || rs[1].Href != sharesDrive+"/Project/" || rs[2].Href != sharesDrive+"/Project%20%282%29/" {
		t.Fatalf("lise's Shares drive: %+v", rs)
	}
	if rs[1].Props[nsOC+" permissions"] != "SMCK" || rs[2].Props[nsOC+" permissions"] != "SM" {
		t.Errorf("letters %q and %q", rs[1].Props[nsOC+" permissions"], rs[2].Props[nsOC+" permissions"])
	}
	wantStatus(t, e.do("lise", "PUT", sharesDrive+"/Project/from-lise.txt", "fission"), http.StatusCreated)
	wantStatus(t, e.do("lise", "PUT", sharesDrive+"/Project (2)/from-lise.txt", "fission"), http.StatusForbidden)
	// lise's own share with her group is no share with her.
	liseHome := e.personalSpacePath("lise")
	e.mkcol("lise", liseHome, "Mine")
	e.share("lise", e.fileID("lise", liseHome+"/Mine"), storage.ShareWithGroup, "physicists", storage.ShareEditor)
	wantStatus(t, e.do("lise", "PROPFIND", sharesDrive+"/Mine", "", "Depth", "0"), http.StatusNotFound)
	// Without the group, nothing is shared with otto.
	wantStatus(t, e.do("otto", "PROPFIND", sharesDrive+"/Project", "", "Depth", "0"), http.StatusNotFound)
}

// TestShareTypes: members see the kinds of live shares on an item, read
// once per PROPFIND; recipients do not.
func TestShareTypes(t *testing.T) {
	e := newEnv(t)
	_, folderID := einsteinShares(t, e, storage.ShareEditor)
	e.share("einstein", folderID, storage.ShareLink, "", storage.ShareViewer)
	home := e.personalSpacePath("einstein")
	rs := parseMultistatus(t, e.do("einstein", "PROPFIND", home, permsProp(), "Depth", "1"))
	for _, r := range rs {
		got, ok := r.Props[nsOC+" share-types"]
		switch {
		case strings.HasSuffix(r.Href, "/Project/"):
			if got != "<oc:share-type>0</oc:share-type><oc:share-type>3</oc:share-type>" {
				t.Errorf("share-types of the shared folder: %q", got)
			}
		case ok:
			t.Errorf("%s has share-types %q", r.Href, got)
		}
	}
	rs = parseMultistatus(t, e.do("marie", "PROPFIND", sharesDrive+"/Project", permsProp(), "Depth", "0"))
	if _, ok := rs[0].Props[nsOC+" share-types"]; ok {
		t.Error("a recipient sees the item's shares")
	}
}

// TestSharesTusUpload: a recipient uploads with TUS into a shared folder,
// as ownCloud Web does; a share revoked meanwhile stops the upload.
func TestSharesTusUpload(t *testing.T) {
	e := newEnv(t, withUploads)
	s, _ := einsteinShares(t, e, storage.ShareEditor)
	loc := e.tusStart("marie", sharesDrive+"/Project", "tus.txt", 6)
	wantStatus(t, e.tusPatch("marie", loc, 0, "polon"), http.StatusNoContent)
	wantStatus(t, e.tusPatch("marie", loc, 5, "y"), http.StatusNoContent)
	wantContent(t, e, e.personalSpacePath("einstein")+"/Project/tus.txt", "polony")

	loc = e.tusStart("marie", "/dav/spaces/"+shareid.Mount(s.ID), "later.txt", 4)
	if err := e.store.DeleteShare(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.tusPatch("marie", loc, 0, "gone"), http.StatusNotFound)
	wantNoFile(t, e, e.personalSpacePath("einstein")+"/Project/later.txt")
}

// TestShareTypesHiddenFromLinks: a visitor through a public link learns
// nothing of the shares of what the link shows.
func TestShareTypesHiddenFromLinks(t *testing.T) {
	e := newLinkEnv(t)
	l := e.link(storage.ShareViewer, "")
	sub, err := e.store.Child(context.Background(), "physics", e.shared.ID, "sub")
	if err != nil {
		t.Fatal(err)
	}
	e.share("einstein", testStorageID+"$physics!"+sub.ID, storage.ShareWithUser, "ada", storage.ShareViewer)
	rs := parseMultistatus(t, e.public("", "PROPFIND", linkPath(l, ""), permsProp(), "Depth", "1"))
	for _, r := range rs {
		if got, ok := r.Props[nsOC+" share-types"]; ok {
			t.Errorf("%s shows share-types %q through a link", r.Href, got)
		}
	}
	rs = parseMultistatus(t, e.do("einstein", "PROPFIND", "/dav/spaces/physics/shared/sub", permsProp(), "Depth", "0"))
	if got := rs[0].Props[nsOC+" share-types"]; got != "<oc:share-type>0</oc:share-type>" {
		t.Errorf("a member sees share-types %q", got)
	}
}
