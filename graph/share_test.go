package graph

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/shareid"
	"github.com/davspaces/davspaces/storage"
)

// doJSON sends body (nil for none) as user and decodes a JSON answer into
// out when out is not nil.
func (e *env) doJSON(user, method, target string, body any, out any) *httptest.ResponseRecorder {
	e.t.Helper()
	var req *http.Request
	switch b := body.(type) {
	case nil:
		req = httptest.NewRequest(method, target, nil)
	case string:
		req = httptest.NewRequest(method, target, strings.NewReader(b))
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		req = httptest.NewRequest(method, target, strings.NewReader(string(data)))
	}
	if user != "" {
		name, groups, _ := strings.Cut(user, ":")
		req.SetBasicAuth(name, groups)
	}
	rec := httptest.NewRecorder()
	h, ok := e.h.Route(req)
	if !ok {
		e.t.Fatalf("Route did not claim %s", target)
	}
	h.ServeHTTP(rec, req)
	if out != nil && rec.Code < 300 {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			e.t.Fatalf("decoding %s: %v", rec.Body, err)
		}
	}
	return rec
}

// folder makes a folder at the root of a space and returns its Graph
// drive and item ids.
func (e *env) folder(spaceID, name string) (driveID, itemID string) {
	e.t.Helper()
	n, err := e.store.Mkdir(context.Background(), spaceID, spaceID, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return testStorageID + "$" + spaceID, testStorageID + "$" + spaceID + "!" + n.ID
}

// file puts a file at the root of a space and returns its ids.
func (e *env) file(spaceID, name string) (driveID, itemID string) {
	e.t.Helper()
	e.put(spaceID, name, 3)
	n, err := e.store.Child(context.Background(), spaceID, spaceID, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return testStorageID + "$" + spaceID, testStorageID + "$" + spaceID + "!" + n.ID
}

func itemURL(driveID, itemID, rest string) string {
	return "https://cloud.example.org/graph/v1beta1/drives/" + url.PathEscape(driveID) + "/items/" + url.PathEscape(itemID) + "/" + rest
}

// linkPermission is what the tests read of a permission.
type linkPermission struct {
	ID                 string     `json:"id"`
	HasPassword        *bool      `json:"hasPassword"`
	ExpirationDateTime *time.Time `json:"expirationDateTime"`
	Roles              []string   `json:"roles"`
	Link               *struct {
		Type        string `json:"type"`
		WebURL      string `json:"webUrl"`
		DisplayName string `json:"@libre.graph.displayName"`
	} `json:"link"`
	GrantedToV2 *struct {
		User  *identitySet `json:"user"`
		Group *identitySet `json:"group"`
	} `json:"grantedToV2"`
	Invitation *struct {
		InvitedBy struct {
			User identitySet `json:"user"`
		} `json:"invitedBy"`
	} `json:"invitation"`
}

type permissionsList struct {
	Actions []string         `json:"@libre.graph.permissions.actions.allowedValues"`
	Roles   []roleSummary    `json:"@libre.graph.permissions.roles.allowedValues"`
	Value   []linkPermission `json:"value"`
}

func TestLinkLifecycle(t *testing.T) {
	e := newEnv(t)
	drive, item := e.folder("physics", "papers")
	var p linkPermission
	rec := e.doJSON("marie", http.MethodPost, itemURL(drive, item, "createLink"),
		map[string]any{"type": "view", "password": "correct horse", "displayName": "for the press"}, &p)
	wantStatus(t, rec, http.StatusOK)
	if p.ID == "" || p.HasPassword == nil || !*p.HasPassword || p.Link == nil || p.Link.Type != "view" ||
		p.Link.DisplayName != "for the press" || !strings.HasPrefix(p.Link.WebURL, "https://cloud.example.org/s/") {
		t.Fatalf("created link %s", rec.Body)
	}
	s, err := e.store.Share(context.Background(), p.ID)
	if err != nil || s.Kind != storage.ShareLink || s.Role != storage.ShareViewer || s.Creator != "marie" ||
		p.Link.WebURL != "https://cloud.example.org/s/"+s.Token || !storage.CheckLinkPassword(s, "correct horse") {
		t.Fatalf("stored %+v, %v", s, err)
	}

	var list permissionsList
	wantStatus(t, e.doJSON("einstein", http.MethodGet, itemURL(drive, item, "permissions"), nil, &list), http.StatusOK)
	if len(list.Value) != 1 || list.Value[0].ID != p.ID || !contains(strings.Join(list.Actions, " "), actionPermissionsCreate) {
		t.Fatalf("list %+v", list)
	}
	var roleIDs []string
	for _, r := range list.Roles {
		roleIDs = append(roleIDs, r.ID)
	}
	if strings.Join(roleIDs, ",") != strings.Join([]string{RoleViewerID, RoleEditorID, RoleUploaderID}, ",") {
		t.Errorf("roles allowed on a folder %q", roleIDs)
	}

	expiry := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	rec = e.doJSON("einstein", http.MethodPatch, itemURL(drive, item, "permissions/"+p.ID),
		map[string]any{"link": map[string]any{"type": "edit", "@libre.graph.displayName": "team"}, "expirationDateTime": expiry}, &p)
	wantStatus(t, rec, http.StatusOK)
	if p.Link.Type != "edit" || p.Link.DisplayName != "team" || p.ExpirationDateTime == nil || !p.ExpirationDateTime.Equal(expiry) {
		t.Fatalf("patched %s", rec.Body)
	}
	id := p.ID
	p = linkPermission{}
	rec = e.doJSON("einstein", http.MethodPatch, itemURL(drive, item, "permissions/"+id), `{"expirationDateTime":null}`, &p)
	wantStatus(t, rec, http.StatusOK)
	if p.ExpirationDateTime != nil || p.Link.Type != "edit" {
		t.Fatalf("expiry removed: %s", rec.Body)
	}

	rec = e.doJSON("marie", http.MethodPost, itemURL(drive, item, "permissions/"+p.ID+"/setPassword"), map[string]any{"password": ""}, &p)
	wantStatus(t, rec, http.StatusOK)
	if *p.HasPassword {
		t.Fatalf("password removed: %s", rec.Body)
	}
	wantStatus(t, e.doJSON("marie", http.MethodGet, itemURL(drive, item, "permissions/"+p.ID), nil, &p), http.StatusOK)

	wantStatus(t, e.doJSON("marie", http.MethodDelete, itemURL(drive, item, "permissions/"+p.ID), nil, nil), http.StatusNoContent)
	wantStatus(t, e.doJSON("marie", http.MethodGet, itemURL(drive, item, "permissions/"+p.ID), nil, nil), http.StatusNotFound)
	list = permissionsList{}
	e.doJSON("marie", http.MethodGet, itemURL(drive, item, "permissions"), nil, &list)
	if list.Value == nil || len(list.Value) != 0 {
		t.Fatalf("after delete: %+v", list)
	}
}

func TestInvitationLifecycle(t *testing.T) {
	e := newEnv(t)
	personal := e.personalID("einstein")
	drive, item := e.folder(personal, "drafts")
	invite := map[string]any{
		"recipients": []map[string]string{{"objectId": "marie", "@libre.graph.recipient.type": "user"}},
		"roles":      []string{RoleEditorID},
	}
	var made struct{ Value []linkPermission }
	rec := e.doJSON("einstein", http.MethodPost, itemURL(drive, item, "invite"), invite, &made)
	wantStatus(t, rec, http.StatusOK)
	if len(made.Value) != 1 {
		t.Fatalf("invite answered %s", rec.Body)
	}
	p := made.Value[0]
	if p.GrantedToV2 == nil || p.GrantedToV2.User == nil || p.GrantedToV2.User.ID != "marie" ||
		len(p.Roles) != 1 || p.Roles[0] != RoleEditorID || p.Invitation == nil || p.Invitation.InvitedBy.User.ID != "einstein" || p.Link != nil {
		t.Fatalf("invitation %s", rec.Body)
	}
	wantStatus(t, e.doJSON("einstein", http.MethodPost, itemURL(drive, item, "invite"), invite, nil), http.StatusConflict)

	// marie finds it shared with her, as a mount point too.
	var with struct {
		Value []struct {
			ID          string `json:"id"`
			Name        string `json:"name"`
			Synchronize bool   `json:"@client.synchronize"`
			Folder      *struct{}
			RemoteItem  struct {
				ID          string           `json:"id"`
				Permissions []linkPermission `json:"permissions"`
			} `json:"remoteItem"`
		}
	}
	rec = e.doJSON("marie", http.MethodGet, "/graph/v1beta1/me/drive/sharedWithMe", nil, &with)
	wantStatus(t, rec, http.StatusOK)
	if len(with.Value) != 1 || with.Value[0].ID != shareid.Mount(p.ID) || with.Value[0].Name != "drafts" || !with.Value[0].Synchronize ||
		with.Value[0].Folder == nil || with.Value[0].RemoteItem.ID != item || len(with.Value[0].RemoteItem.Permissions) != 1 {
		t.Fatalf("sharedWithMe %s", rec.Body)
	}
	var mounts drivesBody
	e.doJSON("marie", http.MethodGet, "/graph/v1beta1/me/drives?%24filter=driveType+eq+mountpoint", nil, &mounts)
	if len(mounts.Value) != 1 || mounts.Value[0].ID != shareid.Mount(p.ID) || mounts.Value[0].DriveType != "mountpoint" ||
		mounts.Value[0].Root.RemoteItem == nil || mounts.Value[0].Root.RemoteItem.ID != item {
		t.Fatalf("mount points %+v", mounts)
	}
	var by struct {
		Value []struct {
			ID          string           `json:"id"`
			Permissions []linkPermission `json:"permissions"`
		}
	}
	e.doJSON("einstein", http.MethodGet, "/graph/v1beta1/me/drive/sharedByMe", nil, &by)
	if len(by.Value) != 1 || by.Value[0].ID != item || len(by.Value[0].Permissions) != 1 {
		t.Fatalf("sharedByMe %+v", by)
	}

	// The recipient sees the item but may not share it: an empty list, as
	// for a viewer, also through the drive id ownCloud Web takes from the
	// mount point (its root.remoteItem.rootId); others do not see it.
	rootID := mounts.Value[0].Root.RemoteItem.RootID
	if rootID != drive+"!"+e.personalID("einstein") {
		t.Fatalf("rootId %q", rootID)
	}
	for _, d := range []string{drive, rootID} {
		var list permissionsList
		wantStatus(t, e.doJSON("marie", http.MethodGet, itemURL(d, item, "permissions"), nil, &list), http.StatusOK)
		if len(list.Value) != 0 || len(list.Actions) != 0 || len(list.Roles) != 0 {
			t.Fatalf("the recipient's list %+v", list)
		}
	}
	wantStatus(t, e.doJSON("marie", http.MethodPost, itemURL(drive, item, "createLink"), map[string]any{"type": "view"}, nil), http.StatusForbidden)
	wantStatus(t, e.doJSON("richard", http.MethodGet, itemURL(drive, item, "permissions"), nil, nil), http.StatusNotFound)

	rec = e.doJSON("einstein", http.MethodPatch, itemURL(drive, item, "permissions/"+p.ID), map[string]any{"roles": []string{RoleViewerID}}, &p)
	wantStatus(t, rec, http.StatusOK)
	if p.Roles[0] != RoleViewerID {
		t.Fatalf("role changed: %s", rec.Body)
	}
	wantStatus(t, e.doJSON("einstein", http.MethodDelete, itemURL(drive, item, "permissions/"+p.ID), nil, nil), http.StatusNoContent)
	with.Value = nil
	e.doJSON("marie", http.MethodGet, "/graph/v1beta1/me/drive/sharedWithMe", nil, &with)
	if len(with.Value) != 0 {
		t.Fatalf("after revoking: %+v", with)
	}
	wantStatus(t, e.doJSON("marie", http.MethodGet, itemURL(drive, item, "permissions"), nil, nil), http.StatusNotFound)
}

// TestViewerListsNothing: a viewer opening Web's sidebar gets an empty
// list, never a link's address (an edit link would give them more).
func TestViewerListsNothing(t *testing.T) {
	e := newEnv(t)
	drive, folder := e.folder("physics", "papers")
	wantStatus(t, e.doJSON("marie", http.MethodPost, itemURL(drive, folder, "createLink"), map[string]any{"type": "edit"}, nil), http.StatusOK)
	var list permissionsList
	rec := e.doJSON("richard:chemists", http.MethodGet, itemURL(drive, folder, "permissions"), nil, &list)
	wantStatus(t, rec, http.StatusOK)
	if len(list.Value) != 0 || len(list.Actions) != 0 || contains(rec.Body.String(), "/s/") {
		t.Fatalf("a viewer's list %s", rec.Body)
	}
}

func TestGroupInvitation(t *testing.T) {
	e := newEnv(t)
	drive, item := e.file("physics", "data.csv")
	invite := map[string]any{
		"recipients": []map[string]string{{"objectId": "chemists", "@libre.graph.recipient.type": "group"}},
		"roles":      []string{RoleFileEditorID},
	}
	var made struct{ Value []linkPermission }
	wantStatus(t, e.doJSON("einstein", http.MethodPost, itemURL(drive, item, "invite"), invite, &made), http.StatusOK)
	if made.Value[0].GrantedToV2.Group == nil || made.Value[0].GrantedToV2.Group.ID != "chemists" || made.Value[0].Roles[0] != RoleFileEditorID {
		t.Fatalf("group share %+v", made)
	}
	var with struct{ Value []driveItem }
	e.doJSON("richard:chemists", http.MethodGet, "/graph/v1beta1/me/drive/sharedWithMe", nil, &with)
	if len(with.Value) != 1 || with.Value[0].File == nil || with.Value[0].Name != "data.csv" {
		t.Fatalf("a member of the group: %+v", with)
	}
	with.Value = nil
	e.doJSON("richard", http.MethodGet, "/graph/v1beta1/me/drive/sharedWithMe", nil, &with)
	if len(with.Value) != 0 {
		t.Fatalf("not a member: %+v", with)
	}
}

// TestShareRefusals: every refusal changes nothing and tells nobody of
// items they cannot see.
func TestShareRefusals(t *testing.T) {
	e := newEnv(t)
	drive, folder := e.folder("physics", "papers")
	_, file := e.file("physics", "notes.txt")
	labDrive, labFolder := e.folder("lab", "secret")
	_, archived := e.folder("archive", "old")
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	user := func(id string) []map[string]string {
		return []map[string]string{{"objectId": id, "@libre.graph.recipient.type": "user"}}
	}
	tests := []struct {
		name, user, method, target string
		body                       any
		status                     int
	}{
		{"viewer creates a link", "richard:chemists", http.MethodPost, itemURL(drive, folder, "createLink"), map[string]any{"type": "view"}, http.StatusForbidden},
		{"viewer reads a link", "richard:chemists", http.MethodGet, itemURL(drive, folder, "permissions/x"), nil, http.StatusForbidden},
		{"viewer deletes", "richard:chemists", http.MethodDelete, itemURL(drive, folder, "permissions/x"), nil, http.StatusForbidden},
		{"stranger creates a link", "richard", http.MethodPost, itemURL(drive, folder, "createLink"), map[string]any{"type": "view"}, http.StatusNotFound},
		{"stranger's other space", "einstein", http.MethodPost, itemURL(labDrive, labFolder, "createLink"), map[string]any{"type": "view"}, http.StatusNotFound},
		{"unconfigured space", "einstein", http.MethodPost, itemURL(testStorageID+"$archive", archived, "createLink"), map[string]any{"type": "view"}, http.StatusNotFound},
		{"missing item", "einstein", http.MethodPost, itemURL(drive, drive+"!nothing", "createLink"), map[string]any{"type": "view"}, http.StatusNotFound},
		{"item of another drive", "marie", http.MethodPost, itemURL(labDrive, folder, "createLink"), map[string]any{"type": "view"}, http.StatusNotFound},
		{"other storage", "einstein", http.MethodPost, itemURL("other$physics", "other$physics!x", "createLink"), map[string]any{"type": "view"}, http.StatusNotFound},
		{"link type", "einstein", http.MethodPost, itemURL(drive, folder, "createLink"), map[string]any{"type": "internal"}, http.StatusBadRequest},
		{"upload link to a file", "einstein", http.MethodPost, itemURL(drive, file, "createLink"), map[string]any{"type": "upload"}, http.StatusBadRequest},
		{"short password", "einstein", http.MethodPost, itemURL(drive, folder, "createLink"), map[string]any{"type": "view", "password": "short"}, http.StatusBadRequest},
		{"past expiry", "einstein", http.MethodPost, itemURL(drive, folder, "createLink"), `{"type":"view","expirationDateTime":"` + past + `"}`, http.StatusBadRequest},
		{"malformed body", "einstein", http.MethodPost, itemURL(drive, folder, "createLink"), `{"type":`, http.StatusBadRequest},
		{"no body", "einstein", http.MethodPost, itemURL(drive, folder, "createLink"), nil, http.StatusBadRequest},
		{"unknown user", "einstein", http.MethodPost, itemURL(drive, folder, "invite"), map[string]any{"recipients": user("nobody"), "roles": []string{RoleViewerID}}, http.StatusBadRequest},
		{"not a user id", "einstein", http.MethodPost, itemURL(drive, folder, "invite"), map[string]any{"recipients": user("a/b"), "roles": []string{RoleViewerID}}, http.StatusBadRequest},
		{"unknown group", "einstein", http.MethodPost, itemURL(drive, folder, "invite"), map[string]any{"recipients": []map[string]string{{"objectId": "nobody", "@libre.graph.recipient.type": "group"}}, "roles": []string{RoleViewerID}}, http.StatusBadRequest},
		{"recipient type", "einstein", http.MethodPost, itemURL(drive, folder, "invite"), map[string]any{"recipients": []map[string]string{{"objectId": "marie", "@libre.graph.recipient.type": "robot"}}, "roles": []string{RoleViewerID}}, http.StatusBadRequest},
		{"oneself", "einstein", http.MethodPost, itemURL(drive, folder, "invite"), map[string]any{"recipients": user("einstein"), "roles": []string{RoleViewerID}}, http.StatusBadRequest},
		{"space role", "einstein", http.MethodPost, itemURL(drive, folder, "invite"), map[string]any{"recipients": user("marie"), "roles": []string{RoleManagerID}}, http.StatusBadRequest},
		{"folder role on a file", "einstein", http.MethodPost, itemURL(drive, file, "invite"), map[string]any{"recipients": user("marie"), "roles": []string{RoleEditorID}}, http.StatusBadRequest},
		{"no recipient", "einstein", http.MethodPost, itemURL(drive, folder, "invite"), map[string]any{"roles": []string{RoleViewerID}}, http.StatusBadRequest},
		{"second recipient unknown", "einstein", http.MethodPost, itemURL(drive, folder, "invite"), map[string]any{"recipients": append(user("marie"), user("nobody")...), "roles": []string{RoleViewerID}}, http.StatusBadRequest},
		{"link of a root", "einstein", http.MethodPost, "/graph/v1beta1/drives/" + drive + "/root/createLink", map[string]any{"type": "view"}, http.StatusBadRequest},
		{"unknown permission", "einstein", http.MethodGet, itemURL(drive, folder, "permissions/nope"), nil, http.StatusNotFound},
		{"DELETE createLink", "einstein", http.MethodDelete, itemURL(drive, folder, "createLink"), nil, http.StatusMethodNotAllowed},
		{"unauthenticated", "", http.MethodPost, itemURL(drive, folder, "createLink"), map[string]any{"type": "view"}, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.doJSON(tt.user, tt.method, tt.target, tt.body, nil)
			wantStatus(t, rec, tt.status)
			var body errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error.Code == "" {
				t.Fatalf("error body %s", rec.Body)
			}
		})
	}
	for _, space := range []string{"physics", "lab", "archive"} {
		if shares, err := e.store.ItemShares(context.Background(), space, ""); err != nil || len(shares) != 0 {
			t.Errorf("refusals left shares in %s: %+v, %v", space, shares, err)
		}
	}
}

// TestPermissionOfAnotherItem: a share id is only found through its own
// item, and a share whose creator lost the right to share is gone.
func TestPermissionOfAnotherItem(t *testing.T) {
	e := newEnv(t)
	drive, a := e.folder("physics", "a")
	_, b := e.folder("physics", "b")
	var p linkPermission
	wantStatus(t, e.doJSON("marie", http.MethodPost, itemURL(drive, a, "createLink"), map[string]any{"type": "view"}, &p), http.StatusOK)
	for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
		wantStatus(t, e.doJSON("einstein", m, itemURL(drive, b, "permissions/"+p.ID), `{}`, nil), http.StatusNotFound)
	}
	// marie becomes a viewer: her link is dead, unlisted and not found.
	if _, err := e.store.PutSpace(context.Background(), storage.Space{ID: "physics", Type: storage.SpaceProject, Name: "Physics",
		Quota: storage.NoQuota, Members: map[string]storage.Role{"einstein": storage.RoleManager, "marie": storage.RoleViewer}}); err != nil {
		t.Fatal(err)
	}
	var list permissionsList
	e.doJSON("einstein", http.MethodGet, itemURL(drive, a, "permissions"), nil, &list)
	if len(list.Value) != 0 {
		t.Fatalf("a dead link is listed: %+v", list)
	}
	wantStatus(t, e.doJSON("einstein", http.MethodGet, itemURL(drive, a, "permissions/"+p.ID), nil, nil), http.StatusNotFound)
	// It can still be deleted, so that it never revives.
	wantStatus(t, e.doJSON("einstein", http.MethodDelete, itemURL(drive, a, "permissions/"+p.ID), nil, nil), http.StatusNoContent)
}

