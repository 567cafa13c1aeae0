package integration

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// ownCloud Web (v12) on the journeys of a person after sign-in, call by
// call as TestOwnCloudWebStartup replays the start-up: upload, delete and
// restore (each followed by the drive's refresh), the versions panel,
// favourites, sharing with a user and the recipient's "Shared with me",
// and a public link's visitor. Each step names the file of owncloud/web
// whose request it sends.

// journeyDrive is what Web reads of a drive after a change
// (web-client/src/graph/drives/drives.ts getDrive, then
// web-pkg/src/composables/piniaStores/spaces.ts updateSpaceField).
type journeyDrive struct {
	ID    string `json:"id"`
	Quota struct {
		Used int64 `json:"used"`
	} `json:"quota"`
	Root struct {
		ETag string `json:"eTag"`
	} `json:"root"`
}

func TestOwnCloudWebJourneyCalls(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	carol := &client{t: t, base: s.URL, token: idp.Token(t, "carol"), http: http.DefaultClient}
	bob := &client{t: t, base: s.URL, token: idp.Token(t, "bob"), http: http.DefaultClient}
	anonymous := &client{t: t, base: s.URL, http: http.DefaultClient}
	// Everyone signs in once: the directory then knows whom to share with.
	for _, c := range []*client{alice, bob, carol} {
		webCall(t, c, http.StatusOK, http.MethodGet, "/graph/v1.0/me", "", nil)
	}

	personal := listDrives(t, alice, "personal")
	if len(personal) != 1 {
		t.Fatalf("personal drives %+v", personal)
	}
	driveID := personal[0].ID
	space := "/dav/spaces/" + url.PathEscape(driveID)
	refresh := func(step string) journeyDrive {
		t.Helper()
		var d journeyDrive
		webCall(t, alice, http.StatusOK, http.MethodGet, "/graph/v1beta1/drives/"+url.PathEscape(driveID), "", &d)
		if d.ID != driveID || d.Root.ETag == "" {
			t.Fatalf("after %s: drive %+v", step, d)
		}
		return d
	}
	before := refresh("sign-in")

	// The capabilities Web reads to choose how to upload and what to offer
	// (web-pkg/src/composables/piniaStores/capabilities.ts), and that a
	// link's visitor reads before anything else: without a token.
	var caps struct {
		OCS struct {
			Data struct {
				Capabilities struct {
					Files struct {
						Favorites bool `json:"favorites"`
						TUS       struct {
							MaxChunkSize int64 `json:"max_chunk_size"`
						} `json:"tus_support"`
					} `json:"files"`
				} `json:"capabilities"`
			} `json:"data"`
		} `json:"ocs"`
	}
	webCall(t, anonymous, http.StatusOK, http.MethodGet, "/ocs/v2.php/cloud/capabilities?format=json", "", &caps)
	if f := caps.OCS.Data.Capabilities.Files; !f.Favorites || f.TUS.MaxChunkSize != 10_000_000 {
		t.Errorf("anonymous capabilities: files %+v, want favorites and a 10 MB TUS chunk", f)
	}

	// The permissions that give the Share action, links and favourites
	// (web-runtime/src/services/auth/userManager.ts fetchPermissions).
	var permissions struct{ Permissions []string }
	webCall(t, alice, http.StatusOK, http.MethodPost, "/api/v0/settings/permissions-list", `{"account_uuid":"alice"}`, &permissions)
	for _, p := range []string{"Shares.Write.all", "PublicLink.Write.all", "Favorites.List.own", "Favorites.Write.own"} {
		if !slices.Contains(permissions.Permissions, p) {
			t.Errorf("permissions %q lack %s", permissions.Permissions, p)
		}
	}

	// Upload: Uppy's TUS plugin (web-pkg/src/services/uppy/uppyService.ts),
	// creation with the first chunk, then the drive.
	content := "first version"
	resp, _, err := alice.tusCreate(space+"/", "notes.txt", int64(len(content)), []byte(content))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("TUS upload: %v %v", resp, err)
	}
	afterUpload := refresh("the upload")
	if afterUpload.Root.ETag == before.Root.ETag || afterUpload.Quota.Used != before.Quota.Used+int64(len(content)) {
		t.Errorf("after the upload: drive %+v, before %+v", afterUpload, before)
	}

	// Versions: a second upload replaces the content; the versions panel
	// lists them with an empty d:prop (web-client/src/webdav/
	// listFileVersions.ts) and reads each one's etag and time.
	alice.expect(http.StatusNoContent, http.MethodPut, space+"/notes.txt", "second version")
	fileID := alice.prop(space+"/notes.txt", ocNS, "fileid")
	_, body := alice.expect(http.StatusMultiStatus, "PROPFIND", "/dav/meta/"+url.PathEscape(fileID)+"/v",
		`<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop/></d:propfind>`, "Depth", "1")
	for _, r := range regexp.MustCompile(`(?s)<d:response>.*?</d:response>`).FindAllString(body, -1) {
		if !strings.Contains(r, "<d:propstat>") {
			t.Errorf("a versions response without a propstat: %s", r)
		}
	}
	versions, err := parseMultistatus([]byte(body))
	if err != nil || len(versions) != 2 || versions[1].props["DAV: getetag"] == "" || versions[1].props["DAV: getlastmodified"] == "" {
		t.Fatalf("versions (%v): %s", err, body)
	}
	// Restore it as Web does (web-client/src/webdav/restoreFileVersion.ts):
	// COPY at the meta path of the file's parent folder (parentFolderId),
	// the file named by Destination's last segment only, under /dav/files.
	rootID := alice.prop(space+"/", ocNS, "fileid")
	restore := "/dav/meta/" + url.PathEscape(rootID) + "/v/" + path.Base(versions[1].href)
	alice.expect(http.StatusNotFound, "COPY", restore, "", "Destination", s.URL+"/dav/files/spaces/"+driveID+"/absent.txt", "Overwrite", "F")
	alice.expect(http.StatusNoContent, "COPY", restore, "", "Destination", s.URL+"/dav/files/spaces/"+driveID+"/notes.txt", "Overwrite", "F")
	if _, got := alice.expect(http.StatusOK, http.MethodGet, space+"/notes.txt", ""); got != content {
		t.Errorf("after restoring the version: %q", got)
	}

	// Favourites: the action (web-client/src/webdav/setFavorite.ts) and
	// the view (listFavoriteFiles.ts: REPORT filter-files).
	alice.expect(http.StatusMultiStatus, "PROPPATCH", space+"/notes.txt",
		`<d:propertyupdate xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:set><d:prop><oc:favorite>1</oc:favorite></d:prop></d:set></d:propertyupdate>`)
	if got, _ := alice.report("/dav/files/alice", filterFavorites); len(got) != 1 || !strings.HasSuffix(got[0], "/notes.txt") {
		t.Errorf("favourites %q", got)
	}

	// Delete, then the drive.
	alice.expect(http.StatusNoContent, http.MethodDelete, space+"/notes.txt", "")
	afterDelete := refresh("the delete")
	if afterDelete.Root.ETag == afterUpload.Root.ETag {
		t.Errorf("the drive's etag did not change with the delete")
	}

	// Restore from the trash (web-client/src/webdav/listFiles.ts on the
	// trash-bin, restoreFile.ts: MOVE), then the drive.
	trash := "/dav/spaces/trash-bin/" + url.PathEscape(driveID)
	items := alice.propfind(trash, "1", `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:trashbin-original-filename/><oc:trashbin-original-location/></d:prop></d:propfind>`)
	if len(items) != 2 || items[1].props[ocNS+" trashbin-original-filename"] != "notes.txt" {
		t.Fatalf("trash %+v", items)
	}
	alice.expect(http.StatusCreated, "MOVE", trash+"/"+path.Base(items[1].href), "",
		"Destination", s.URL+space+"/notes.txt", "Overwrite", "F")
	if afterRestore := refresh("the restore"); afterRestore.Root.ETag == afterDelete.Root.ETag {
		t.Errorf("the drive's etag did not change with the restore")
	}

	// Share a folder with a user (web-client/src/graph/driveItems invite),
	// and the recipient opens it from "Shared with me"
	// (web-app-files/src/views/shares/SharedResource.vue: getDriveItem of
	// the Shares drive and the mount point).
	alice.expect(http.StatusCreated, "MKCOL", space+"/Reports", "")
	folderID := alice.prop(space+"/Reports", ocNS, "fileid")
	var invited struct {
		Value []struct {
			ID string `json:"id"`
		} `json:"value"`
	}
	webCall(t, alice, http.StatusOK, http.MethodPost, "/graph/v1beta1/drives/"+url.PathEscape(driveID)+"/items/"+url.PathEscape(folderID)+"/invite",
		`{"recipients":[{"objectId":"carol","@libre.graph.recipient.type":"user"}],"roles":["b1e2218d-eef8-4d4c-b82d-0f1a1b48f3b5"]}`, &invited)
	if len(invited.Value) != 1 {
		t.Fatalf("invite: %+v", invited)
	}
	var shared struct {
		Value []struct {
			ID              string `json:"id"`
			ParentReference struct {
				DriveID string `json:"driveId"`
			} `json:"parentReference"`
		} `json:"value"`
	}
	webCall(t, carol, http.StatusOK, http.MethodGet, "/graph/v1beta1/me/drive/sharedWithMe", "", &shared)
	if len(shared.Value) != 1 {
		t.Fatalf("sharedWithMe %+v", shared)
	}
	mount := shared.Value[0]
	mountItem := "/graph/v1beta1/drives/" + url.PathEscape(mount.ParentReference.DriveID) + "/items/" + url.PathEscape(mount.ID)
	var item struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		RemoteItem struct {
			ID string `json:"id"`
		} `json:"remoteItem"`
	}
	webCall(t, carol, http.StatusOK, http.MethodGet, mountItem, "", &item)
	if item.ID != mount.ID || item.Name != "Reports" || item.RemoteItem.ID != folderID {
		t.Errorf("the mount point's item %+v, want Reports (%s)", item, folderID)
	}
	// Someone it was not shared with finds nothing there, nor in alice's drive.
	webCall(t, bob, http.StatusNotFound, http.MethodGet, mountItem, "", nil)
	webCall(t, bob, http.StatusNotFound, http.MethodGet, "/graph/v1beta1/drives/"+url.PathEscape(driveID), "", nil)

	// A public link, and its visitor's first calls: the capabilities
	// (above, without a token) and the link's root.
	var link struct {
		Link struct {
			WebURL string `json:"webUrl"`
		} `json:"link"`
	}
	webCall(t, alice, http.StatusOK, http.MethodPost, "/graph/v1beta1/drives/"+url.PathEscape(driveID)+"/items/"+url.PathEscape(folderID)+"/createLink",
		`{"type":"view","password":"Link-pass-123!"}`, &link)
	token := path.Base(link.Link.WebURL)
	if token == "" || token == "." {
		t.Fatalf("createLink: %+v", link)
	}
	anonymous.expect(http.StatusMultiStatus, "PROPFIND", "/dav/public-files/"+token+"/", "", "Depth", "0",
		"Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("public:Link-pass-123!")))
}
