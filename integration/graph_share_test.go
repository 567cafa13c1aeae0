package integration

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testidp"
)

// Sharing through Graph as ownCloud Web does it, through the real Caddy on
// Caddyfile.example with tokens of the test provider: links and
// invitations on an item, their permissions, what is shared with and by
// a user, and the people to invite.

const (
	viewerRoleID = "b1e2218d-eef8-4d4c-b82d-0f1a1b48f3b5"
	editorRoleID = "fb6c3e19-e378-47e5-b277-9732f9de6e21"
)

// graphPermission is what the test reads of a libre-graph permission.
type graphPermission struct {
	ID                 string     `json:"id"`
	Roles              []string   `json:"roles"`
	HasPassword        *bool      `json:"hasPassword"`
	ExpirationDateTime *time.Time `json:"expirationDateTime"`
	Link               *struct {
		Type   string `json:"type"`
		WebURL string `json:"webUrl"`
		Name   string `json:"@libre.graph.displayName"`
	} `json:"link"`
	GrantedToV2 struct {
		User  *struct{ ID string } `json:"user"`
		Group *struct{ ID string } `json:"group"`
	} `json:"grantedToV2"`
}

// sharedDriveItem is what the test reads of sharedWithMe's and
// sharedByMe's items.
type sharedDriveItem struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Synchronize bool              `json:"@client.synchronize"`
	Permissions []graphPermission `json:"permissions"`
	RemoteItem  *struct {
		ID          string            `json:"id"`
		Permissions []graphPermission `json:"permissions"`
	} `json:"remoteItem"`
}

// sharingFolder makes a folder in c's personal space over WebDAV and
// returns the Graph drive and item ids and the items URL prefix.
func sharingFolder(t *testing.T, c *client, name string) (drive, item, items string) {
	t.Helper()
	personal := listDrives(t, c, "personal")[0]
	folder := "/dav/spaces/" + url.PathEscape(personal.ID) + "/" + name
	c.expect(http.StatusCreated, "MKCOL", folder, "")
	item = c.prop(folder, ocNS, "fileid")
	items = "/graph/v1beta1/drives/" + url.PathEscape(personal.ID) + "/items/" + url.PathEscape(item)
	return personal.ID, item, items
}

func sharedWithMe(t *testing.T, c *client) []sharedDriveItem {
	t.Helper()
	var body struct{ Value []sharedDriveItem }
	webCall(t, c, http.StatusOK, http.MethodGet, "/graph/v1beta1/me/drive/sharedWithMe", "", &body)
	return body.Value
}

