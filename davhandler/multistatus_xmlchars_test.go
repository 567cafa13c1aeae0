package davhandler

import (
	"context"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestMultistatusNeverCarriesNonXMLCharacters stores, behind the handler's
// back, a name and a dead property value XML cannot carry: every listing
// must still parse.
func TestMultistatusNeverCarriesNonXMLCharacters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	space, err := e.store.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	name, wantName := "bad\uFFFE\uFFFF", "bad\uFFFD\uFFFD"
	folder, err := e.store.Mkdir(ctx, space.ID, space.ID, name)
	if err != nil {
		// The store may refuse such names itself; the value still counts.
		name, wantName = "plain", "plain"
		folder, err = e.store.Mkdir(ctx, space.ID, space.ID, name)
	}
	if err != nil {
		t.Fatal(err)
	}
	err = e.store.PatchProps(ctx, space.ID, folder.ID, []storage.PropPatch{{Property: storage.Property{
		Name:  storage.PropName{Space: "urn:x\uFFFE", Local: "p"},
		Value: "<v xmlns=\"urn:y\">\uFFFF\x00</v>",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"", strings.Replace(propfindBody, "%s", "<oc:name/><d:displayname/>", 1)} {
		res := parseMultistatus(t, e.do("einstein", "PROPFIND", "/webdav/", body, "Depth", "1"))
		if len(res) != 2 {
			t.Fatalf("%d responses, want 2", len(res))
		}
		if got := res[1].Props[nsOC+" name"]; got != wantName {
			t.Errorf("oc:name %q", got)
		}
	}
}
