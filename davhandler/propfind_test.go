package davhandler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

func TestPropfindDepth(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name    string
		depth   []string
		infOK   bool
		status  int
		message string
	}{
		{"zero", []string{"Depth", "0"}, false, http.StatusMultiStatus, ""},
		{"one", []string{"Depth", "1"}, false, http.StatusMultiStatus, ""},
		{"invalid", []string{"Depth", "3"}, false, http.StatusBadRequest, "Invalid Depth header value: 3"},
		{"infinity disabled", []string{"Depth", "infinity"}, false, http.StatusBadRequest, "Depth infinity is disabled"},
		{"missing means infinity", nil, false, http.StatusBadRequest, "Depth infinity is disabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do("einstein", "PROPFIND", "/webdav/", "", tt.depth...)
			if tt.status != http.StatusMultiStatus {
				wantError(t, rec, tt.status, "BadRequest", tt.message)
				return
			}
			wantStatus(t, rec, tt.status)
		})
	}
}

func TestPropfindDepthInfinityStreamsWholeTree(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AllowDepthInfinity = true })
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/a", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/a/b", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/a/b/c.txt", "c"), http.StatusCreated)
	res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/", "", "Depth", "infinity"))
	var hrefs []string
	for _, r := range res {
		hrefs = append(hrefs, r.Href)
	}
	want := []string{"/webdav/", "/webdav/a/", "/webdav/a/b/", "/webdav/a/b/c.txt"}
	if !slices.Equal(hrefs, want) {
		t.Fatalf("hrefs %q, want %q", hrefs, want)
	}
}

func TestPropfindBadBodies(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxXMLBytes = 512 })
	tests := map[string]struct {
		body   string
		status int
	}{
		"not xml":                {"this is not xml", http.StatusBadRequest},
		"unclosed":               {`<d:propfind xmlns:d="DAV:"><d:prop>`, http.StatusBadRequest},
		"wrong root":             {`<d:foo xmlns:d="DAV:"/>`, http.StatusBadRequest},
		"prop and allprop":       {`<d:propfind xmlns:d="DAV:"><d:prop/><d:allprop/></d:propfind>`, http.StatusBadRequest},
		"empty namespace prefix": {`<d:propfind xmlns:d="DAV:"><d:prop><x:a xmlns:x=""/></d:prop></d:propfind>`, http.StatusBadRequest},
		"too large":              {`<d:propfind xmlns:d="DAV:"><d:prop>` + strings.Repeat("<d:getetag/>", 100) + `</d:prop></d:propfind>`, http.StatusRequestEntityTooLarge},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			rec := e.do("einstein", "PROPFIND", "/webdav/", tt.body, "Depth", "0")
			exception := "BadRequest"
			if tt.status == http.StatusRequestEntityTooLarge {
				exception = "RequestEntityTooLarge"
			}
			wantError(t, rec, tt.status, exception, "")
		})
	}
}