func sharedByMe(t *testing.T, c *client) []sharedDriveItem {
	t.Helper()
	var body struct{ Value []sharedDriveItem }
	webCall(t, c, http.StatusOK, http.MethodGet, "/graph/v1beta1/me/drive/sharedByMe", "", &body)
	return body.Value
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGraphShareLinks(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	bob := &client{t: t, base: s.URL, token: idp.Token(t, "bob"), http: http.DefaultClient}
	_, _, items := sharingFolder(t, alice, "press")

	var link graphPermission
	webCall(t, alice, http.StatusOK, http.MethodPost, items+"/createLink",
		`{"type":"view","password":"Pa55word!","displayName":"press kit"}`, &link)
	if link.Link == nil || link.Link.Type != "view" || link.Link.Name != "press kit" || link.HasPassword == nil || !*link.HasPassword ||
		!strings.HasPrefix(link.Link.WebURL, s.URL+"/s/") || len(link.Link.WebURL) < len(s.URL+"/s/")+40 {
		t.Fatalf("link %+v", link)
	}

	// The link's address opens its item over WebDAV, with the password.
	token := strings.TrimPrefix(link.Link.WebURL, s.URL+"/s/")
	public := "/dav/public-files/" + token + "/"
	anonymous := &client{t: t, base: s.URL, http: http.DefaultClient}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("public:Pa55word!"))
	anonymous.expect(http.StatusMultiStatus, "PROPFIND", public, "", "Depth", "1", "Authorization", basic)
	anonymous.expect(http.StatusUnauthorized, "PROPFIND", public, "", "Depth", "1")

	var list struct {
		Actions []string          `json:"@libre.graph.permissions.actions.allowedValues"`
		Roles   []json.RawMessage `json:"@libre.graph.permissions.roles.allowedValues"`
		Value   []graphPermission `json:"value"`
	}
	webCall(t, alice, http.StatusOK, http.MethodGet, items+"/permissions", "", &list)
	if len(list.Value) != 1 || list.Value[0].ID != link.ID || len(list.Roles) == 0 ||
		!strings.Contains(strings.Join(list.Actions, " "), "libre.graph/driveItem/permissions/create") {
		t.Fatalf("permissions %+v", list)
	}

	expiry := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second)
	webCall(t, alice, http.StatusOK, http.MethodPatch, items+"/permissions/"+link.ID,
		mustJSON(t, map[string]any{"expirationDateTime": expiry, "link": map[string]string{"type": "edit"}}), &link)
	if link.Link.Type != "edit" || link.ExpirationDateTime == nil || !link.ExpirationDateTime.Equal(expiry) {
		t.Fatalf("patched %+v", link)
	}
	link = graphPermission{}
	webCall(t, alice, http.StatusOK, http.MethodPost, items+"/permissions/"+list.Value[0].ID+"/setPassword", `{"password":""}`, &link)
	if link.HasPassword == nil || *link.HasPassword {
		t.Fatalf("password removed: %+v", link)
	}
	if by := sharedByMe(t, alice); len(by) != 1 || by[0].Name != "press" || len(by[0].Permissions) != 1 || by[0].Permissions[0].Link == nil {
		t.Fatalf("alice's sharedByMe %+v", by)
	}

	// bob sees nothing of it: the item is not his to list or share.
	bob.expect(http.StatusNotFound, http.MethodGet, items+"/permissions", "", webXHR...)
	bob.expect(http.StatusNotFound, http.MethodPost, items+"/createLink", `{"type":"view"}`, webXHR...)
	bob.expect(http.StatusNotFound, http.MethodDelete, items+"/permissions/"+link.ID, "", webXHR...)

	// Without its password and as an edit link now, it takes an upload.
	anonymous.expect(http.StatusCreated, http.MethodPut, public+"note.txt", "hello")
	alice.expect(http.StatusNoContent, http.MethodDelete, items+"/permissions/"+link.ID, "", webXHR...)
	anonymous.expect(http.StatusNotFound, "PROPFIND", public, "", "Depth", "1")
	alice.expect(http.StatusNotFound, http.MethodGet, items+"/permissions/"+link.ID, "", webXHR...)
	if by := sharedByMe(t, alice); len(by) != 0 {
		t.Fatalf("sharedByMe after deleting the link: %+v", by)
	}
}

