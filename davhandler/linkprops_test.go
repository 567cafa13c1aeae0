package davhandler

import (
	"context"
	"net/http"
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