func TestPropfindProperties(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/folder", ""), http.StatusCreated)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/folder/12345.txt", "12345"), http.StatusCreated)
	props := `<d:getetag/><d:getlastmodified/><d:getcontenttype/><d:getcontentlength/><d:resourcetype/>` +
		`<d:quota-used-bytes/><d:quota-available-bytes/><d:displayname/><oc:id/><oc:fileid/><oc:spaceid/>` +
		`<oc:file-parent/><oc:name/><oc:permissions/><oc:size/><oc:checksums/><oc:favorite/><oc:owner-id/>` +
		`<oc:owner-display-name/><oc:privatelink/><oc:share-types/><x:unknown xmlns:x="urn:x"/>`
	res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/folder", fmt.Sprintf(propfindBody, props), "Depth", "1"))
	if len(res) != 2 {
		t.Fatalf("%d responses, want 2", len(res))
	}
	folder, file := res[0], res[1]
	if folder.Href != "/webdav/folder/" || file.Href != "/webdav/folder/12345.txt" {
		t.Fatalf("hrefs %q %q", folder.Href, file.Href)
	}
	checks := []struct {
		r     msResponse
		prop  string
		value string // "" with found=false means 404
		found bool
	}{
		{folder, "DAV: resourcetype", "<d:collection/>", true},
		{folder, "DAV: quota-used-bytes", "5", true},
		{folder, "DAV: quota-available-bytes", "-3", true},
		{folder, "http://owncloud.org/ns size", "5", true},
		{folder, "http://owncloud.org/ns permissions", "RDNVCKZP", true},
		{folder, "DAV: getcontentlength", "", false},
		{folder, "DAV: getcontenttype", "", false},
		{folder, "http://owncloud.org/ns checksums", "", false},
		{file, "DAV: getcontentlength", "5", true},
		{file, "DAV: getcontenttype", "text/plain; charset=utf-8", true},
		{file, "http://owncloud.org/ns permissions", "RDNVWZP", true},
		{file, "http://owncloud.org/ns name", "12345.txt", true},
		{file, "DAV: displayname", "12345.txt", true},
		{file, "http://owncloud.org/ns checksums", "<oc:checksum>SHA1:8cb2237d0679ca88db6464eac60da96345513964 MD5:827ccb0eea8a706c4c34a16891f84e7b ADLER32:02f80100</oc:checksum>", true},
		{file, "http://owncloud.org/ns favorite", "0", true},
		{file, "http://owncloud.org/ns owner-id", "einstein", true},
		{file, "DAV: quota-used-bytes", "", false},
		{file, "http://owncloud.org/ns share-types", "", false},
		{file, "urn:x unknown", "", false},
	}
	for _, c := range checks {
		got, ok := c.r.Props[c.prop]
		if ok != c.found || (c.found && got != c.value) {
			t.Errorf("%s %s = %q (found %v), want %q (found %v)", c.r.Href, c.prop, got, ok, c.value, c.found)
		}
		if !c.found && !slices.Contains(c.r.NotFound, c.prop) {
			t.Errorf("%s %s not in the 404 propstat", c.r.Href, c.prop)
		}
	}
	if !etagPattern.MatchString(file.Props["DAV: getetag"]) {
		t.Errorf("etag %q", file.Props["DAV: getetag"])
	}
	if !strings.HasSuffix(file.Props["DAV: getlastmodified"], " GMT") {
		t.Errorf("getlastmodified %q", file.Props["DAV: getlastmodified"])
	}
	id := file.Props["http://owncloud.org/ns id"]
	if id == "" || id != file.Props["http://owncloud.org/ns fileid"] || !strings.HasPrefix(id, testStorageID+"$") || !strings.Contains(id, "!") {
		t.Errorf("oc:id %q oc:fileid %q", id, file.Props["http://owncloud.org/ns fileid"])
	}
	if file.Props["http://owncloud.org/ns file-parent"] != folder.Props["http://owncloud.org/ns id"] {
		t.Errorf("file-parent %q, folder id %q", file.Props["http://owncloud.org/ns file-parent"], folder.Props["http://owncloud.org/ns id"])
	}
	if want := "http://example.com/f/" + strings.ReplaceAll(id, "!", "%21"); file.Props["http://owncloud.org/ns privatelink"] != want {
		t.Errorf("privatelink %q, want %q", file.Props["http://owncloud.org/ns privatelink"], want)
	}
}

func TestPropfindSpacesHrefs(t *testing.T) {
	e := newEnv(t)
	base := e.personalSpacePath("einstein")
	wantStatus(t, e.do("einstein", "PUT", base+"/a b.txt", "x"), http.StatusCreated)
	res := parseMultistatus(t, e.do("einstein", "PROPFIND", base, fmt.Sprintf(propfindBody, "<oc:id/>"), "Depth", "1"))
	if len(res) != 2 || res[0].Href != base+"/" || res[1].Href != base+"/a%20b.txt" {
		t.Fatalf("hrefs: %+v", res)
	}
	// Addressed by its file id, the file's href keeps the id with "!" escaped.
	id := res[1].Props["http://owncloud.org/ns id"]
	byID := parseMultistatus(t, e.do("einstein", "PROPFIND", "/remote.php/dav/spaces/"+id, "", "Depth", "0"))
	if want := "/remote.php/dav/spaces/" + strings.ReplaceAll(id, "!", "%21"); byID[0].Href != want {
		t.Fatalf("href %q, want %q", byID[0].Href, want)
	}
	if byID[0].Props["http://owncloud.org/ns name"] != "a b.txt" {
		t.Fatalf("by id: %+v", byID[0])
	}
	// %24 is the same as $.
	wantStatus(t, e.do("einstein", "PROPFIND", strings.Replace(base, "$", "%24", 1), "", "Depth", "0"), http.StatusMultiStatus)
}