func TestGraphShareInvitations(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	// The configuration names carol (in Board) and the group developers
	// (in Lab; bob is a developer): people alice can invite before they
	// ever signed in.
	s := startServer(t, serverOptions{issuer: idp.Issuer, davspaces: []string{
		"space Lab {",
		"	id lab",
		"	manager alice",
		"	viewer group:developers",
		"}",
		"space Board {",
		"	id board",
		"	manager alice",
		"	editor carol",
		"}",
	}})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	bob := &client{t: t, base: s.URL, token: idp.Token(t, "bob"), http: http.DefaultClient}
	carol := &client{t: t, base: s.URL, token: idp.Token(t, "carol"), http: http.DefaultClient}
	_, item, items := sharingFolder(t, alice, "plans")

	// The people alice may invite.
	var users struct {
		Value []struct {
			ID, DisplayName string
			UserType        string `json:"userType"`
		}
	}
	webCall(t, alice, http.StatusOK, http.MethodGet, "/graph/v1.0/users?%24orderby=displayName&%24search=%22car%22", "", &users)
	if len(users.Value) != 1 || users.Value[0].ID != "carol" || users.Value[0].UserType != "Member" {
		t.Fatalf("users %+v", users)
	}
	var groups struct {
		Value []struct{ ID, DisplayName string }
	}
	webCall(t, alice, http.StatusOK, http.MethodGet, "/graph/v1.0/groups?%24orderby=displayName&%24search=%22develop%22", "", &groups)
	if len(groups.Value) != 1 || groups.Value[0].ID != "developers" {
		t.Fatalf("groups %+v", groups)
	}

	// carol, as editor.
	var made struct{ Value []graphPermission }
	webCall(t, alice, http.StatusOK, http.MethodPost, items+"/invite", mustJSON(t, map[string]any{
		"roles":      []string{editorRoleID},
		"recipients": []map[string]string{{"objectId": "carol", "@libre.graph.recipient.type": "user"}},
	}), &made)
	if len(made.Value) != 1 || made.Value[0].GrantedToV2.User == nil || made.Value[0].GrantedToV2.User.ID != "carol" || made.Value[0].Roles[0] != editorRoleID {
		t.Fatalf("invitation %+v", made)
	}
	share := made.Value[0]
	with := sharedWithMe(t, carol)
	if len(with) != 1 || with[0].Name != "plans" || !with[0].Synchronize || with[0].RemoteItem == nil || with[0].RemoteItem.ID != item ||
		!strings.HasSuffix(with[0].ID, "!"+share.ID) {
		t.Fatalf("carol's sharedWithMe %+v", with)
	}
	mounts := listDrives(t, carol, "mountpoint")
	if len(mounts) != 1 || mounts[0].ID != with[0].ID || mounts[0].Name != "plans" {
		t.Fatalf("carol's mount points %+v", mounts)
	}
	if virtual := listDrives(t, carol, "virtual"); len(virtual) != 1 || virtual[0].Name != "Shares" {
		t.Fatalf("carol's Shares drive %+v", virtual)
	}
	// The ids Graph gives reach the item over WebDAV: carol writes through
	// the mount point and the Shares drive, alice reads what she wrote.
	carol.expect(http.StatusCreated, http.MethodPut, "/dav/spaces/"+url.PathEscape(mounts[0].ID)+"/agenda.txt", "from carol")
	carol.expect(http.StatusOK, http.MethodGet, "/dav/spaces/"+url.PathEscape(listDrives(t, carol, "virtual")[0].ID)+"/plans/agenda.txt", "")
	alicePlans := "/dav/spaces/" + url.PathEscape(listDrives(t, alice, "personal")[0].ID) + "/plans/agenda.txt"
	if _, body := alice.expect(http.StatusOK, http.MethodGet, alicePlans, ""); body != "from carol" {
		t.Fatalf("alice reads %q", body)
	}
	// A recipient does not pass the item on.
	carol.expect(http.StatusForbidden, http.MethodPost, items+"/createLink", `{"type":"view"}`, webXHR...)

	// The group developers, as viewers: bob's token carries it.
	webCall(t, alice, http.StatusOK, http.MethodPost, items+"/invite", mustJSON(t, map[string]any{
		"roles":      []string{viewerRoleID},
		"recipients": []map[string]string{{"objectId": "developers", "@libre.graph.recipient.type": "group"}},
	}), nil)
	if with := sharedWithMe(t, bob); len(with) != 1 || with[0].RemoteItem == nil || with[0].RemoteItem.ID != item ||
		with[0].RemoteItem.Permissions[0].GrantedToV2.Group == nil {
		t.Fatalf("bob's sharedWithMe %+v", with)
	}
	by := sharedByMe(t, alice)
	if len(by) != 1 || len(by[0].Permissions) != 2 {
		t.Fatalf("alice's sharedByMe %+v", by)
	}

	// carol becomes a viewer, then loses the share.
	var changed graphPermission
	webCall(t, alice, http.StatusOK, http.MethodPatch, items+"/permissions/"+share.ID, mustJSON(t, map[string]any{"roles": []string{viewerRoleID}}), &changed)
	if changed.Roles[0] != viewerRoleID {
		t.Fatalf("changed %+v", changed)
	}
	alice.expect(http.StatusNoContent, http.MethodDelete, items+"/permissions/"+share.ID, "", webXHR...)
	if with := sharedWithMe(t, carol); len(with) != 0 {
		t.Fatalf("carol's sharedWithMe after revoking %+v", with)
	}
	if mounts := listDrives(t, carol, "mountpoint"); len(mounts) != 0 {
		t.Fatalf("carol's mount points after revoking %+v", mounts)
	}
	carol.expect(http.StatusNotFound, http.MethodGet, items+"/permissions", "", webXHR...)
	carol.expect(http.StatusNotFound, http.MethodGet, "/dav/spaces/"+url.PathEscape(mounts[0].ID)+"/agenda.txt", "")
}
