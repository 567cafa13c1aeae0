package integration

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/graph"
)

// shareOptions are the options of testdata/webui/share.mjs.
type shareOptions struct {
	browserSession
	Downloads string `json:"downloads"`
	// Folder is the page whose rows Shared and Drop are.
	Folder string `json:"folder"`
	// Shared is a folder shared by a link with LinkPassword; File is in it.
	Shared       string `json:"shared"`
	LinkPassword string `json:"linkPassword"`
	File         string `json:"file"`
	// Uploaded goes into Shared once its link is made an upload link.
	Uploaded string `json:"uploaded"`
	// Drop is a folder shared as a file drop; Dropped is uploaded into it.
	Drop    string `json:"drop"`
	Dropped string `json:"dropped"`
	// Unknown is a link page whose token never existed.
	Unknown string `json:"unknown"`
	// Invitee is invited to Shared and then made an editor (EditorRole).
	Invitee         string `json:"invitee"`
	InviteePassword string `json:"inviteePassword"`
	EditorRole      string `json:"editorRole"`
	// EditorFolder is a folder of a project space where Invitee is an
	// editor, who may share its row EditorRow.
	EditorFolder string `json:"editorFolder"`
	EditorRow    string `json:"editorRow"`
}

// TestWebUIShare drives the share dialog and the public link page with
// Debian's chromium against the real Caddy: einstein creates a link with a
// password to a folder in the dialog and copies it; a fresh browser
// context (no sign-in) opens the link's page, is refused a wrong password,
// enters the right one, lists the folder and downloads a file, whose bytes
// are compared here; made an upload link in the dialog, the link takes a
// file from the page. In the same dialog einstein invites marie, found by a
// part of her name, and makes her an editor, which Graph then lists;
// signed in, marie opens the folder from her overview's "Shared with me"
// (with no offer to share it again), and may share in Physics, where she
// is an editor. einstein creates a file-drop link to another folder;
// a fresh context sees only the upload area, uploads a file, which is then
// in einstein's folder. A token that never existed, and the first link
// once deleted in the dialog, show the same not-found words. Screenshots: the share dialog, the public folder and marie's
// shared folder at desktop and phone width, the password form (after a
// wrong one) and the file drop at phone width.
func TestWebUIShare(t *testing.T) {
	t.Parallel()
	chromium, dir := requireBrowser(t)
	s := startServer(t, serverOptions{})
	einstein := newClient(t, s.URL, "einstein")
	personal := personalSpaceRef(t, s, "einstein")
	folder := "/dav/spaces/" + personal + "/"
	const paper = "On the electrodynamics of moving bodies\n"
	einstein.expect(http.StatusCreated, "MKCOL", folder+"Papers/", "")
	einstein.expect(http.StatusCreated, http.MethodPut, folder+"Papers/relativity.txt", paper)
	einstein.expect(http.StatusCreated, "MKCOL", folder+"Inbox/", "")
	physics := "/dav/spaces/" + projectSpaceRef(personal, "Physics") + "/"
	einstein.expect(http.StatusCreated, "MKCOL", physics+"Notes/", "")
	dropped := filepath.Join(t.TempDir(), "homework.txt")
	droppedSum := writeRandomFile(t, dropped, 70_000)
	uploaded := filepath.Join(t.TempDir(), "errata.txt")
	uploadedSum := writeRandomFile(t, uploaded, 30_000)

	opts := shareOptions{
		browserSession:  newBrowserSession(t, chromium, s.URL, "einstein", users["einstein"]),
		Downloads:       t.TempDir(),
		Folder:          folder,
		Shared:          "Papers",
		LinkPassword:    "photons-are-quanta",
		File:            "relativity.txt",
		Uploaded:        uploaded,
		Drop:            "Inbox",
		Dropped:         dropped,
		Unknown:         "/s/Zm9yZ2VkLXRva2VuLXRoYXQtbmV2ZXItZXhpc3RlZA",
		Invitee:         "marie",
		InviteePassword: users["marie"],
		EditorFolder:    physics,
		EditorRow:       "Notes",
		EditorRole:      graph.RoleEditorID,
	}
	for _, ev := range runDrive(t, dir, "share.mjs", opts) {
		t.Logf("%v", ev)
	}

	checkInvited(t, einstein, folder+"Papers/", opts.Invitee, opts.EditorRole)

	got, err := os.ReadFile(filepath.Join(opts.Downloads, opts.File))
	if err != nil || string(got) != paper {
		t.Errorf("the public page's download of %s: %q, %v; want %q", opts.File, got, err, paper)
	}
	if sum := davSHA1(t, s.URL, folder+"Papers/errata.txt", basicAuth("einstein")); sum != uploadedSum {
		t.Errorf("the file uploaded through the upload link, in einstein's Papers: SHA1 %s, want %s", sum, uploadedSum)
	}
	if sum := davSHA1(t, s.URL, folder+"Inbox/homework.txt", basicAuth("einstein")); sum != droppedSum {
		t.Errorf("the file dropped through the link, in einstein's Inbox: SHA1 %s, want %s", sum, droppedSum)
	}
}

// checkInvited reads the Graph permissions of the folder at path and wants
// user among them with role.
func checkInvited(t *testing.T, c *client, path, user, role string) {
	t.Helper()
	item := c.prop(path, "http://owncloud.org/ns", "fileid")
	drive, _, _ := strings.Cut(item, "!")
	resp, body := c.do(http.MethodGet, "/graph/v1beta1/drives/"+url.PathEscape(drive)+"/items/"+url.PathEscape(item)+"/permissions", "")
	var list struct {
		Value []struct {
			Roles       []string `json:"roles"`
			GrantedToV2 struct {
				User struct {
					ID string `json:"id"`
				} `json:"user"`
			} `json:"grantedToV2"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the permissions of %s: %d %s (%v)", path, resp.StatusCode, body, err)
	}
	for _, p := range list.Value {
		if p.GrantedToV2.User.ID == user {
			if len(p.Roles) != 1 || p.Roles[0] != role {
				t.Errorf("%s's roles on %s: %v, want [%s]", user, path, p.Roles, role)
			}
			return
		}
	}
	t.Errorf("the permissions of %s name no %s: %s", path, user, body)
}
