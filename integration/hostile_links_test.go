package integration

import (
	"net/http"
	"strings"
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestHostileLinkMatrix has somebody without an account try every method
// on public link paths that name no link they may use: guessed and
// malformed tokens, the token of a deleted item's link, "." and ".." and
// encoded slashes after a real token, and another space's resource ids
// below a real link; and a signed-in user try a link's token as a space
// id. Every answer must be byte for byte the one of a token that never
// existed (for the user: of a missing file of their own), and nothing may
// change.
func TestHostileLinkMatrix(t *testing.T) {
	t.Parallel()
	s, links := startWithLinks(t, func(c *client) {
		seedVictimSpace(c, "/webdav")
		c.expect(http.StatusCreated, "MKCOL", "/webdav/public", "")
		c.expect(http.StatusCreated, "PUT", "/webdav/public/open.txt", "open to all")
		c.expect(http.StatusCreated, "MKCOL", "/webdav/doomed", "")
	},
		linkSpec{item: "public", role: storage.ShareEditor},
		linkSpec{item: "doomed", role: storage.ShareEditor},
		linkSpec{item: "public", role: storage.ShareViewer},
	)
	editorLink, deadLink, viewerLink := links[0], links[1], links[2]
	owner := newClient(t, s.URL, "einstein")
	owner.expect(http.StatusNoContent, "DELETE", "/webdav/doomed", "")
	personal := personalSpaceRef(t, s, "einstein")
	victim := "/dav/spaces/" + personal + "/"
	before := owner.snapshot(victim)

	anon := newClient(t, s.URL, "")
	never := "/dav/public-files/" + storage.NewLinkToken()
	notFound := map[string]answer{}
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		resp, body := anon.do(m, never+"/", "")
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("%s of a never-existing token: %d, want 404", m, resp.StatusCode)
		}
		notFound[m] = newAnswer(resp, []byte(body))
	}
	wantDAVError(t, notFound[http.MethodGet].body, "NotFound")

	real := editorLink.Token
	fileID := owner.prop("/webdav/doc.txt", ocNS, "fileid")
	folderID := owner.prop("/webdav/folder/", ocNS, "fileid")
	paths := []string{
		never, never + "/open.txt",
		"/dav/public-files/" + storage.NewLinkToken() + "/doc.txt",
		"/remote.php/dav/public-files/" + storage.NewLinkToken() + "/",
		"/dav/public-files/" + real[:len(real)-1] + "/open.txt",
		"/dav/public-files/" + real[:len(real)-1] + flipCase(real[len(real)-1:]) + "/open.txt",
		"/dav/public-files/" + real + "x/open.txt",
		"/dav/public-files/" + strings.ToUpper(real) + "/open.txt",
		"/dav/public-files/not%20a%20token/",
		"/dav/public-files/tok%2Fen/open.txt",
		"/dav/public-files/" + strings.Repeat("A", 300) + "/",
		"/dav/public-files/%C3%A9t%C3%A9/",
		"/dav/public-files/.uploads/",
		"/dav/public-files/.uploads/" + storage.NewLinkToken(),
		"/dav/public-files/" + deadLink.Token + "/",
		"/dav/public-files/" + real + "/../doc.txt",
		"/dav/public-files/" + real + "/..%2Fdoc.txt",
		"/dav/public-files/" + real + "/%2E%2E/doc.txt",
		"/dav/public-files/" + real + "/sub/%2e%2e%2f%2e%2e%2fdoc.txt",
		"/dav/public-files/" + real + "/./open.txt",
		"/dav/public-files/" + never[len("/dav/public-files/"):] + "/../" + real + "/open.txt",
	}
	methods := anonymousHostileMethods("/dav/public-files/" + editorLink.Token + "/open.txt")
	for _, m := range methods {
		for _, p := range paths {
			t.Run(m.name+p, func(t *testing.T) {
				resp, body := m.send(anon.in(t), s.URL, p)
				want := notFound[http.MethodGet]
				if m.name == http.MethodHead {
					want = notFound[http.MethodHead]
				}
				want.check(t, m.name+" "+p, resp, body)
			})
		}
	}

	// A path whose dots climb out of /dav/public-files/ is no public path:
	// it asks for credentials as every private path does.
	for _, p := range []string{"/dav/public-files/" + real + "/%2e%2e%2f%2e%2e%2fspaces%2f" + strings.Replace(personal, "$", "%24", 1) + "%2fdoc.txt"} {
		if resp, body := anon.do(http.MethodGet, p, ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s: %d, want 401\n%s", p, resp.StatusCode, body)
		}
	}

	// Another space's resource ids are names below a link, which reach
	// nothing of that space, through either link.
	for _, token := range []string{real, viewerLink.Token} {
		for _, id := range []string{fileID, folderID, folderID + "/inner.txt", "..%2F" + fileID} {
			p := "/dav/public-files/" + token + "/" + strings.Replace(id, "$", "%24", 1)
			for _, m := range []hostileMethod{{"PROPFIND-depth0", propfindAt("0")}, {"PROPFIND-depth1", propfindAt("1")},
				{http.MethodGet, plain(http.MethodGet, "")}, {http.MethodHead, plain(http.MethodHead, "")}} {
				t.Run("resource-id/"+m.name+p, func(t *testing.T) {
					resp, body := m.send(anon.in(t), s.URL, p)
					want := notFound[http.MethodGet]
					if m.name == http.MethodHead {
						want = notFound[http.MethodHead]
					}
					want.check(t, m.name+" "+p, resp, body)
				})
			}
		}
	}

	// A token is no space id, for a signed-in user either.
	attacker := newClient(t, s.URL, "richard")
	attacker.expect(http.StatusCreated, "PUT", "/webdav/mine.txt", "the attacker's own file")
	userNotFound := notFoundAnswers(attacker)
	for _, m := range hostileMethods {
		for _, p := range []string{"/dav/spaces/" + real + "/", "/dav/spaces/" + real + "/open.txt", "/dav/spaces/" + personal[:strings.IndexByte(personal, '$')+1] + real + "/open.txt"} {
			t.Run("as-space/"+m.name+p, func(t *testing.T) {
				resp, body := m.send(attacker.in(t), s.URL, p)
				want := userNotFound[http.MethodGet]
				if m.name == http.MethodHead {
					want = userNotFound[http.MethodHead]
				}
				want.check(t, m.name+" "+p, resp, body)
			})
		}
	}

	if diff := snapshotDiff(before, owner.snapshot(victim)); diff != "" {
		t.Errorf("the hostile requests changed the victim's space:\n%s", diff)
	}
	if got := mustGet(t, s, "/webdav/public/open.txt"); string(got) != "open to all" {
		t.Errorf("the linked file now holds %q", got)
	}
}