// TestPropfindOfTheFilesRoot: /dav/files/ names no user. A PROPFIND with
// a Depth there is the user's own files, as oCIS answers it and as the
// ownCloud apps check their token with it (Android's
// GetBaseUrlRemoteOperation.kt, the iOS connection validator); without a
// Depth, and for every other method, it stays 405.
func TestPropfindOfTheFilesRoot(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "x"), http.StatusCreated)
	for _, tt := range []struct {
		name, method, path string
		hdr                []string
		status             int
		hrefs              []string
	}{
		{"depth 0", "PROPFIND", "/remote.php/dav/files/", []string{"Depth", "0"}, http.StatusMultiStatus, []string{"/remote.php/dav/files/einstein/"}},
		{"depth 1 without the slash", "PROPFIND", "/dav/files", []string{"Depth", "1"}, http.StatusMultiStatus, []string{"/dav/files/einstein/", "/dav/files/einstein/f.txt"}},
		{"no depth", "PROPFIND", "/remote.php/dav/files/", nil, http.StatusMethodNotAllowed, nil},
		{"delete", "DELETE", "/remote.php/dav/files/", []string{"Depth", "infinity"}, http.StatusMethodNotAllowed, nil},
		{"mkcol", "MKCOL", "/dav/files/", []string{"Depth", "0"}, http.StatusMethodNotAllowed, nil},
		{"move", "MOVE", "/dav/files/", []string{"Depth", "infinity", "Destination", "/dav/files/einstein/x"}, http.StatusMethodNotAllowed, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := e.do("einstein", tt.method, tt.path, "", tt.hdr...)
			if tt.status != http.StatusMultiStatus {
				wantError(t, rec, tt.status, "MethodNotAllowed", "Listing members of this collection is disabled")
				return
			}
			if got := hrefsOf(parseMultistatus(t, rec)); !slices.Equal(got, tt.hrefs) {
				t.Fatalf("hrefs %q, want %q", got, tt.hrefs)
			}
		})
	}
	wantStatus(t, e.do("einstein", "GET", "/webdav/f.txt", ""), http.StatusOK)
	// Without a user it is 405 still, before any sign-in is asked for.
	wantStatus(t, e.do("", "PROPFIND", "/dav/files/", "", "Depth", "0"), http.StatusMethodNotAllowed)
}

func TestPropfindAllpropAndPropname(t *testing.T) {
	e := newEnv(t)
	wantStatus(t, e.do("einstein", "PUT", "/webdav/f.txt", "x"), http.StatusCreated)
	set := `<d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:z"><d:set><d:prop><z:color>blue</z:color></d:prop></d:set></d:propertyupdate>`
	wantStatus(t, e.do("einstein", "PROPPATCH", "/webdav/f.txt", set), http.StatusMultiStatus)
	for _, body := range []string{"", `<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>`} {
		res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/f.txt", body, "Depth", "0"))
		if res[0].Props["urn:z color"] != "blue" || res[0].Props["DAV: getcontentlength"] != "1" || len(res[0].NotFound) != 0 {
			t.Fatalf("allprop %q: %+v", body, res[0])
		}
	}
	res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/f.txt", `<d:propfind xmlns:d="DAV:"><d:propname/></d:propfind>`, "Depth", "0"))
	if v, ok := res[0].Props["urn:z color"]; !ok || v != "" {
		t.Fatalf("propname: %+v", res[0])
	}
}

func TestPropfindNotFound(t *testing.T) {
	e := newEnv(t)
	wantError(t, e.do("einstein", "PROPFIND", "/webdav/missing", "", "Depth", "0"), http.StatusNotFound, "NotFound", "Resource not found")
	wantError(t, e.do("einstein", "PROPFIND", "/dav/nothing", "", "Depth", "0"), http.StatusNotFound, "NotFound", "File not found in root")
	wantError(t, e.do("einstein", "PROPFIND", "/dav/spaces", "", "Depth", "0"), http.StatusMethodNotAllowed, "MethodNotAllowed", "")
}

