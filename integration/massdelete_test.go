package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// massDeleteFiles is how many files the desktop client deletes: twice the
// default threshold of 1000.
const massDeleteFiles = 2000

// testMassDeleteDesktop is the mass delete of nextcloud/desktop#8953 with
// the real nextcloudcmd: a folder of 2,000 small files goes up (by bulk
// upload), its files are removed locally and the next pass deletes them
// on the server; that is one mass-delete event, which the page shows the
// user in a banner (and a manager of Physics the event of marie's client
// there), with screenshots at desktop and phone width. One click on
// "Restore all" brings all 2,000 back with their file ids, and the next
// pass brings them back to the client byte for byte.
func testMassDeleteDesktop(t *testing.T) {
	t.Parallel()
	binary := requirePeer(t, "nextcloudcmd")
	chromium, dir := requireBrowser(t)
	s := startServer(t, serverOptions{tls: true, davspaces: []string{"bulk_upload all"}})
	d := newDesktopSession(t, s, desktopClient{program: "nextcloudcmd", folder: "Documents"}, binary)
	local := filepath.Join(t.TempDir(), "documents")
	tree := massDeleteTree(massDeleteFiles)
	writeDesktopTree(t, local, tree)
	d.syncAndCheck("upload", local)
	ids := d.fileIDs("data")
	if len(ids) != massDeleteFiles {
		t.Fatalf("the server lists %d files in data, want %d", len(ids), massDeleteFiles)
	}

	removeLocalFiles(t, filepath.Join(local, "data"))
	d.syncAndCheck("delete", local)
	personal := d.dav.prop("/webdav/", ocNS, "spaceid")
	events := massDeleteEvents(t, d.dav, personal)
	if len(events) != 1 || events[0].Files != massDeleteFiles || events[0].State != "open" {
		t.Fatalf("mass deletes of the personal space: %+v; want one open event of %d files", events, massDeleteFiles)
	}
	if client := events[0].Client; !strings.Contains(strings.ToLower(client), "einstein's nextcloud") {
		t.Errorf("the event's client is %q, want einstein's Nextcloud client", client)
	}

	physics := projectSpaceRef(personal, "Physics")
	marieDeletesInPhysics(t, s, d.dav, physics)

	opts := massDeletePageOptions{
		browserSession:          newBrowserSession(t, chromium, s.URL, desktopUser, users[desktopUser]),
		IgnoreCertificateErrors: true,
		Views: []massDeleteView{
			{Name: "user", URL: "/dav/spaces/" + url.PathEscape(personal) + "/Documents/", Expect: "deleted 2,000 files in Personal"},
			{Name: "manager", URL: "/dav/spaces/" + url.PathEscape(physics) + "/", Expect: "marie's rclone deleted 100 files in Physics"},
		},
	}
	events2 := runDrive(t, dir, "massdelete.mjs", opts)
	if got := eventValue(events2, "restored", "text"); !strings.Contains(got, "Restored 2,000 items") {
		t.Errorf("the page said %q after Restore all", got)
	}
	if got := eventValue(events2, "banner gone", "name"); got != "user" {
		t.Errorf("the banner stayed after the restore")
	}

	restored := d.fileIDs("data")
	for name, id := range ids {
		if restored[name] != id {
			t.Errorf("%s came back with id %q, want %q", name, restored[name], id)
		}
	}
	d.syncAndCheck("restored", local)
	expected := filepath.Join(t.TempDir(), "expected")
	writeDesktopTree(t, expected, tree)
	for _, diff := range diffTrees(readLocalTree(t, expected), readLocalTree(t, local), "the tree uploaded", "the local folder") {
		t.Error(diff)
	}
}

