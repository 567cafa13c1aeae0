package integration

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// ownCloud Web (v12) starting against davspaces, call by call, in the
// order it makes them and with the headers it sends, through the real
// Caddy on Caddyfile.example with a token of the test provider. Each
// check names the field Web reads and the file of owncloud/web that reads
// it; Web itself is not run (too heavy here).

// webXHR is the header Web's HTTP clients send with every request
// (web-pkg/src/services/client/client.ts, staticHeaders).
var webXHR = []string{"X-Requested-With", "XMLHttpRequest"}

// webCall sends one of Web's requests and decodes its JSON answer into v,
// failing unless the status is want.
func webCall(t *testing.T, c *client, want int, method, path, body string, v any) http.Header {
	t.Helper()
	hdr := webXHR
	if body != "" {
		hdr = append(slices.Clone(webXHR), "Content-Type", "application/json")
	}
	resp, b := c.expect(want, method, path, body, hdr...)
	if v != nil {
		if err := json.Unmarshal([]byte(b), v); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, path, b, err)
		}
	}
	return resp.Header
}

// graphDrive is the part of a libre-graph drive Web's buildSpace reads
// (web-client/src/helpers/space/functions.ts).
type graphDrive struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	DriveType  string `json:"driveType"`
	DriveAlias string `json:"driveAlias"`
	// The server's address: new URL(drive.webUrl).origin
	// (web-client/src/graph/drives/drives.ts); a drive without it throws.
	WebURL string `json:"webUrl"`
	Owner  *struct {
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"owner"`
	Quota *struct {
		Used *int64 `json:"used"`
	} `json:"quota"`
	Root struct {
		// members: keyed by grantedToV2.user or .group id, the role from
		// roles[0].
		Permissions []struct {
			GrantedToV2 struct {
				User  *struct{ ID string } `json:"user"`
				Group *struct{ ID string } `json:"group"`
			} `json:"grantedToV2"`
			Roles []string `json:"roles"`
		} `json:"permissions"`
	} `json:"root"`
}

// members maps "user:<id>" and "group:<id>" to the role ids, as buildSpace
// keys them.
func (d graphDrive) members() map[string]string {
	m := map[string]string{}
	for _, p := range d.Root.Permissions {
		switch {
		case p.GrantedToV2.User != nil:
			m["user:"+p.GrantedToV2.User.ID] = p.Roles[0]
		case p.GrantedToV2.Group != nil:
			m["group:"+p.GrantedToV2.Group.ID] = p.Roles[0]
		}
	}
	return m
}

// listDrives is getSpacesByType (web-pkg/src/composables/piniaStores/
// spaces.ts): /me/drives of one type, by name.
func listDrives(t *testing.T, c *client, driveType string) []graphDrive {
	t.Helper()
	q := url.Values{"$orderby": {"name asc"}, "$filter": {"driveType eq " + driveType}}
	var body struct {
		Value []graphDrive `json:"value"`
	}
	webCall(t, c, http.StatusOK, http.MethodGet, "/graph/v1beta1/me/drives?"+q.Encode(), "", &body)
	if body.Value == nil {
		t.Fatalf("/me/drives of type %s: no value list", driveType)
	}
	return body.Value
}

func TestOwnCloudWebStartup(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	// alice is in the groups admins and developers, carol in none.
	s := startServer(t, serverOptions{issuer: idp.Issuer, davspaces: []string{
		"space Lab {",
		"	id lab",
		"	manager group:admins",
		"	editor marie",
		"	viewer group:developers",
		"}",
	}})
	anonymous := &client{t: t, base: s.URL, http: http.DefaultClient}
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}

	// 1. Before sign-in, without a token: the application list
	// (web-pkg/src/services/appProvider/service.ts loadData, through
	// httpUnAuthenticated; schemas.ts: "mime-types" must be a list). A
	// 401 here is "Missing or invalid config".
	var apps map[string][]any
	webCall(t, anonymous, http.StatusOK, http.MethodGet, "/app/list", "", &apps)
	if list, ok := apps["mime-types"]; !ok || list == nil {
		t.Fatalf("app list %v: no mime-types list", apps)
	}

	// 2. A request of Web's without a valid token is refused with the
	// Bearer challenge alone: a Basic one would put the browser's password
	// prompt over the page. Clients that are no scripts still see Basic.
	resp, _ := anonymous.expect(http.StatusUnauthorized, http.MethodGet, "/ocs/v2.php/cloud/user?format=json", "", webXHR...)
	if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || !strings.HasPrefix(got[0], "Bearer ") {
		t.Fatalf("a script's request: challenges %q, want Bearer alone", got)
	}
	resp, _ = anonymous.expect(http.StatusUnauthorized, http.MethodGet, "/ocs/v2.php/cloud/user?format=json", "")
	if got := resp.Header.Values("WWW-Authenticate"); len(got) != 2 {
		t.Fatalf("another client's request: challenges %q, want Bearer and Basic", got)
	}

	// 3. Signed in: the capabilities (web-runtime/src/services/auth/
	// userManager.ts fetchCapabilities; web-client/src/ocs/capabilities.ts
	// reads data.ocs.data). The capability store fills what is missing
	// with its defaults (web-pkg/src/composables/piniaStores/
	// capabilities.ts), sharing on among them, and renaming a received
	// share and custom permissions too, which davspaces does not have:
	// they must say off.
	var caps struct {
		OCS struct {
			Data struct {
				Capabilities struct {
					Core struct {
						Status struct {
							Version string `json:"version"`
						} `json:"status"`
					} `json:"core"`
					Files struct {
						TUS *struct {
							Extension string `json:"extension"`
						} `json:"tus_support"`
					} `json:"files"`
					FilesSharing struct {
						APIEnabled  *bool `json:"api_enabled"`
						CanRename   *bool `json:"can_rename"`
						AllowCustom *bool `json:"allow_custom"`
						Public      struct {
							Enabled *bool `json:"enabled"`
						} `json:"public"`
					} `json:"files_sharing"`
					Spaces struct {
						Enabled  bool `json:"enabled"`
						Projects bool `json:"projects"`
					} `json:"spaces"`
				} `json:"capabilities"`
			} `json:"data"`
		} `json:"ocs"`
	}
	webCall(t, alice, http.StatusOK, http.MethodGet, "/ocs/v2.php/cloud/capabilities?format=json", "", &caps)
	c := caps.OCS.Data.Capabilities
	if fs := c.FilesSharing; fs.APIEnabled == nil || !*fs.APIEnabled || fs.Public.Enabled == nil || !*fs.Public.Enabled ||
		fs.CanRename == nil || *fs.CanRename || fs.AllowCustom == nil || *fs.AllowCustom {
		t.Errorf("files_sharing %+v: want api_enabled and public.enabled true, can_rename and allow_custom false", c.FilesSharing)
	}
	if !c.Spaces.Enabled || !c.Spaces.Projects || c.Files.TUS == nil || c.Core.Status.Version == "" {
		t.Errorf("capabilities %+v", c)
	}

	// 4. The user (userManager.ts fetchUserInfo: graphClient.users.getMe,
	// which expands memberOf, web-client/src/graph/users/users.ts): id,
	// onPremisesSamAccountName, displayName, mail, memberOf.
	var me struct {
		ID                       string `json:"id"`
		DisplayName              string `json:"displayName"`
		Mail                     string `json:"mail"`
		OnPremisesSamAccountName string `json:"onPremisesSamAccountName"`
		MemberOf                 []struct {
			ID          string `json:"id"`
			DisplayName string `json:"displayName"`
		} `json:"memberOf"`
	}
	webCall(t, alice, http.StatusOK, http.MethodGet, "/graph/v1.0/me?%24expand=memberOf", "", &me)
	var groups []string
	for _, g := range me.MemberOf {
		groups = append(groups, g.ID)
	}
	if me.ID != "alice" || me.OnPremisesSamAccountName != "alice" || me.DisplayName != "Alice Archer" ||
		me.Mail != "alice@example.test" || !slices.Equal(groups, []string{"admins", "developers"}) {
		t.Errorf("me %+v", me)
	}

	// 5. The settings service, beside /me (userManager.ts fetchRoles:
	// data.bundles; fetchRole: data.assignments.find — a 404 or a missing
	// list signs the user out; updateUserAbilities: data.permissions).
	var roles struct{ Bundles []any }
	webCall(t, alice, http.StatusOK, http.MethodPost, "/api/v0/settings/roles-list", "{}", &roles)
	var assignments struct{ Assignments []any }
	webCall(t, alice, http.StatusOK, http.MethodPost, "/api/v0/settings/assignments-list", `{"account_uuid":"alice"}`, &assignments)
	var permissions struct{ Permissions []string }
	webCall(t, alice, http.StatusOK, http.MethodPost, "/api/v0/settings/permissions-list", `{"account_uuid":"alice"}`, &permissions)
	if roles.Bundles == nil || assignments.Assignments == nil || permissions.Permissions == nil {
		t.Errorf("settings lists: roles %v, assignments %v, permissions %v; want three lists", roles.Bundles, assignments.Assignments, permissions.Permissions)
	}
	// Without a token the settings are refused like everything else.
	anonymous.expect(http.StatusUnauthorized, http.MethodPost, "/api/v0/settings/assignments-list", "{}", webXHR...)

	// 6. The sharing roles, awaited before the spaces load (web-runtime/
	// src/index.ts listRoleDefinitions; piniaStores/shares/shares.ts
	// setGraphRoles keys them by id): a bare array.
	var roleDefs []struct {
		ID              string `json:"id"`
		DisplayName     string `json:"displayName"`
		RolePermissions []struct {
			AllowedResourceActions []string `json:"allowedResourceActions"`
			Condition              string   `json:"condition"`
		} `json:"rolePermissions"`
	}
	webCall(t, alice, http.StatusOK, http.MethodGet, "/graph/v1beta1/roleManagement/permissions/roleDefinitions", "", &roleDefs)
	// A member's rights: the role's actions under "exists @Resource.Root"
	// (functions.ts getPermissionsFromGraphPermission).
	rootActions := map[string][]string{}
	for _, r := range roleDefs {
		for _, p := range r.RolePermissions {
			if p.Condition == "exists @Resource.Root" {
				rootActions[r.ID] = p.AllowedResourceActions
			}
		}
	}
	const (
		managerRole     = "312c0871-5ef7-4b3a-85b6-0e4074c64049"
		spaceEditorRole = "58c63c02-1d89-4572-916a-870abc5a1b7d"
		spaceViewerRole = "a8d5fe5e-96e3-418d-825b-534dbdf22b99"
		uploadAction    = "libre.graph/driveItem/upload/create"
	)
	if !slices.Contains(rootActions[managerRole], uploadAction) || !slices.Contains(rootActions[spaceEditorRole], uploadAction) ||
		rootActions[spaceViewerRole] == nil || slices.Contains(rootActions[spaceViewerRole], uploadAction) {
		t.Errorf("space roles' actions %v", rootActions)
	}

	// 7. The spaces (piniaStores/spaces.ts loadSpaces: personal and
	// project, by name; the mount points later, and none exist yet).
	personal := listDrives(t, alice, "personal")
	if len(personal) != 1 || personal[0].DriveType != "personal" || personal[0].Owner == nil || personal[0].Owner.User.ID != "alice" {
		t.Fatalf("personal drives %+v", personal)
	}
	projects := listDrives(t, alice, "project")
	if len(projects) != 1 || projects[0].Name != "Lab" || projects[0].DriveType != "project" {
		t.Fatalf("project drives %+v", projects)
	}
	for _, d := range append(personal, projects...) {
		u, err := url.Parse(d.WebURL)
		if err != nil || u.Scheme+"://"+u.Host != s.URL || d.Quota == nil || d.Quota.Used == nil {
			t.Errorf("drive %s: webUrl %q (want one on %s), quota %+v", d.Name, d.WebURL, s.URL, d.Quota)
		}
	}
	wantMembers := map[string]string{"group:admins": managerRole, "user:marie": spaceEditorRole, "group:developers": spaceViewerRole}
	if got := projects[0].members(); !maps.Equal(got, wantMembers) {
		t.Errorf("Lab's members %v, want %v", got, wantMembers)
	}
	if got := len(listDrives(t, alice, "mountpoint")); got != 0 {
		t.Errorf("%d mount points before sharing exists", got)
	}
	carol := &client{t: t, base: s.URL, token: idp.Token(t, "carol"), http: http.DefaultClient}
	if got := listDrives(t, carol, "project"); len(got) != 0 {
		t.Errorf("carol, no member of Lab, sees %+v", got)
	}

	// 8. The personal space's files, at the WebDAV URL buildSpace makes
	// from the drive's id: /dav/spaces/<id>.
	alice.expect(http.StatusMultiStatus, "PROPFIND", "/dav/spaces/"+url.PathEscape(personal[0].ID), "", "Depth", "1")
}

// webBesideCaddyfile is docs/browser.md's site for ownCloud Web beside
// davspaces: Web's bundle under file_server on the same origin (no CORS),
// its own routes falling back to index.html, and oidc_auth only on the
// paths davspaces answers for signed-in users (public links judge their
// own visitors). %[1]d is the port, %[2]s
// the data directory, %[3]s Web's bundle.
const webBesideCaddyfile = `{
	admin off
}
http://127.0.0.1:%[1]d {
	@api {
		path /dav/* /webdav /webdav/* /remote.php/* /ocs/* /graph/* /api/*
		not path /dav/public-files/* /remote.php/dav/public-files/*
		not path /ocs/v1.php/cloud/capabilities /ocs/v2.php/cloud/capabilities
		not method OPTIONS
	}
	oidc_auth @api {
		issuer {$OIDC_ISSUER}
	}
	route {
		davspaces {
			root %[2]s
			web off
		}
		root * %[3]s
		try_files {path} /index.html
		@page path / /index.html /oidc-callback.html /oidc-silent-redirect.html
		header @page Content-Type "text/html; charset=utf-8"
		templates @page
		respond @page <<HTML
			{{readFile (ph "http.request.uri.path") | replace "<head>" "<head><base href=\"/\">"}}
			HTML
		file_server
	}
}
`

// TestOwnCloudWebBesideDAVSpaces runs docs/browser.md's site: Web's files and
// its routes load without a token, /app/list too, and the API wants one.
// Web's pages come with <base href="/">, so that Web routes by path: a
// link's page /s/<token>, a private link and the post-logout address.
func TestOwnCloudWebBesideDAVSpaces(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	dir := t.TempDir()
	bundle := filepath.Join(dir, "web")
	if err := os.MkdirAll(bundle, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"index.html":         "<!doctype html><html><head><title>ownCloud</title></head></html>",
		"oidc-callback.html": "<!doctype html><html><head></head><body>callback</body></html>",
		"config.json":        `{"server":"http://127.0.0.1"}`,
	} {
		if err := os.WriteFile(filepath.Join(bundle, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort(t)
	s := caddyRun{
		dir:    dir,
		config: fmt.Sprintf(webBesideCaddyfile, port, filepath.Join(dir, "data"), bundle),
		url:    fmt.Sprintf("http://127.0.0.1:%d", port),
		env:    []string{"OIDC_ISSUER=" + idp.Issuer},
	}.start(t)
	anonymous := &client{t: t, base: s.URL, http: http.DefaultClient}
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}

	// Web's page, its configuration and its own routes (a folder view, a
	// private link, a link's page) come from the bundle, before sign-in,
	// the pages with the base that makes Web route by path.
	const page = `<head><base href="/"><title>ownCloud</title>`
	for path, want := range map[string]string{
		"/":                             page,
		"/index.html":                   page,
		"/config.json":                  `{"server":"http://127.0.0.1"}`,
		"/files/spaces/personal/alice":  page,
		"/f/some-storage$space%21node":  page,
		"/s/" + strings.Repeat("x", 15): page,
		"/oidc-callback.html":           `<head><base href="/"></head><body>callback`,
		"/oidc-silent-redirect.html":    page,
		"/app/list":                     `"mime-types":[]`,
		"/status.php":                   `"installed":true`,
		// A public link's page reads them before anyone signs in.
		"/ocs/v2.php/cloud/capabilities?format=json": `"favorites":true`,
	} {
		if _, body := anonymous.expect(http.StatusOK, http.MethodGet, path, ""); !strings.Contains(body, want) {
			t.Errorf("GET %s: %q, want it to hold %q", path, body, want)
		}
	}
	if resp, _ := anonymous.expect(http.StatusOK, http.MethodGet, "/s/"+strings.Repeat("x", 15), ""); !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("a link's page is %q", resp.Header.Get("Content-Type"))
	}
	// The API wants a token, and tells a script so without a Basic prompt.
	for _, path := range []string{"/graph/v1.0/me", "/ocs/v2.php/cloud/user?format=json", "/dav/spaces/", "/webdav/"} {
		resp, _ := anonymous.expect(http.StatusUnauthorized, http.MethodGet, path, "", webXHR...)
		if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || !strings.HasPrefix(got[0], "Bearer ") {
			t.Errorf("GET %s: challenges %q", path, got)
		}
	}
	anonymous.expect(http.StatusUnauthorized, http.MethodPost, "/api/v0/settings/assignments-list", "{}", webXHR...)
	// Public links are davspaces' to judge, without a token: an unknown
	// one is the WebDAV 404.
	anonymous.expect(http.StatusNotFound, "PROPFIND", "/dav/public-files/"+strings.Repeat("x", 43)+"/", "", "Depth", "0")
	webCall(t, alice, http.StatusOK, http.MethodGet, "/graph/v1.0/me", "", nil)
	personal := listDrives(t, alice, "personal")
	if len(personal) != 1 {
		t.Fatalf("personal drives %+v", personal)
	}
	alice.expect(http.StatusCreated, http.MethodPut, "/dav/spaces/"+url.PathEscape(personal[0].ID)+"/hello.txt", "hello")
}