// desktopPropfind is the property set the ownCloud desktop client lists
// folders with.
const desktopPropfind = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
	`<d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getetag/><oc:size/><oc:id/><oc:fileid/>` +
	`<oc:downloadURL/><oc:dDC/><oc:permissions/><oc:checksums/><oc:favorite/><oc:share-types/><oc:data-fingerprint/>` +
	`</d:prop></d:propfind>`

// TestPropfindWhileChildrenChurn: listings that need dead properties or
// favourites stay complete and well-formed while children are deleted and
// re-created: every 207 parses and lists every child that existed
// throughout.
func TestPropfindWhileChildrenChurn(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AllowDepthInfinity = true })
	ctx := context.Background()
	space, err := e.store.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("einstein", "MKCOL", "/webdav/d", ""), http.StatusCreated)
	var stable []string
	for i := range 8 {
		name := fmt.Sprintf("stable%d", i)
		wantStatus(t, e.do("einstein", "MKCOL", "/webdav/d/"+name, ""), http.StatusCreated)
		stable = append(stable, "/webdav/d/"+name+"/")
	}
	folder, err := e.store.Child(ctx, space.ID, space.ID, "d")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var churner sync.WaitGroup
	churner.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := churn(ctx, e.store, space.ID, folder.ID, fmt.Sprintf("churn%d", i%6)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	defer churner.Wait()
	defer close(stop)
	bodies := []string{"", desktopPropfind, `<d:propfind xmlns:d="DAV:"><d:propname/></d:propfind>`}
	for i := range 90 {
		depth := []string{"1", "infinity"}[i%2]
		rec := e.do("einstein", "PROPFIND", "/webdav/d", bodies[i%len(bodies)], "Depth", depth)
		var hrefs []string
		for _, r := range parseMultistatus(t, rec) {
			hrefs = append(hrefs, r.Href)
		}
		for _, want := range stable {
			if !slices.Contains(hrefs, want) {
				t.Fatalf("listing %d (Depth %s) lacks %s: %q", i, depth, want, hrefs)
			}
		}
	}
}

// churn deletes a child folder (with a file and a dead property) if it is
// there and creates it again.
func churn(ctx context.Context, store storage.Store, spaceID, folderID, name string) error {
	if old, err := store.Child(ctx, spaceID, folderID, name); err == nil {
		if err := store.Remove(ctx, spaceID, old.ID, storage.Conditions{}); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
	}
	n, err := store.Mkdir(ctx, spaceID, folderID, name)
	if err != nil {
		return err
	}
	if _, err := store.Mkdir(ctx, spaceID, n.ID, "inner"); err != nil {
		return err
	}
	return store.PatchProps(ctx, spaceID, n.ID, []storage.PropPatch{
		{Property: storage.Property{Name: storage.PropName{Space: "urn:z", Local: "color"}, Value: "red"}},
		{Property: storage.Property{Name: storage.PropName{Space: nsOC, Local: "favorite"}, User: "einstein", Value: "1"}},
	})
}

// TestPropfindReadsPropsWithThePage: a listing reads each page of children
// with their dead properties in one call when it needs them, and never
// reads properties when it does not.
func TestPropfindReadsPropsWithThePage(t *testing.T) {
	tests := []struct {
		name, body string
		want       map[string]int
	}{
		{"allprop", "", map[string]int{"ReadDirProps": 1, "Props": 1}},
		{"desktop client", desktopPropfind, map[string]int{"ReadDirProps": 1, "Props": 1}},
		{"favourite only", fmt.Sprintf(propfindBody, "<oc:favorite/>"), map[string]int{"ReadDirProps": 1, "Props": 1}},
		{"dead property", fmt.Sprintf(propfindBody, `<z:color xmlns:z="urn:z"/>`), map[string]int{"ReadDirProps": 1, "Props": 1}},
		{"propname", `<d:propfind xmlns:d="DAV:"><d:propname/></d:propfind>`, map[string]int{"ReadDirProps": 1, "Props": 1}},
		{"live only", fmt.Sprintf(propfindBody, "<d:getetag/><oc:id/><oc:size/><oc:permissions/>"), map[string]int{"ReadDir": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := &failingStore{}
			e := newEnv(t, withFailingStore(fs))
			for _, name := range []string{"a", "b", "c"} {
				wantStatus(t, e.do("einstein", "PUT", "/webdav/"+name, name), http.StatusCreated)
			}
			fs.calls = nil
			if res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/", tt.body, "Depth", "1")); len(res) != 4 {
				t.Fatalf("%d responses, want 4", len(res))
			}
			if !maps.Equal(fs.calls, tt.want) {
				t.Fatalf("store calls %v, want %v", fs.calls, tt.want)
			}
		})
	}
}

