package davhandler

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// TestUnservedProjectSpaceIsAbsent: a project space in the store that the
// handler is not configured to serve answers exactly as a space that does
// not exist, by path and by id, as source and as Destination, even to its
// former members; personal spaces are unaffected.
func TestUnservedProjectSpaceIsAbsent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	retired, err := e.store.PutSpace(ctx, storage.Space{
		ID: "retired", Type: storage.SpaceProject, Name: "Retired", Quota: storage.NoQuota,
		Members: map[string]storage.Role{"einstein": storage.RoleManager},
	})
	if err != nil {
		t.Fatal(err)
	}
	folder, err := e.store.Mkdir(ctx, retired.ID, retired.ID, "d")
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do("einstein", "PUT", "/webdav/mine.txt", "mine"), http.StatusCreated)
	folderID := resourceID(testStorageID, folder)
	paths := []struct{ retired, absent string }{
		{"/dav/spaces/retired", "/dav/spaces/nope"},
		{"/dav/spaces/" + testStorageID + "$retired/d", "/dav/spaces/" + testStorageID + "$nope/d"},
		{"/remote.php/dav/spaces/" + folderID, "/remote.php/dav/spaces/" + strings.Replace(folderID, "retired", "nope", 1)},
		{"/dav/spaces/retired/d/new", "/dav/spaces/nope/d/new"},
	}
	methods := []struct {
		method, body string
		hdr          []string
	}{
		{"PROPFIND", "", []string{"Depth", "1"}},
		{"PROPPATCH", `<d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:x>1</d:x></d:prop></d:set></d:propertyupdate>`, nil},
		{"GET", "", nil},
		{"HEAD", "", nil},
		{"PUT", "data", nil},
		{"MKCOL", "", nil},
		{"DELETE", "", nil},
		{"COPY", "", []string{"Destination", "/webdav/copied"}},
		{"MOVE", "", []string{"Destination", "/webdav/moved"}},
	}
	for _, p := range paths {
		for _, m := range methods {
			t.Run(m.method+" "+p.retired, func(t *testing.T) {
				got := e.do("einstein", m.method, p.retired, m.body, m.hdr...)
				want := e.do("einstein", m.method, p.absent, m.body, m.hdr...)
				wantStatus(t, got, http.StatusNotFound)
				if got.Body.String() != want.Body.String() {
					t.Fatalf("told apart from an absent space:\n%s\n%s", got.Body.String(), want.Body.String())
				}
			})
		}
	}
	for _, dst := range []string{"/dav/spaces/retired/x", "/dav/spaces/" + folderID + "/x", "/dav/spaces/" + folderID} {
		for _, method := range []string{"COPY", "MOVE"} {
			t.Run(method+" to "+dst, func(t *testing.T) {
				got := e.do("einstein", method, "/webdav/mine.txt", "", "Destination", escapePath(dst))
				want := e.do("einstein", method, "/webdav/mine.txt", "", "Destination", escapePath(strings.ReplaceAll(dst, "retired", "nope")))
				wantStatus(t, got, http.StatusNotFound)
				if got.Body.String() != want.Body.String() {
					t.Fatalf("told apart from an absent space:\n%s\n%s", got.Body.String(), want.Body.String())
				}
			})
		}
	}
	if _, err := e.store.Child(ctx, retired.ID, folder.ID, "new"); err == nil {
		t.Fatal("a request created a file in the unserved space")
	}
	if n, err := e.store.Node(ctx, retired.ID, folder.ID); err != nil || n.Name != "d" {
		t.Fatalf("the unserved space changed: %v %+v", err, n)
	}
	// The served spaces still work.
	wantStatus(t, e.do("einstein", "PROPFIND", "/dav/spaces/physics", "", "Depth", "0"), http.StatusMultiStatus)
	wantStatus(t, e.do("einstein", "GET", "/webdav/mine.txt", ""), http.StatusOK)
}

// TestNewTargetIsLinear: the target of a path far longer than a request
// may name is built in time linear in its length: a path is joined once,
// not copied again for each of its segments.
func TestNewTargetIsLinear(t *testing.T) {
	segments := strings.Split(strings.Repeat("a/", 128<<10)+"f", "/")
	root := storage.Node{ID: "root", Kind: storage.KindFolder}
	dp := davPath{base: "/webdav", segments: segments}
	before, ok := processCPUTime()
	if !ok {
		t.Skip("no CPU time on this platform")
	}
	tg := newTarget(storage.Space{ID: "s"}, access{}, dp, []storage.Node{root})
	spent, _ := processCPUTime()
	if want := "/webdav/" + strings.Join(segments, "/"); tg.hrefPath != want || tg.name != "f" || tg.exists || tg.hasParent {
		t.Fatalf("target %q (name %q, exists %v, has parent %v)", tg.hrefPath[:32], tg.name, tg.exists, tg.hasParent)
	}
	// Quadratic, it copied 17 GB: seconds of CPU.
	if spent -= before; spent > 500*time.Millisecond {
		t.Fatalf("a path of %d segments took %v of CPU", len(segments), spent)
	}
}

// TestMalformedResourceIDs: an id in a path that is no resource id (an
// empty part, or a separator inside one; resourceid.Parse) is a 400, the
// answer a missing space id already got, and not the 404 of a space that
// cannot exist; a well-formed id of the same item is served, and so is a
// space's reference with an empty node ("…!"), which oCIS reads as the
// space's root.
func TestMalformedResourceIDs(t *testing.T) {
	e := newEnv(t)
	fileID := e.putFile("einstein", "/webdav/f.txt", "x")
	spaceRef, _, _ := strings.Cut(fileID, "!")
	wantStatus(t, e.do("einstein", "PROPFIND", "/dav/spaces/"+spaceRef+"/f.txt", "", "Depth", "0"), http.StatusMultiStatus)
	wantStatus(t, e.do("einstein", "PROPFIND", "/dav/spaces/"+fileID, "", "Depth", "0"), http.StatusMultiStatus)
	wantStatus(t, e.do("einstein", "PROPFIND", "/dav/spaces/"+spaceRef+"!/f.txt", "", "Depth", "0"), http.StatusMultiStatus)
	for _, path := range []string{
		"/dav/spaces/" + spaceRef + "$x/f.txt",
		"/dav/spaces/" + fileID + "!x",
		"/dav/spaces/" + fileID + "$x",
		"/dav/spaces/" + testStorageID + "$!x",
		"/dav/meta/" + fileID + "!x",
		"/dav/spaces/trash-bin/" + spaceRef + "$x",
	} {
		t.Run(path, func(t *testing.T) {
			wantError(t, e.do("einstein", "PROPFIND", path, "", "Depth", "0"), http.StatusBadRequest, exceptions[http.StatusBadRequest], "Invalid space id")
		})
	}
}