// TestMassDeleteDesktopHold is mass_delete's hold with the real
// nextcloudcmd: of 300 files removed locally, the server deletes those up
// to the threshold (100) and not one more, though the client sends them
// side by side, answers its further deletes 503 with Retry-After, and
// deletes nothing more in the next pass either.
func TestMassDeleteDesktopHold(t *testing.T) {
	t.Parallel()
	binary := requirePeer(t, "nextcloudcmd")
	s := startServer(t, serverOptions{tls: true, davspaces: []string{
		"bulk_upload all", "mass_delete {", "files 100", "share off", "hold", "}",
	}})
	d := newDesktopSession(t, s, desktopClient{program: "nextcloudcmd", folder: "Documents"}, binary)
	local := filepath.Join(t.TempDir(), "documents")
	const files, threshold = 300, 100
	writeDesktopTree(t, local, massDeleteTree(files))
	d.syncAndCheck("upload", local)

	removeLocalFiles(t, filepath.Join(local, "data"))
	d.syncPass("held delete", local)
	left := len(d.fileIDs("data"))
	if deleted := files - left; deleted != threshold {
		t.Fatalf("the server deleted %d of the %d files, want %d", deleted, files, threshold)
	}
	held := 0
	if err := scanLog(d.lastLog, func(line string) {
		if strings.Contains(line, "503") && strings.Contains(line, "DELETE") {
			held++
		}
	}); err != nil {
		t.Fatal(err)
	}
	if held == 0 {
		t.Errorf("no DELETE of nextcloudcmd was answered 503:\n%s", desktopLogExcerpt(d.lastLog))
	}

	d.syncPass("held again", local)
	if again := len(d.fileIDs("data")); again != left {
		t.Errorf("a second pass of the held client left %d files, want %d: nothing more is deleted", again, left)
	}
	events := massDeleteEvents(t, d.dav, d.dav.prop("/webdav/", ocNS, "spaceid"))
	if len(events) != 1 || events[0].State != "open" || events[0].Files != int64(files-left) {
		t.Errorf("mass deletes: %+v; want one open event of the %d files deleted", events, files-left)
	}
}

// massDeleteTree is n small files in the folder data, and a file beside
// it, so that the client does not take the deletion for a whole space
// emptied.
func massDeleteTree(n int) map[string][]byte {
	tree := map[string][]byte{"keep.txt": []byte("kept\n")}
	for i := range n {
		tree[fmt.Sprintf("data/file-%04d.txt", i)] = fmt.Appendf(nil, "file %d of a mass delete\n", i)
	}
	return tree
}

// removeLocalFiles removes the files of dir, keeping dir.
func removeLocalFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// fileIDs are the oc:fileid of the files in folder of the synced folder,
// by name.
func (d *desktopSession) fileIDs(folder string) map[string]string {
	d.t.Helper()
	body := `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:fileid/><d:resourcetype/></d:prop></d:propfind>`
	ids := map[string]string{}
	for _, r := range d.dav.propfind(d.davPath(folder)+"/", "1", body) {
		if strings.Contains(r.props["DAV: resourcetype"], "collection") {
			continue
		}
		name, _ := url.PathUnescape(r.href[strings.LastIndex(r.href, "/")+1:])
		ids[name] = r.props[ocNS+" fileid"]
	}
	return ids
}

// syncPass runs one pass of the client that may fail (a held client's
// does), its log kept as sync keeps it.
func (d *desktopSession) syncPass(step, local string) {
	d.t.Helper()
	_, err := d.run(step, local)
	d.t.Logf("%s: %s ended: %v", step, d.client.program, err)
}

// massDeleteEvent is an event as GET /dav/spaces/mass-deletes/{space}
// answers it.
type massDeleteEvent struct {
	ID, Client, State, User string
	Files                   int64
}

func massDeleteEvents(t *testing.T, c *client, spaceRef string) []massDeleteEvent {
	t.Helper()
	_, body := c.expect(http.StatusOK, http.MethodGet, "/remote.php/dav/spaces/mass-deletes/"+url.PathEscape(spaceRef), "")
	var out struct{ Events []massDeleteEvent }
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("mass deletes: %v\n%s", err, body)
	}
	return out.Events
}

// marieDeletesInPhysics makes an event in Physics for its manager to see:
// einstein puts 120 files into it, marie deletes 100 of them with rclone
// (a share of the space).
func marieDeletesInPhysics(t *testing.T, s *server, einstein *client, physics string) {
	t.Helper()
	base := "/remote.php/dav/spaces/" + url.PathEscape(physics) + "/"
	for i := range 120 {
		einstein.expectOneOf(http.MethodPut, fmt.Sprintf("%sresult-%03d.txt", base, i), []byte("result"), http.StatusCreated)
	}
	marie := &client{t: t, base: s.URL, user: "marie", http: einstein.http}
	for i := range 100 {
		marie.expect(http.StatusNoContent, http.MethodDelete, fmt.Sprintf("%sresult-%03d.txt", base, i), "", "User-Agent", "rclone/v1.69.1")
	}
}

// massDeletePageOptions are the options of testdata/webui/massdelete.mjs.
type massDeletePageOptions struct {
	browserSession
	IgnoreCertificateErrors bool             `json:"ignoreCertificateErrors"`
	Views                   []massDeleteView `json:"views"`
}

// massDeleteView is a folder whose page shows a banner saying Expect.
type massDeleteView struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	Expect string `json:"expect"`
}