// anonymousHostileMethods are hostileMethods for somebody without an
// account: the resource copied or moved onto a target is linkedFile, a
// file of a link they hold.
func anonymousHostileMethods(linkedFile string) []hostileMethod {
	var out []hostileMethod
	for _, m := range hostileMethods {
		switch m.name {
		case "COPY-onto", "MOVE-onto":
			method := strings.TrimSuffix(m.name, "-onto")
			m.send = func(c *client, serverURL, target string) (*http.Response, []byte) {
				resp, b := c.do(method, linkedFile, "", "Destination", serverURL+target)
				return resp, []byte(b)
			}
		case "COPY-from", "MOVE-from":
			method := strings.TrimSuffix(m.name, "-from")
			m.send = func(c *client, serverURL, target string) (*http.Response, []byte) {
				resp, b := c.do(method, target, "", "Destination", serverURL+linkedFile+".stolen")
				return resp, []byte(b)
			}
		}
		out = append(out, m)
	}
	return out
}

// flipCase swaps the case of an ASCII letter, and turns anything else
// into a letter.
func flipCase(s string) string {
	switch c := s[0]; {
	case c >= 'a' && c <= 'z':
		return strings.ToUpper(s)
	case c >= 'A' && c <= 'Z':
		return strings.ToLower(s)
	}
	return "Q"
}
