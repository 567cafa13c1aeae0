package davhandler

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

const linkPropsBody = `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
	`<oc:public-link-permission/><oc:public-link-item-type/><oc:public-link-share-owner/></d:prop></d:propfind>`

// TestLinkProps: through a link, its root tells the link's OCS bits (a
// file drop's 4 tells it from an upload link, whose letters are alike),
// whether its item is a file or a folder, and who made it; outside a link
// the properties are absent.
func TestLinkProps(t *testing.T) {
	e := newLinkEnv(t)
	file, err := e.store.Child(context.Background(), "physics", e.shared.ID, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		item     storage.Node
		role     storage.ShareRole
		bits     string
		itemType string
	}{
		{e.shared, storage.ShareViewer, "1", "folder"},
		{e.shared, storage.ShareUploader, "5", "folder"},
		{e.shared, storage.ShareEditor, "15", "folder"},
		{e.shared, storage.ShareFileDrop, "4", "folder"},
		{file, storage.ShareViewer, "1", "file"},
	} {
		l := e.linkOn(tc.item, tc.role, "", time.Time{})
		rs := parseMultistatus(t, e.public("", "PROPFIND", linkPath(l, ""), linkPropsBody, "Depth", "0"))
		if len(rs) != 1 {
			t.Fatalf("role %d: %d responses", tc.role, len(rs))
		}
		for name, want := range map[string]string{"public-link-permission": tc.bits, "public-link-item-type": tc.itemType, "public-link-share-owner": "einstein"} {
			if got := rs[0].Props[nsOC+" "+name]; got != want {
				t.Errorf("role %d on %s: oc:%s %q, want %q", tc.role, tc.item.Name, name, got, want)
			}
		}
	}
	rec := e.do("einstein", "PROPFIND", "/dav/spaces/physics/shared", linkPropsBody, "Depth", "0")
	wantStatus(t, rec, http.StatusMultiStatus)
	for _, r := range parseMultistatus(t, rec) {
		for _, name := range []string{"public-link-permission", "public-link-item-type", "public-link-share-owner"} {
			if got, ok := r.Props[nsOC+" "+name]; ok {
				t.Errorf("a member's PROPFIND has oc:%s %q", name, got)
			}
		}
	}
}

// TestLinkIDsNameNoSpace: the ids a link's visitor sees (oc:id, oc:fileid,
// oc:spaceid, oc:file-parent, OC-FileId) are in oCIS' space of public
// links, never the item's own space, whose id ("physics" here) may be its
// name; no private link and no parent above the link's item are shown.
// A member still sees the space's own ids.
func TestLinkIDsNameNoSpace(t *testing.T) {
	e := newLinkEnv(t)
	l := e.link(storage.ShareEditor, "")
	const body = `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>` +
		`<oc:id/><oc:fileid/><oc:spaceid/><oc:file-parent/><oc:privatelink/><oc:name/></d:prop></d:propfind>`
	for _, pf := range []string{body, `<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>`} {
		rec := e.public("", "PROPFIND", linkPath(l, "/"), pf, "Depth", "1")
		wantStatus(t, rec, http.StatusMultiStatus)
		if strings.Contains(rec.Body.String(), "physics") {
			t.Fatalf("a link's PROPFIND names the space:\n%s", rec.Body)
		}
		rs := parseMultistatus(t, rec)
		if len(rs) != 3 {
			t.Fatalf("%d responses", len(rs))
		}
		for _, r := range rs {
			if got := r.Props[nsOC+" spaceid"]; got != publicLinkSpaceRef {
				t.Errorf("%s: oc:spaceid %q", r.Href, got)
			}
			if id := r.Props[nsOC+" fileid"]; !strings.HasPrefix(id, publicLinkSpaceRef+"!") || r.Props[nsOC+" id"] != id {
				t.Errorf("%s: oc:fileid %q, oc:id %q", r.Href, id, r.Props[nsOC+" id"])
			}
		}
		root := rs[0]
		if got := root.Props[nsOC+" fileid"]; got != publicLinkSpaceRef+"!"+e.shared.ID {
			t.Errorf("the link's item: oc:fileid %q", got)
		}
		if parent, ok := root.Props[nsOC+" file-parent"]; ok {
			t.Errorf("the link's item has a parent: %q", parent)
		}
		if got := rs[1].Props[nsOC+" file-parent"]; pf == body && got != publicLinkSpaceRef+"!"+e.shared.ID {
			t.Errorf("%s: oc:file-parent %q", rs[1].Href, got)
		}
	}
	for _, rec := range []*httptest.ResponseRecorder{
		e.public("", http.MethodGet, linkPath(l, "/a.txt"), ""),
		e.public("", http.MethodPut, linkPath(l, "/b.txt"), "beta"),
		e.public("", "MKCOL", linkPath(l, "/new"), ""),
	} {
		if id := rec.Header().Get("OC-FileId"); rec.Code >= 300 || !strings.HasPrefix(id, publicLinkSpaceRef+"!") {
			t.Errorf("through a link: %d, OC-FileId %q", rec.Code, id)
		}
	}
	rec := e.do("einstein", "PROPFIND", "/dav/spaces/physics/shared", `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:spaceid/></d:prop></d:propfind>`, "Depth", "0")
	if rs := parseMultistatus(t, rec); len(rs) != 1 || !strings.HasSuffix(rs[0].Props[nsOC+" spaceid"], "$physics") {
		t.Errorf("a member's oc:spaceid: %s", rec.Body)
	}
}
