package integration

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/internal/testidp"
)

// ocsShare is what the test reads of an OCS share element.
type ocsShare struct {
	ID          string  `json:"id"`
	ShareType   int     `json:"share_type"`
	Permissions int     `json:"permissions"`
	Token       string  `json:"token"`
	URL         string  `json:"url"`
	Path        string  `json:"path"`
	ItemType    string  `json:"item_type"`
	ShareWith   string  `json:"share_with"`
	UIDOwner    string  `json:"uid_owner"`
	Expiration  *string `json:"expiration"`
}

// ocsCall sends an OCS request as the mobile apps do (v2, JSON, a form body)
// and returns the envelope's data, checking the HTTP status and the
// envelope's statuscode (v2 repeats the HTTP status).
func ocsCall[T any](c *client, status int, method, endpoint string, form url.Values) T {
	c.t.Helper()
	target := "/ocs/v2.php/apps/files_sharing/api/v1" + endpoint
	if strings.Contains(target, "?") {
		target += "&format=json"
	} else {
		target += "?format=json"
	}
	hdr := []string{"OCS-APIRequest", "true"}
	if form != nil {
		hdr = append(hdr, "Content-Type", "application/x-www-form-urlencoded")
	}
	_, body := c.expect(status, method, target, form.Encode(), hdr...)
	var env struct {
		OCS struct {
			Meta struct {
				StatusCode int `json:"statuscode"`
			} `json:"meta"`
			Data T `json:"data"`
		} `json:"ocs"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		c.t.Fatalf("%s %s: %v\n%s", method, target, err, body)
	}
	if env.OCS.Meta.StatusCode != status {
		c.t.Fatalf("%s %s: statuscode %d, want %d\n%s", method, target, env.OCS.Meta.StatusCode, status, body)
	}
	return env.OCS.Data
}

// TestOCSSharing drives the OCS sharing API through the real Caddy:
// einstein shares a folder by link, which opens it over WebDAV, then with
// the password OCS sets, and no more once deleted; he shares it with marie
// (a member the Caddyfile names) and a file with the group developers
// (from bob's token); the recipients find them shared with them; einstein
// changes and deletes them.
func TestOCSSharing(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer, davspaces: labSpace})
	einstein := newClient(t, s.URL, "einstein")
	marie := newClient(t, s.URL, "marie")
	richard := newClient(t, s.URL, "richard")
	bob := &client{t: t, base: s.URL, token: idp.Token(t, "bob"), http: http.DefaultClient}
	einstein.expect(http.StatusCreated, "MKCOL", "/webdav/Reports", "")
	einstein.expect(http.StatusCreated, "PUT", "/webdav/Reports/q3.txt", "third quarter")

	link := ocsCall[ocsShare](einstein, http.StatusOK, "POST", "/shares", url.Values{
		"path": {"/Reports/"}, "shareType": {"3"}, "name": {"Quarterly"}, "expireDate": {"2099-06-30"}})
	if link.ShareType != 3 || link.Permissions != 1 || len(link.Token) < 40 || link.URL != s.URL+"/s/"+link.Token ||
		link.Path != "/Reports" || link.ItemType != "folder" || link.Expiration == nil || *link.Expiration != "2099-06-30 23:59:59" {
		t.Fatalf("link %+v", link)
	}
	// The link works over WebDAV, without an account; a password set by
	// OCS then guards it.
	anon := newClient(t, s.URL, "")
	if _, got := anon.expect(http.StatusOK, "GET", "/dav/public-files/"+link.Token+"/q3.txt", ""); got != "third quarter" {
		t.Fatalf("the file through the link: %q", got)
	}
	protected := ocsCall[ocsShare](einstein, http.StatusOK, "PUT", "/shares/"+link.ID, url.Values{"password": {"open sesame"}})
	if protected.ShareWith == "" {
		t.Fatalf("a protected link's share_with is empty: %+v", protected)
	}
	anon.expect(http.StatusUnauthorized, "GET", "/dav/public-files/"+link.Token+"/q3.txt", "")
	req, _ := http.NewRequest("GET", s.URL+"/dav/public-files/"+link.Token+"/q3.txt", nil)
	req.SetBasicAuth("public", "open sesame")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the link with its password: %d", resp.StatusCode)
	}

	withMarie := ocsCall[ocsShare](einstein, http.StatusOK, "POST", "/shares", url.Values{
		"path": {"/Reports"}, "shareType": {"0"}, "shareWith": {"marie"}, "permissions": {"1"}})
	withDevelopers := ocsCall[ocsShare](einstein, http.StatusOK, "POST", "/shares", url.Values{
		"path": {"/Reports/q3.txt"}, "shareType": {"1"}, "shareWith": {"developers"}, "permissions": {"19"}})
	if withMarie.ShareWith != "marie" || withDevelopers.Permissions != 3 || withDevelopers.ItemType != "file" {
		t.Fatalf("shares %+v %+v", withMarie, withDevelopers)
	}
	ocsCall[[]any](einstein, http.StatusNotFound, "POST", "/shares", url.Values{
		"path": {"/Reports"}, "shareType": {"0"}, "shareWith": {"nobody"}})

	// The item's shares, for einstein; the recipients' lists.
	if got := ocsCall[[]ocsShare](einstein, http.StatusOK, "GET", "/shares?reshares=true&path=/Reports", nil); len(got) != 2 {
		t.Fatalf("the shares of /Reports: %+v", got)
	}
	if got := ocsCall[[]ocsShare](einstein, http.StatusOK, "GET", "/shares?subfiles=true&path=/Reports", nil); len(got) != 1 || got[0].ID != withDevelopers.ID {
		t.Fatalf("the shares below /Reports: %+v", got)
	}
	got := ocsCall[[]ocsShare](marie, http.StatusOK, "GET", "/shares?shared_with_me=true", nil)
	if len(got) != 1 || got[0].ID != withMarie.ID || got[0].UIDOwner != "einstein" || got[0].Path != "/Shares/Reports" {
		t.Fatalf("shared with marie: %+v", got)
	}
	if got := ocsCall[[]ocsShare](bob, http.StatusOK, "GET", "/shares?shared_with_me=true", nil); len(got) != 1 || got[0].ID != withDevelopers.ID {
		t.Fatalf("shared with bob, a developer: %+v", got)
	}
	if got := ocsCall[[]ocsShare](richard, http.StatusOK, "GET", "/shares?shared_with_me=true", nil); len(got) != 0 {
		t.Fatalf("shared with richard: %+v", got)
	}
	// Nobody else learns of a share, or of einstein's folder.
	ocsCall[[]any](richard, http.StatusNotFound, "GET", "/shares/"+withMarie.ID, nil)
	ocsCall[[]any](richard, http.StatusNotFound, "DELETE", "/shares/"+link.ID, nil)
	ocsCall[[]any](marie, http.StatusForbidden, "PUT", "/shares/"+withMarie.ID, url.Values{"permissions": {"15"}})

	// einstein lets marie edit, then revokes.
	updated := ocsCall[ocsShare](einstein, http.StatusOK, "PUT", "/shares/"+withMarie.ID, url.Values{"permissions": {"15"}})
	if updated.Permissions != 15 {
		t.Fatalf("updated %+v", updated)
	}
	if got := ocsCall[[]ocsShare](marie, http.StatusOK, "GET", "/shares/"+withMarie.ID, nil); len(got) != 1 || got[0].Permissions != 15 {
		t.Fatalf("marie reads her share: %+v", got)
	}
	ocsCall[[]any](einstein, http.StatusOK, "DELETE", "/shares/"+withMarie.ID, nil)
	ocsCall[[]any](marie, http.StatusNotFound, "GET", "/shares/"+withMarie.ID, nil)
	if got := ocsCall[[]ocsShare](marie, http.StatusOK, "GET", "/shares?shared_with_me=true", nil); len(got) != 0 {
		t.Fatalf("shared with marie after the revocation: %+v", got)
	}
	if got := ocsCall[[]ocsShare](einstein, http.StatusOK, "GET", "/shares", nil); len(got) != 2 {
		t.Fatalf("einstein's shares: %+v", got)
	}
	ocsCall[[]any](einstein, http.StatusOK, "DELETE", "/shares/"+link.ID, nil)
	anon.expect(http.StatusNotFound, "GET", "/dav/public-files/"+link.Token+"/q3.txt", "")

	// Sharees: the members the Caddyfile names, and its groups.
	type sharee struct {
		Label string `json:"label"`
		Value struct {
			ShareType int    `json:"shareType"`
			ShareWith string `json:"shareWith"`
		} `json:"value"`
	}
	type sharees struct {
		Exact struct {
			Users  []sharee `json:"users"`
			Groups []sharee `json:"groups"`
		} `json:"exact"`
		Users  []sharee `json:"users"`
		Groups []sharee `json:"groups"`
	}
	found := ocsCall[sharees](einstein, http.StatusOK, "GET", "/sharees?itemType=folder&search=mar", nil)
	if len(found.Users) != 1 || found.Users[0].Value.ShareWith != "marie" || found.Users[0].Value.ShareType != 0 {
		t.Fatalf("sharees mar: %+v", found)
	}
	found = ocsCall[sharees](einstein, http.StatusOK, "GET", "/sharees?itemType=folder&search=Developers", nil)
	if len(found.Exact.Groups) != 1 || found.Exact.Groups[0].Value.ShareWith != "developers" || found.Exact.Groups[0].Value.ShareType != 1 {
		t.Fatalf("sharees Developers: %+v", found)
	}
	// bob signed in above: the directory has him, by id and by name, and
	// einstein may share with him; carol never did.
	found = ocsCall[sharees](einstein, http.StatusOK, "GET", "/sharees?itemType=file&search=bob", nil)
	if len(found.Exact.Users) != 1 || found.Exact.Users[0].Value.ShareWith != "bob" {
		t.Fatalf("sharees bob: %+v", found)
	}
	if found = ocsCall[sharees](einstein, http.StatusOK, "GET", "/sharees?itemType=file&search=carol", nil); len(found.Users)+len(found.Exact.Users) != 0 {
		t.Fatalf("sharees carol, who never signed in: %+v", found)
	}
	withBob := ocsCall[ocsShare](einstein, http.StatusOK, "POST", "/shares", url.Values{
		"path": {"/Reports"}, "shareType": {"0"}, "shareWith": {"bob"}})
	if got := ocsCall[[]ocsShare](bob, http.StatusOK, "GET", "/shares?shared_with_me=true", nil); len(got) != 2 || got[1].ID != withBob.ID {
		t.Fatalf("shared with bob: %+v", got)
	}
}
