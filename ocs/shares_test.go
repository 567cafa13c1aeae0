package ocs

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// shareFixture is a handler on a real embedded store: einstein's personal
// space with /Documents/notes.txt, and the project space Physics where
// einstein manages, marie edits and richard views. marie (group physics)
// and richard signed in; bohr is a member the configuration names only.
type shareFixture struct {
	t       *testing.T
	h       *Handler
	store   *boltstore.Store
	docs    storage.Node
	notes   storage.Node
	project storage.Space
	lab     storage.Node // a folder of Physics
}

var groups = map[string][]string{"marie": {"physics"}, "richard": {"physics", "caltech"}}

func newShareFixture(t *testing.T) *shareFixture {
	t.Helper()
	store, err := boltstore.Open(t.TempDir(), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ctx := t.Context()
	f := &shareFixture{t: t, store: store}
	home, err := store.PersonalSpace(ctx, storage.User{ID: "einstein", DisplayName: "Albert Einstein"})
	if err != nil {
		t.Fatal(err)
	}
	if f.docs, err = store.Mkdir(ctx, home.ID, home.ID, "Documents"); err != nil {
		t.Fatal(err)
	}
	f.notes = f.upload(home.ID, f.docs.ID, "notes.txt")
	f.project, err = store.PutSpace(ctx, storage.Space{ID: "physics-space", Type: storage.SpaceProject, Name: "Physics",
		Quota: storage.NoQuota, Members: map[string]storage.Role{"einstein": storage.RoleManager, "marie": storage.RoleEditor, "richard": storage.RoleViewer}})
	if err != nil {
		t.Fatal(err)
	}
	if f.lab, err = store.Mkdir(ctx, f.project.ID, f.project.ID, "Lab"); err != nil {
		t.Fatal(err)
	}
	for _, e := range []storage.DirectoryEntry{
		{ID: "marie", DisplayName: "Marie Curie", Email: "marie@example.org", Groups: groups["marie"]},
		{ID: "richard", DisplayName: "Richard Feynman", Groups: groups["richard"]},
		{ID: "einstein", DisplayName: "Albert Einstein"},
	} {
		e, _ = storage.NormalizeDirectoryEntry(e, time.Now())
		if err := store.RememberUser(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	f.h = newConfiguredHandler(t, func(cfg *Config) {
		cfg.Store = store
		cfg.Spaces = storage.NewSpacePolicy([]string{f.project.ID})
		cfg.Members = []string{"einstein", "bohr", storage.GroupPrefix + "staff"}
		user := cfg.User
		cfg.User = func(r *http.Request) (storage.User, bool) {
			u, ok := user(r)
			u.Groups = groups[u.ID]
			return u, ok
		}
	})
	return f
}

func (f *shareFixture) upload(spaceID, parentID, name string) storage.Node {
	f.t.Helper()
	up, err := f.store.NewUpload(f.t.Context(), spaceID)
	if err != nil {
		f.t.Fatal(err)
	}
	defer up.Discard()
	io.WriteString(up, "E = mc²")
	n, _, err := up.Commit(f.t.Context(), storage.Commit{ParentID: parentID, Name: name})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

const sharesURL = "/ocs/v2.php/apps/files_sharing/api/v1/shares"

// do sends a request as user with form as the body of a POST or PUT.
func (f *shareFixture) do(user, method, target string, form url.Values) *httptest.ResponseRecorder {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	r.Header.Set("X-User", user)
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

// jsonAnswer is a JSON envelope with data of type T.
type jsonAnswer[T any] struct {
	OCS struct {
		Meta meta `json:"meta"`
		Data T    `json:"data"`
	} `json:"ocs"`
}

func decodeJSON[T any](t *testing.T, w *httptest.ResponseRecorder, status int) T {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	var a jsonAnswer[T]
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	return a.OCS.Data
}

// create posts a share as user and returns it.
func (f *shareFixture) create(user string, form url.Values) shareElement {
	f.t.Helper()
	return decodeJSON[shareElement](f.t, f.do(user, http.MethodPost, sharesURL+"?format=json", form), http.StatusOK)
}

func (f *shareFixture) list(user, query string) []shareElement {
	f.t.Helper()
	return decodeJSON[[]shareElement](f.t, f.do(user, http.MethodGet, sharesURL+"?format=json&"+query, nil), http.StatusOK)
}

func TestShareLinkByOCS(t *testing.T) {
	f := newShareFixture(t)
	e := f.create("einstein", url.Values{"path": {"/Documents/"}, "shareType": {"3"}, "name": {"For Bohr"},
		"password": {"secret-passphrase"}, "expireDate": {"2099-12-31"}})
	if e.ShareType != 3 || e.Permissions != 1 || e.ItemType != "folder" || e.Path != "/Documents" || e.Name != "For Bohr" ||
		e.Token == "" || e.URL != "http://example.com/s/"+e.Token || e.ShareWith != redactedPassword ||
		e.Expiration == nil || *e.Expiration != "2099-12-31 23:59:59" || e.UIDOwner != "einstein" || e.DisplaynameOwner != "Albert Einstein" ||
		e.MimeType != "httpd/unix-directory" || e.ItemSource != f.store.StorageID()+"$"+f.docs.SpaceID+"!"+f.docs.ID {
		t.Errorf("link %+v", e)
	}
	link, err := f.store.LinkByToken(t.Context(), e.Token)
	if err != nil || link.ID != e.ID || link.Role != storage.ShareViewer || !storage.CheckLinkPassword(link, "secret-passphrase") {
		t.Fatalf("the store's link %+v, %v", link, err)
	}
	drop := f.create("einstein", url.Values{"path": {"/Documents"}, "shareType": {"3"}, "permissions": {"4"}})
	if drop.Permissions != 4 || drop.ShareWith != "" {
		t.Errorf("file drop %+v", drop)
	}
	exact := f.create("einstein", url.Values{"space_ref": {e.ItemSource}, "path": {"/ignored"}, "shareType": {"3"}, "expireDate": {"2099-01-02T03:04:05Z"}})
	if exact.Path != "/Documents" || exact.Expiration == nil || *exact.Expiration != "2099-01-02 03:04:05" {
		t.Errorf("a link by resource id with an RFC 3339 expiry: %+v", exact)
	}
	upload := f.create("einstein", url.Values{"path": {"/Documents"}, "shareType": {"3"}, "publicUpload": {"true"}})
	if upload.Permissions != 15 {
		t.Errorf("publicUpload gives %d", upload.Permissions)
	}
	if got := f.list("einstein", "path=/Documents"); len(got) != 4 || got[0].ID != e.ID {
		t.Errorf("the item's shares: %+v", got)
	}
}

func TestShareXMLv1(t *testing.T) {
	f := newShareFixture(t)
	w := f.do("einstein", http.MethodPost, "/ocs/v1.php/apps/files_sharing/api/v1/shares",
		url.Values{"path": {"/Documents/notes.txt"}, "shareType": {"0"}, "shareWith": {"marie"}, "permissions": {"19"}})
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var env struct {
		Meta meta `xml:"meta"`
		Data struct {
			ID          string `xml:"id"`
			ShareType   int    `xml:"share_type"`
			Permissions int    `xml:"permissions"`
			ShareWith   string `xml:"share_with"`
			ShareWithDN string `xml:"share_with_displayname"`
			ItemType    string `xml:"item_type"`
			Path        string `xml:"path"`
		} `xml:"data"`
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	if env.Meta.StatusCode != 100 || env.Data.ShareType != 0 || env.Data.Permissions != 3 || env.Data.ShareWith != "marie" ||
		env.Data.ShareWithDN != "Marie Curie" || env.Data.ItemType != "file" || env.Data.Path != "/Documents/notes.txt" {
		t.Errorf("answer %+v", env)
	}
	w = f.do("einstein", http.MethodGet, "/ocs/v1.php/apps/files_sharing/api/v1/shares?path=/Documents/notes.txt", nil)
	var list struct {
		Meta     meta `xml:"meta"`
		Elements []struct {
			ID string `xml:"id"`
		} `xml:"data>element"`
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &list); err != nil || list.Meta.StatusCode != 100 || len(list.Elements) != 1 || list.Elements[0].ID != env.Data.ID {
		t.Errorf("list %+v, %v: %s", list, err, w.Body)
	}
}

func TestShareWithUserAndGroup(t *testing.T) {
	f := newShareFixture(t)
	user := f.create("einstein", url.Values{"path": {"/Documents"}, "shareType": {"0"}, "shareWith": {"marie"}, "permissions": {"1"}})
	group := f.create("einstein", url.Values{"path": {"/Documents/notes.txt"}, "shareType": {"1"}, "shareWith": {"caltech"}})
	if group.Permissions != 3 || group.ShareWith != "caltech" {
		t.Errorf("group share %+v: the default is to edit", group)
	}
	got := f.list("marie", "shared_with_me=true")
	if len(got) != 1 || got[0].ID != user.ID || got[0].Path != "/Shares/Documents" || got[0].UIDOwner != "einstein" || got[0].State != 0 {
		t.Errorf("marie's received shares: %+v", got)
	}
	if got := f.list("richard", "shared_with_me=true"); len(got) != 1 || got[0].ID != group.ID {
		t.Errorf("richard's received shares (by group caltech): %+v", got)
	}
	if got := f.list("richard", "shared_with_me=true&state=1"); len(got) != 0 {
		t.Errorf("pending shares: %+v", got)
	}
	if got := f.list("einstein", ""); len(got) != 2 {
		t.Errorf("einstein's shares: %+v", got)
	}
	if got := f.list("einstein", "path=/Documents&subfiles=true"); len(got) != 1 || got[0].ID != group.ID {
		t.Errorf("the shares in /Documents: %+v", got)
	}
	if w := f.do("einstein", http.MethodGet, sharesURL+"?path=/Documents/notes.txt&subfiles=true", nil); w.Code != http.StatusBadRequest {
		t.Errorf("subfiles of a file: %d", w.Code)
	}
	// A recipient reads the share, but neither changes nor deletes it.
	if w := f.do("marie", http.MethodGet, sharesURL+"/"+user.ID+"?format=json", nil); w.Code != http.StatusOK {
		t.Errorf("recipient GET: %d %s", w.Code, w.Body)
	}
	if w := f.do("marie", http.MethodDelete, sharesURL+"/"+user.ID, nil); w.Code != http.StatusForbidden {
		t.Errorf("recipient DELETE: %d", w.Code)
	}
	// Update, then delete.
	updated := decodeJSON[shareElement](t, f.do("einstein", http.MethodPut, sharesURL+"/"+user.ID+"?format=json",
		url.Values{"permissions": {"31"}}), http.StatusOK)
	if updated.Permissions != 15 {
		t.Errorf("updated %+v", updated)
	}
	if sh, err := f.store.Share(t.Context(), user.ID); err != nil || sh.Role != storage.ShareEditor {
		t.Errorf("the store's share %+v, %v", sh, err)
	}
	if w := f.do("einstein", http.MethodPut, sharesURL+"/"+user.ID, url.Values{}); w.Code != http.StatusBadRequest {
		t.Errorf("an update of nothing: %d", w.Code)
	}
	if w := f.do("einstein", http.MethodDelete, sharesURL+"/"+user.ID, nil); w.Code != http.StatusOK {
		t.Fatalf("DELETE: %d %s", w.Code, w.Body)
	}
	if got := f.list("marie", "shared_with_me=true"); len(got) != 0 {
		t.Errorf("after the delete: %+v", got)
	}
	for _, u := range []string{"einstein", "marie"} {
		w := f.do(u, http.MethodGet, sharesURL+"/"+user.ID+"?format=json", nil)
		if a := decodeJSON[[]any](t, w, http.StatusNotFound); len(a) != 0 {
			t.Errorf("deleted share: %s", w.Body)
		}
	}
}

func TestShareRefusals(t *testing.T) {
	f := newShareFixture(t)
	lab := f.store.StorageID() + "$" + f.project.ID + "!" + f.lab.ID
	notes := f.store.StorageID() + "$" + f.notes.SpaceID + "!" + f.notes.ID
	tests := []struct {
		name, user string
		form       url.Values
		status     int
		v1         int
	}{
		{"unknown user", "einstein", url.Values{"path": {"/Documents"}, "shareType": {"0"}, "shareWith": {"nobody"}}, 404, 998},
		{"a member the configuration names", "einstein", url.Values{"path": {"/Documents"}, "shareType": {"0"}, "shareWith": {"bohr"}}, 200, 100},
		{"a configured group", "einstein", url.Values{"path": {"/Documents"}, "shareType": {"1"}, "shareWith": {"staff"}}, 200, 100},
		{"unknown group", "einstein", url.Values{"path": {"/Documents"}, "shareType": {"1"}, "shareWith": {"nobel"}}, 404, 998},
		{"missing path", "einstein", url.Values{"path": {"/Nothing"}, "shareType": {"3"}}, 404, 998},
		{"the root", "einstein", url.Values{"path": {"/"}, "shareType": {"3"}}, 400, 400},
		{"a file drop on a file", "einstein", url.Values{"path": {"/Documents/notes.txt"}, "shareType": {"3"}, "permissions": {"4"}}, 400, 400},
		{"permissions of no role", "einstein", url.Values{"path": {"/Documents"}, "shareType": {"3"}, "permissions": {"7"}}, 400, 400},
		{"a short password", "einstein", url.Values{"path": {"/Documents"}, "shareType": {"3"}, "password": {"short"}}, 400, 400},
		{"a past expiry", "einstein", url.Values{"path": {"/Documents"}, "shareType": {"3"}, "expireDate": {"2001-01-01"}}, 400, 400},
		{"a bad date", "einstein", url.Values{"path": {"/Documents"}, "shareType": {"3"}, "expireDate": {"soon"}}, 400, 400},
		{"remote share", "einstein", url.Values{"path": {"/Documents"}, "shareType": {"6"}}, 400, 400},
		{"oneself", "einstein", url.Values{"path": {"/Documents/notes.txt"}, "shareType": {"0"}, "shareWith": {"einstein"}}, 400, 400},
		{"a viewer", "richard", url.Values{"space_ref": {lab}, "shareType": {"3"}}, 403, 403},
		{"an editor", "marie", url.Values{"space_ref": {lab}, "shareType": {"3"}}, 200, 100},
		{"another's item", "marie", url.Values{"space_ref": {notes}, "shareType": {"3"}}, 404, 998},
		{"a path too deep", "einstein", url.Values{"path": {strings.Repeat("/Documents/..", storage.MaxPathSegments/2+1) + "/Documents"}, "shareType": {"3"}}, 400, 400},
		{"a path too long", "einstein", url.Values{"path": {"/Documents" + strings.Repeat("/", storage.MaxPathBytes)}, "shareType": {"3"}}, 400, 400},
		{"another storage", "einstein", url.Values{"space_ref": {"other$" + f.project.ID + "!" + f.lab.ID}, "shareType": {"3"}}, 404, 998},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []struct {
				prefix string
				code   int
			}{{"/ocs/v2.php", tc.status}, {"/ocs/v1.php", tc.v1}} {
				w := f.do(tc.user, http.MethodPost, v.prefix+"/apps/files_sharing/api/v1/shares?format=json", tc.form)
				if w.Code != tc.status {
					t.Fatalf("%s: status %d, want %d: %s", v.prefix, w.Code, tc.status, w.Body)
				}
				var a jsonAnswer[json.RawMessage]
				if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || a.OCS.Meta.StatusCode != v.code {
					t.Errorf("%s: statuscode %d, want %d (%v)", v.prefix, a.OCS.Meta.StatusCode, v.code, err)
				}
				if tc.status == 200 && tc.form.Get("shareType") != "3" {
					// The second (v1) share would be the same one.
					break
				}
			}
		})
	}
}

func TestShareListingsHideWhatTheCallerMayNotSee(t *testing.T) {
	f := newShareFixture(t)
	lab := f.store.StorageID() + "$" + f.project.ID + "!" + f.lab.ID
	byMarie := f.create("marie", url.Values{"space_ref": {lab}, "shareType": {"3"}})
	byEinstein := f.create("einstein", url.Values{"space_ref": {lab}, "shareType": {"0"}, "shareWith": {"bohr"}})
	if got := f.list("einstein", "space_ref="+url.QueryEscape(lab)); len(got) != 1 || got[0].ID != byEinstein.ID {
		t.Errorf("einstein's own shares of Lab: %+v", got)
	}
	if got := f.list("einstein", "reshares=true&space_ref="+url.QueryEscape(lab)); len(got) != 2 {
		t.Errorf("every share of Lab: %+v", got)
	}
	folder := f.store.StorageID() + "$" + f.project.ID
	if got := f.list("einstein", "reshares=true&subfiles=true&space_ref="+url.QueryEscape(folder)+"&path=/"); len(got) != 2 {
		t.Errorf("the shares below the space's root: %+v", got)
	}
	if w := f.do("richard", http.MethodGet, sharesURL+"?space_ref="+url.QueryEscape(lab), nil); w.Code != http.StatusForbidden {
		t.Errorf("a viewer lists shares: %d", w.Code)
	}
	if w := f.do("bohr", http.MethodGet, sharesURL+"?space_ref="+url.QueryEscape(lab), nil); w.Code != http.StatusNotFound {
		t.Errorf("a stranger lists shares: %d", w.Code)
	}
	if w := f.do("bohr", http.MethodGet, sharesURL+"/"+byMarie.ID, nil); w.Code != http.StatusNotFound {
		t.Errorf("a stranger reads a link: %d", w.Code)
	}
	// marie loses her role: her link is dead, absent for everybody.
	f.project.Members["marie"] = storage.RoleViewer
	if _, err := f.store.PutSpace(t.Context(), f.project); err != nil {
		t.Fatal(err)
	}
	if got := f.list("einstein", "reshares=true&space_ref="+url.QueryEscape(lab)); len(got) != 1 || got[0].ID != byEinstein.ID {
		t.Errorf("a dead link is listed: %+v", got)
	}
	if w := f.do("einstein", http.MethodGet, sharesURL+"/"+byMarie.ID, nil); w.Code != http.StatusNotFound {
		t.Errorf("a dead link is read: %d", w.Code)
	}
	// An expired share is as dead.
	f.h.sharing.now = func() time.Time { return time.Now().Add(100 * 365 * 24 * time.Hour) }
	expiring := f.create("einstein", url.Values{"path": {"/Documents"}, "shareType": {"3"}, "expireDate": {"2099-01-01"}})
	if got := f.list("einstein", "path=/Documents"); len(got) != 0 {
		t.Errorf("an expired link %s is listed: %+v", expiring.ID, got)
	}
}

func TestSharees(t *testing.T) {
	f := newShareFixture(t)
	type data struct {
		Exact struct {
			Users  []sharee `json:"users"`
			Groups []sharee `json:"groups"`
		} `json:"exact"`
		Users   []sharee `json:"users"`
		Groups  []sharee `json:"groups"`
		Remotes []sharee `json:"remotes"`
	}
	get := func(user, query string) data {
		t.Helper()
		return decodeJSON[data](t, f.do(user, http.MethodGet, "/ocs/v2.php/apps/files_sharing/api/v1/sharees?format=json&itemType=file&"+query, nil), http.StatusOK)
	}
	d := get("einstein", "search=MARIE")
	if len(d.Exact.Users) != 1 || d.Exact.Users[0].Value.ShareWith != "marie" || d.Exact.Users[0].Label != "Marie Curie" ||
		d.Exact.Users[0].Value.ShareWithAdditionalInfo != "marie@example.org" || len(d.Users) != 0 || d.Remotes == nil {
		t.Errorf("search MARIE: %+v", d)
	}
	d = get("einstein", "search=ein")
	if ids := shareeIDs(d.Users); ids != "" {
		t.Errorf("search ein: users %s (the caller is left out)", ids)
	}
	d = get("einstein", "search=phys")
	if ids := shareeIDs(d.Groups); ids != "physics" || d.Groups[0].Value.ShareType != 1 {
		t.Errorf("search phys: groups %+v", d.Groups)
	}
	d = get("einstein", "search=staff")
	if ids := shareeIDs(d.Exact.Groups); ids != "staff" {
		t.Errorf("search staff: exact groups %+v", d.Exact.Groups)
	}
	d = get("marie", "search=ric&perPage=1")
	if ids := shareeIDs(d.Users); ids != "richard" {
		t.Errorf("perPage 1: %s", ids)
	}
	w := f.do("einstein", http.MethodGet, "/ocs/v1.php/apps/files_sharing/api/v1/sharees?search=marie", nil)
	var env struct {
		Meta  meta `xml:"meta"`
		Exact []struct {
			Label     string `xml:"label"`
			ShareType int    `xml:"value>shareType"`
			ShareWith string `xml:"value>shareWith"`
		} `xml:"data>exact>users>element"`
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Meta.StatusCode != 100 || len(env.Exact) != 1 || env.Exact[0].ShareWith != "marie" {
		t.Errorf("XML sharees %+v, %v: %s", env, err, w.Body)
	}
}

func shareeIDs(list []sharee) string {
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.Value.ShareWith
	}
	return strings.Join(ids, ",")
}

func TestSharingMethodsAndAuth(t *testing.T) {
	f := newShareFixture(t)
	if w := f.do("", http.MethodGet, sharesURL, nil); w.Code != http.StatusUnauthorized {
		t.Errorf("anonymous: %d", w.Code)
	}
	if w := f.do("einstein", http.MethodPatch, sharesURL, nil); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("PATCH: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
	if w := f.do("einstein", http.MethodGet, sharesURL+"/a/b", nil); w.Code != http.StatusNotFound {
		t.Errorf("a deeper path: %d", w.Code)
	}
	// Without a store, the sharing API is not served.
	h := newTestHandler(t, false)
	if w := serve(h, http.MethodGet, sharesURL, "X-User", "einstein"); w.Code != http.StatusNotFound {
		t.Errorf("without a store: %d", w.Code)
	}
}

// TestShareesNeedThreeCharacters: a search shorter than Graph's people
// search takes (storage.MinDirectorySearch) lists nobody, rather than
// every user and email to anybody signed in.
func TestShareesNeedThreeCharacters(t *testing.T) {
	f := newShareFixture(t)
	for _, search := range []string{"", "r", "ma", "  ma  ", "é"} {
		w := f.do("richard", http.MethodGet, "/ocs/v2.php/apps/files_sharing/api/v1/sharees?format=json&itemType=file&search="+url.QueryEscape(search), nil)
		body := w.Body.String()
		if w.Code != http.StatusOK || strings.Contains(body, "marie") || strings.Contains(body, "einstein") || strings.Contains(body, "physics") {
			t.Errorf("search %q: %d %s", search, w.Code, body)
		}
	}
	w := f.do("richard", http.MethodGet, "/ocs/v2.php/apps/files_sharing/api/v1/sharees?format=json&search=mar", nil)
	if !strings.Contains(w.Body.String(), "marie@example.org") {
		t.Errorf("search mar: %s", w.Body)
	}
}
