package integration

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// TestClosedDoorsShares replays, through the real Caddy, what an editor
// could do to a manager's link: remove its password and make it an edit
// link, which an anonymous PUT then used. Now an editor lists the link
// without its address and is refused every change, over Graph and OCS;
// the link stays a protected view link. Beside it: sharees with a search
// of fewer than 3 characters list nobody, and a link's PROPFIND never
// names the space, whose id here is its name.
func TestClosedDoorsShares(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer, davspaces: []string{
		"space Skunkworks {",
		"	id skunkworks",
		"	manager alice",
		"	editor carol",
		"}",
	}})
	alice := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	carol := &client{t: t, base: s.URL, token: idp.Token(t, "carol"), http: http.DefaultClient}
	anonymous := &client{t: t, base: s.URL, http: http.DefaultClient}

	project := listDrives(t, alice, "project")
	if len(project) != 1 {
		t.Fatalf("alice's project drives %+v", project)
	}
	folder := "/dav/spaces/" + url.PathEscape(project[0].ID) + "/press"
	alice.expect(http.StatusCreated, "MKCOL", folder, "")
	alice.expect(http.StatusCreated, http.MethodPut, folder+"/kit.txt", "embargoed")
	items := "/graph/v1beta1/drives/" + url.PathEscape(project[0].ID) + "/items/" + url.PathEscape(alice.prop(folder, ocNS, "fileid"))

	var link graphPermission
	webCall(t, alice, http.StatusOK, http.MethodPost, items+"/createLink", `{"type":"view","password":"Pa55word!"}`, &link)
	token := strings.TrimPrefix(link.Link.WebURL, s.URL+"/s/")
	public := "/dav/public-files/" + token + "/"
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("public:Pa55word!"))

	// carol, an editor, lists the link but not its address.
	var list struct {
		Value []graphPermission `json:"value"`
	}
	_, body := carol.expect(http.StatusOK, http.MethodGet, items+"/permissions", "", webXHR...)
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Value) != 1 || list.Value[0].ID != link.ID ||
		list.Value[0].Link == nil || list.Value[0].Link.WebURL != "" || strings.Contains(body, token) {
		t.Fatalf("carol's list of the item's permissions (%v): %s", err, body)
	}
	// The finding: remove the password, make it an edit link. Refused.
	carol.expect(http.StatusForbidden, http.MethodPost, items+"/permissions/"+link.ID+"/setPassword", `{"password":""}`, webXHR...)
	carol.expect(http.StatusForbidden, http.MethodPatch, items+"/permissions/"+link.ID, `{"link":{"type":"edit"}}`, webXHR...)
	ocsCall[[]any](carol, http.StatusForbidden, "PUT", "/shares/"+link.ID, url.Values{"permissions": {"15"}, "password": {""}})
	if shares := ocsCall[[]ocsShare](carol, http.StatusOK, "GET", "/shares?reshares=true&path=/press&space_ref="+url.QueryEscape(project[0].ID), nil); len(shares) != 1 || shares[0].Token != "" || shares[0].URL != "" {
		t.Fatalf("carol's OCS list %+v", shares)
	}
	carol.expect(http.StatusForbidden, http.MethodDelete, items+"/permissions/"+link.ID, "", webXHR...)
	ocsCall[[]any](carol, http.StatusForbidden, "DELETE", "/shares/"+link.ID, nil)

	// The link is as alice made it, and still refuses an anonymous PUT.
	var now graphPermission
	webCall(t, alice, http.StatusOK, http.MethodGet, items+"/permissions/"+link.ID, "", &now)
	if now.Link == nil || now.Link.Type != "view" || now.HasPassword == nil || !*now.HasPassword || now.Link.WebURL != link.Link.WebURL {
		t.Fatalf("the link after carol's attempts: %+v", now)
	}
	anonymous.expect(http.StatusUnauthorized, http.MethodPut, public+"defaced.txt", "gotcha")
	if resp, _ := anonymous.do(http.MethodPut, public+"defaced.txt", "gotcha", "Authorization", basic); resp.StatusCode < 400 {
		t.Fatalf("a PUT through the view link with its password: %d", resp.StatusCode)
	}

	// Sharees: fewer than 3 characters find nobody.
	type sharees struct {
		Exact struct {
			Users []json.RawMessage `json:"users"`
		} `json:"exact"`
		Users  []json.RawMessage `json:"users"`
		Groups []json.RawMessage `json:"groups"`
	}
	for _, search := range []string{"", "al"} {
		if found := ocsCall[sharees](carol, http.StatusOK, "GET", "/sharees?itemType=folder&search="+search, nil); len(found.Users)+len(found.Exact.Users)+len(found.Groups) != 0 {
			t.Fatalf("sharees %q: %+v", search, found)
		}
	}
	if found := ocsCall[sharees](carol, http.StatusOK, "GET", "/sharees?itemType=folder&search=ali", nil); len(found.Users)+len(found.Exact.Users) != 1 {
		t.Fatalf("sharees ali: %+v", found)
	}

	// A visitor's PROPFIND names no space.
	_, body = anonymous.expect(http.StatusMultiStatus, "PROPFIND", public, "", "Depth", "1", "Authorization", basic)
	if strings.Contains(strings.ToLower(body), "skunkworks") || !strings.Contains(body, "kit.txt") {
		t.Fatalf("a link's PROPFIND:\n%s", body)
	}
}