// TestPropfindRootQuotaFromOneRead: the size and the free quota of a space
// root describe the same moment, even while a file is added.
func TestPropfindRootQuotaFromOneRead(t *testing.T) {
	fs := &failingStore{}
	e := newEnv(t, withFailingStore(fs))
	setQuota(t, e, 10)
	wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/a", "123456"), http.StatusCreated)
	fs.afterNode = func() {
		fs.afterNode = nil
		wantStatus(t, e.do("einstein", "PUT", "/dav/spaces/physics/b", "123"), http.StatusCreated)
	}
	res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/dav/spaces/physics", fmt.Sprintf(propfindBody, "<d:quota-used-bytes/><d:quota-available-bytes/>"), "Depth", "0"))
	used, avail := res[0].Props["DAV: quota-used-bytes"], res[0].Props["DAV: quota-available-bytes"]
	if used+"+"+avail != "6+4" && used+"+"+avail != "9+1" {
		t.Fatalf("used %s + available %s is not the quota 10", used, avail)
	}
}

// TestChildHref checks the shortcut for plain names against escaping the
// whole path.
func TestChildHref(t *testing.T) {
	for _, name := range []string{"file-00001.txt", "a_b~c.d", "with space", "100%", "ü", "a&b", "a;b,c=d", "*", "a?b", "a#b", "..", "UPPER"} {
		for _, kind := range []storage.Kind{storage.KindFile, storage.KindFolder} {
			n := storage.Node{Name: name, Kind: kind}
			want := "/remote.php/webdav/dir" + escapePath("/"+name)
			if kind == storage.KindFolder {
				want += "/"
			}
			if got := childHref("/remote.php/webdav/dir", n).String(); got != want {
				t.Errorf("%q (%v): %q, want %q", name, kind, got, want)
			}
		}
	}
}

// TestPropfindListsEveryPage lists folders whose sizes fall on either side
// of the page boundaries: every child comes once, in name order, whether
// the page is read with properties or without.
func TestPropfindListsEveryPage(t *testing.T) {
	e := newEnvWith(t, boltstore.Options{NoSync: true})
	ctx := context.Background()
	space, err := e.store.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{0, 1, firstReadDirPage - 1, firstReadDirPage, firstReadDirPage + 1,
		firstReadDirPage + readDirPage, firstReadDirPage + readDirPage + 1}
	for _, size := range sizes {
		folder, err := e.store.Mkdir(ctx, space.ID, space.ID, fmt.Sprint("n", size))
		if err != nil {
			t.Fatal(err)
		}
		for i := range size {
			putFile(t, e.store, space.ID, folder.ID, fmt.Sprintf("f%04d", i))
		}
	}
	for _, body := range []struct{ name, xml string }{
		{"with properties", desktopPropfind},
		{"live only", fmt.Sprintf(propfindBody, "<d:getetag/>")},
	} {
		for _, size := range sizes {
			t.Run(fmt.Sprint(body.name, " ", size), func(t *testing.T) {
				folder := fmt.Sprint("/webdav/n", size, "/")
				res := parseMultistatus(t, e.do("einstein", "PROPFIND", folder, body.xml, "Depth", "1"))
				want := []string{folder}
				for i := range size {
					want = append(want, fmt.Sprintf("%sf%04d", folder, i))
				}
				var got []string
				for _, r := range res {
					got = append(got, r.Href)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%d hrefs, want %d: first %q, last %q", len(got), len(want), got[:min(2, len(got))], got[max(0, len(got)-2):])
				}
			})
		}
	}
}

func putFile(t testing.TB, store storage.Store, spaceID, parentID, name string) {
	t.Helper()
	ctx := context.Background()
	up, err := store.NewUpload(ctx, spaceID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(up, name); err != nil {
		t.Fatal(err)
	}
	if _, _, err := up.Commit(ctx, storage.Commit{ParentID: parentID, Name: name}); err != nil {
		t.Fatal(err)
	}
}