func TestPeopleSearch(t *testing.T) {
	e := newEnv(t)
	// Somebody who signed in and is no configured member.
	if err := e.store.RememberUser(context.Background(), storage.DirectoryEntry{ID: "ada", DisplayName: "Ada Lovelace",
		Email: "ada@example.org", Groups: []string{"analysts"}, Seen: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var found struct{ Value []userBody }
	wantStatus(t, e.doJSON("richard", http.MethodGet, "/graph/v1.0/users?%24search=%22lovel%22", nil, &found), http.StatusOK)
	if len(found.Value) != 1 || found.Value[0].ID != "ada" || found.Value[0].DisplayName != "Ada Lovelace" || found.Value[0].Mail != "ada@example.org" {
		t.Fatalf("a signed-in user: %+v", found)
	}
	var analysts struct{ Value []identitySet }
	wantStatus(t, e.doJSON("richard", http.MethodGet, "/graph/v1beta1/groups?%24search=analy", nil, &analysts), http.StatusOK)
	if len(analysts.Value) != 1 || analysts.Value[0].ID != "analysts" {
		t.Fatalf("a signed-in user's group: %+v", analysts)
	}
	var users struct{ Value []userBody }
	rec := e.doJSON("richard", http.MethodGet, "/graph/v1.0/users?%24search=%22ari%22", nil, &users)
	wantStatus(t, rec, http.StatusOK)
	if len(users.Value) != 1 || users.Value[0].ID != "marie" || users.Value[0].UserType != "Member" || users.Value[0].OnPremisesSamAccountName != "marie" {
		t.Fatalf("users %s", rec.Body)
	}
	var groups struct{ Value []identitySet }
	rec = e.doJSON("richard", http.MethodGet, "/graph/v1.0/groups?%24search=CHEM", nil, &groups)
	wantStatus(t, rec, http.StatusOK)
	if len(groups.Value) != 1 || groups.Value[0].ID != "chemists" {
		t.Fatalf("groups %s", rec.Body)
	}
	for _, target := range []string{"/graph/v1.0/users?%24search=%22ma%22", "/graph/v1.0/users", "/graph/v1.0/groups?%24search=ch"} {
		wantStatus(t, e.doJSON("richard", http.MethodGet, target, nil, nil), http.StatusForbidden)
	}
	wantStatus(t, e.doJSON("", http.MethodGet, "/graph/v1.0/users?%24search=marie", nil, nil), http.StatusUnauthorized)
}

func TestParseItemPath(t *testing.T) {
	tests := []struct {
		path string
		want itemPath
		ok   bool
	}{
		{"/graph/v1beta1/drives/s$p/items/s$p!n/createLink", itemPath{driveID: "s$p", itemID: "s$p!n", action: "createLink"}, true},
		{"/graph/v1beta1/drives/s$p/items/s$p!n/permissions/x/setPassword", itemPath{driveID: "s$p", itemID: "s$p!n", action: "permissions", permissionID: "x", sub: "setPassword"}, true},
		{"/graph/v1beta1/drives/s$p/root/permissions", itemPath{driveID: "s$p", root: true, action: "permissions"}, true},
		{"/graph/v1beta1/drives/s$p/items/s$p!n/permissions/", itemPath{}, false},
		{"/graph/v1beta1/drives/s$p/items//invite", itemPath{}, false},
		{"/graph/v1beta1/drives/s$p/items/s$p!n/invite/x", itemPath{}, false},
		{"/graph/v1beta1/drives/s$p/children", itemPath{}, false},
	}
	for _, tt := range tests {
		got, ok := parseItemPath(tt.path)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseItemPath(%s) = %+v, %v; want %+v, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

// TestSharedByMeParent: ownCloud Web finds a shared item's folder from
// parentReference.path ("." at the root, "./a/b" below it).
func TestSharedByMeParent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, err := e.store.Mkdir(ctx, "physics", "physics", "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.store.Mkdir(ctx, "physics", a.ID, "b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.store.Mkdir(ctx, "physics", b.ID, "c")
	if err != nil {
		t.Fatal(err)
	}
	drive := testStorageID + "$physics"
	for _, n := range []storage.Node{c, a} {
		wantStatus(t, e.doJSON("marie", http.MethodPost, itemURL(drive, drive+"!"+n.ID, "createLink"), map[string]any{"type": "view"}, nil), http.StatusOK)
	}
	var by struct {
		Value []struct {
			Name            string
			ParentReference itemReference
			Permissions     []linkPermission
		}
	}
	e.doJSON("marie", http.MethodGet, "/graph/v1beta1/me/drive/sharedByMe", nil, &by)
	if len(by.Value) != 2 {
		t.Fatalf("sharedByMe %+v", by)
	}
	if p := by.Value[0].ParentReference; by.Value[0].Name != "c" || p.Path != "./a/b" || p.ID != drive+"!"+b.ID || p.DriveID != drive || p.DriveType != "project" {
		t.Errorf("c: %+v", by.Value[0])
	}
	if p := by.Value[1].ParentReference; by.Value[1].Name != "a" || p.Path != "." || p.ID != drive+"!physics" {
		t.Errorf("a: %+v", by.Value[1])
	}
	if inv := by.Value[0].Permissions[0].Invitation; inv == nil || inv.InvitedBy.User.ID != "marie" {
		t.Errorf("a link's creator: %+v", by.Value[0].Permissions[0])
	}
}

// TestRootPermissions: every member reads a space's members as its root's
// permissions; nobody shares a root.
func TestRootPermissions(t *testing.T) {
	e := newEnv(t)
	target := "/graph/v1beta1/drives/" + testStorageID + "$physics/root/permissions"
	var list struct{ Value []permission }
	wantStatus(t, e.doJSON("richard:chemists", http.MethodGet, target, nil, &list), http.StatusOK)
	if len(list.Value) != 3 {
		t.Fatalf("members %+v", list)
	}
	wantStatus(t, e.doJSON("richard", http.MethodGet, target, nil, nil), http.StatusNotFound)
	wantStatus(t, e.doJSON("einstein", http.MethodGet, "/graph/v1beta1/drives/"+testStorageID+"$archive/root/permissions", nil, nil), http.StatusNotFound)
	wantStatus(t, e.doJSON("einstein", http.MethodPost, "/graph/v1beta1/drives/"+testStorageID+"$physics/root/invite", `{}`, nil), http.StatusBadRequest)
}
