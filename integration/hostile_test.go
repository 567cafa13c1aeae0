package integration

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestHostileUserMatrix has a user who is a member of neither space try every
// method on every base path of another user's personal space and of a
// project space, by path and by resource id, on existing and missing
// targets, with the foreign resource as COPY/MOVE source and as Destination.
// A user never learns that another user's space exists: every answer must be
// the 404 the attacker gets for a missing file in their own space, byte for
// byte, and nothing may change anywhere.
func TestHostileUserMatrix(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{davspaces: []string{
		"space Chemistry {",
		"\tmanager einstein",
		"\teditor marie",
		"}",
	}})
	owner := newClient(t, s.URL, "einstein")
	attacker := newClient(t, s.URL, "richard")
	personal := personalSpaceRef(t, s, "einstein")
	project := projectSpaceRef(personal, "Chemistry")
	attacker.expect(http.StatusCreated, "PUT", "/webdav/mine.txt", "the attacker's own file")

	var targets []hostileTarget
	ownRef := personalSpaceRef(t, s, "richard")
	storageID, _, _ := strings.Cut(personal, "$")
	unknownRef := storageID + "$" + uuid.NewString()
	for _, space := range []struct{ name, ref string }{{"personal", personal}, {"project", project}} {
		seedVictimSpace(owner, "/dav/spaces/"+space.ref)
		seedVictimUndo(owner, space.ref)
		targets = append(targets, hostileTargets(owner, space.name, space.ref, ownRef)...)
		targets = append(targets, undoTargets(owner, space.name, space.ref, ownRef, unknownRef)...)
	}
	// A space that does not exist at all: the control row.
	targets = append(targets, pathTargets("unknown-space", "/dav/spaces/"+unknownRef)...)
	if got := len(targets) * len(hostileMethods); got > 1000 {
		t.Fatalf("%d requests: keep the matrix bounded", got)
	}

	before := snapshotSpaces(owner, attacker, personal, project)
	notFound := notFoundAnswers(attacker)
	for _, m := range hostileMethods {
		for _, tg := range targets {
			t.Run(m.name+"/"+tg.name, func(t *testing.T) {
				c := attacker.in(t)
				resp, body := m.send(c, s.URL, tg.path)
				want := notFound[http.MethodGet]
				if m.name == http.MethodHead {
					want = notFound[http.MethodHead]
				}
				if tg.control != "" {
					want = tg.controlAnswer(t, m, c, s.URL)
					body = tg.ownView(body)
				}
				want.check(t, m.name+" "+tg.path, resp, body)
			})
		}
	}
	t.Run("OPTIONS", func(t *testing.T) {
		// OPTIONS answers before authentication; it must answer a foreign
		// space exactly as a missing path of the attacker's own space.
		c := attacker.in(t)
		resp, body := c.do(http.MethodOptions, "/webdav/missing.txt", "")
		ownMissing := newAnswer(resp, []byte(body))
		for _, tg := range targets {
			want := ownMissing
			if tg.control != "" {
				resp, body := c.do(http.MethodOptions, tg.control, "")
				want = newAnswer(resp, []byte(body))
			}
			resp, body := c.do(http.MethodOptions, tg.path, "")
			want.check(t, "OPTIONS "+tg.path, resp, tg.ownView([]byte(body)))
		}
	})

	after := snapshotSpaces(owner, attacker, personal, project)
	for name, snap := range before {
		if diff := snapshotDiff(snap, after[name]); diff != "" {
			t.Errorf("the hostile requests changed %s:\n%s", name, diff)
		}
	}
}

// hostileTarget is a foreign resource: an escaped request path.
type hostileTarget struct {
	name string // space:base/target, for the subtest name
	path string
	// control, if set, is the attacker's counterpart of path (the same
	// trash path in a space that does not exist, a file id of their own
	// that does not exist), whose answer to the same request the
	// target's must be; otherwise that is the answer for a missing file
	// of one's own.
	control string
	// own maps the victim's ids in path to their counterparts in
	// control: an answer may name what was asked for, nothing more.
	own *strings.Replacer
}

// seedVictimSpace puts a file with a dead property, a folder and a file in
// it into the space at base.
func seedVictimSpace(owner *client, base string) {
	owner.t.Helper()
	owner.expect(http.StatusCreated, "PUT", base+"/doc.txt", "the victim's document")
	owner.expect(http.StatusMultiStatus, "PROPPATCH", base+"/doc.txt",
		`<d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:z"><d:set><d:prop><z:secret>kept</z:secret></d:prop></d:set></d:propertyupdate>`)
	owner.expect(http.StatusCreated, "MKCOL", base+"/folder", "")
	owner.expect(http.StatusCreated, "PUT", base+"/folder/inner.txt", "the victim's inner file")
}

// hostileTargets names the resources of the space ref on every base path
// that can reach it, by the resource ids of a file and a folder, and by
// those node ids under the attacker's own space id (ownRef).
func hostileTargets(owner *client, space, ref, ownRef string) []hostileTarget {
	owner.t.Helper()
	spaceID := ref[strings.IndexByte(ref, '$')+1:]
	type base struct{ name, path string }
	bases := []base{
		{"spaces", "/dav/spaces/" + ref},
		{"remote-spaces", "/remote.php/dav/spaces/" + strings.Replace(ref, "$", "%24", 1)},
		{"bare-space-id", "/dav/spaces/" + spaceID},
	}
	if space == "personal" {
		bases = append(bases,
			base{"files", "/dav/files/einstein"},
			base{"remote-files", "/remote.php/dav/files/einstein"})
	}
	var targets []hostileTarget
	for _, b := range bases {
		targets = append(targets, pathTargets(space+":"+b.name, b.path)...)
	}
	fileID := owner.prop("/dav/spaces/"+ref+"/doc.txt", ocNS, "fileid")
	folderID := owner.prop("/dav/spaces/"+ref+"/folder/", ocNS, "fileid")
	_, fileNode, _ := strings.Cut(fileID, "!")
	_, folderNode, _ := strings.Cut(folderID, "!")
	for _, id := range []struct{ name, path string }{
		{"own-space-id!file-node", "/dav/spaces/" + ownRef + "!" + fileNode},
		{"own-space-id!folder-node", "/dav/spaces/" + ownRef + "!" + folderNode + "/inner.txt"},
		{"file-id", "/dav/spaces/" + fileID},
		{"file-id/missing", "/dav/spaces/" + fileID + "/missing.txt"},
		{"folder-id", "/dav/spaces/" + folderID + "/"},
		{"folder-id/inner.txt", "/dav/spaces/" + folderID + "/inner.txt"},
		{"folder-id/missing", "/dav/spaces/" + folderID + "/missing.txt"},
	} {
		targets = append(targets, hostileTarget{name: space + ":" + id.name, path: id.path})
	}
	return targets
}

// pathTargets are the existing and missing resources below one base path.
func pathTargets(name, base string) []hostileTarget {
	var targets []hostileTarget
	for _, p := range []string{"/", "/doc.txt", "/folder/", "/missing.txt"} {
		targets = append(targets, hostileTarget{name: name + p, path: base + p})
	}
	return targets
}

// hostileMethod sends one method at a foreign path as the attacker.
type hostileMethod struct {
	name string
	send func(c *client, serverURL, target string) (*http.Response, []byte)
}

// hostileMethods are every method the server knows, locking included: a
// LOCK that would create an empty file on a missing target, and a refresh
// with a guessed token (TestLockTokensOfOthers tries real ones).
var hostileMethods = []hostileMethod{
	{"PROPFIND-depth0", propfindAt("0")},
	{"PROPFIND-depth1", propfindAt("1")},
	{"PROPPATCH", plain("PROPPATCH", `<d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:z"><d:set><d:prop><z:secret>stolen</z:secret></d:prop></d:set></d:propertyupdate>`)},
	{"MKCOL", plain("MKCOL", "")},
	{http.MethodGet, plain(http.MethodGet, "")},
	{http.MethodHead, plain(http.MethodHead, "")},
	{http.MethodPut, plain(http.MethodPut, "overwritten by the attacker")},
	{http.MethodDelete, plain(http.MethodDelete, "")},
	{"COPY-from", transferFrom("COPY")},
	{"MOVE-from", transferFrom("MOVE")},
	{"COPY-onto", transferOnto("COPY")},
	{"MOVE-onto", transferOnto("MOVE")},
	{"LOCK", plain("LOCK", `<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype><d:owner>richard</d:owner></d:lockinfo>`, "Timeout", "Second-60")},
	{"LOCK-deep", plain("LOCK", `<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:shared/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`, "Depth", "infinity")},
	{"LOCK-refresh", plain("LOCK", "", "If", "(<urn:uuid:e71d4fae-5dec-22d6-fea5-00a0c91e6be4>)", "Timeout", "Second-60")},
	{"UNLOCK", plain("UNLOCK", "", "Lock-Token", "<opaquelocktoken:e71d4fae-5dec-22d6-fea5-00a0c91e6be4>")},
}

func plain(method, body string, hdr ...string) func(*client, string, string) (*http.Response, []byte) {
	return func(c *client, _, target string) (*http.Response, []byte) {
		resp, b := c.do(method, target, body, hdr...)
		return resp, []byte(b)
	}
}

func propfindAt(depth string) func(*client, string, string) (*http.Response, []byte) {
	return plain("PROPFIND", `<d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>`, "Depth", depth)
}

// transferFrom copies or moves the foreign resource into the attacker's
// own space.
func transferFrom(method string) func(*client, string, string) (*http.Response, []byte) {
	return func(c *client, serverURL, target string) (*http.Response, []byte) {
		resp, b := c.do(method, target, "", "Destination", serverURL+"/webdav/stolen.txt")
		return resp, []byte(b)
	}
}

// transferOnto copies or moves the attacker's own file onto the foreign
// resource (replacing it if it exists).
func transferOnto(method string) func(*client, string, string) (*http.Response, []byte) {
	return func(c *client, serverURL, target string) (*http.Response, []byte) {
		resp, b := c.do(method, "/webdav/mine.txt", "", "Destination", serverURL+target)
		return resp, []byte(b)
	}
}

// answer is what a client can observe of a response.
type answer struct {
	status  int
	body    string
	headers []string // names, without Date
}

func newAnswer(resp *http.Response, body []byte) answer {
	var names []string
	for k := range resp.Header {
		if k != "Date" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return answer{status: resp.StatusCode, body: string(body), headers: names}
}

// check fails the test unless resp is indistinguishable from a.
func (a answer) check(t *testing.T, what string, resp *http.Response, body []byte) {
	t.Helper()
	got := newAnswer(resp, body)
	switch {
	case got.status != a.status:
		t.Errorf("%s: status %d, want %d as for a missing file of one's own\n%s", what, got.status, a.status, body)
	case got.body != a.body:
		t.Errorf("%s: body differs from a missing file of one's own:\n%s\nwant\n%s", what, got.body, a.body)
	case !slices.Equal(got.headers, a.headers):
		t.Errorf("%s: headers %v, want %v as for a missing file of one's own", what, got.headers, a.headers)
	}
}

// notFoundAnswers are the attacker's answers for a missing file in their own
// space, by method: the only answers a foreign space may give.
func notFoundAnswers(c *client) map[string]answer {
	c.t.Helper()
	out := map[string]answer{}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		resp, body := c.do(method, "/webdav/missing.txt", "")
		if resp.StatusCode != http.StatusNotFound {
			c.t.Fatalf("%s of a missing file of one's own: %d, want 404", method, resp.StatusCode)
		}
		out[method] = newAnswer(resp, []byte(body))
	}
	wantDAVError(c.t, out[http.MethodGet].body, "NotFound")
	return out
}

// snapshotSpaces records the victim's spaces (by resource id) with their
// trash and the attacker's own as their members see them.
func snapshotSpaces(owner, attacker *client, personal, project string) map[string]map[string]string {
	return map[string]map[string]string{
		"the victim's personal space":   owner.snapshot("/dav/spaces/" + personal + "/"),
		"the project space":             owner.snapshot("/dav/spaces/" + project + "/"),
		"the victim's personal trash":   undoSpace{c: owner, ref: personal}.snapshotTrash(),
		"the project trash":             undoSpace{c: owner, ref: project}.snapshotTrash(),
		"the attacker's personal space": attacker.snapshot("/webdav/"),
	}
}

// snapshot walks the folder at root (an escaped path ending in /) with
// PROPFIND Depth 1 and records every resource below it by href: all its
// allprop properties (etag, size, dates, dead properties...) and, for
// files, the SHA1 of the content.
func (c *client) snapshot(root string) map[string]string {
	c.t.Helper()
	snap := map[string]string{}
	for queue := []string{root}; len(queue) > 0; queue = queue[1:] {
		for _, r := range c.propfind(queue[0], "1", "") {
			if _, seen := snap[r.href]; seen {
				continue
			}
			snap[r.href] = describe(r.props)
			switch {
			case strings.Contains(r.props["DAV: resourcetype"], "collection"):
				if r.href != queue[0] {
					queue = append(queue, r.href)
				}
			default:
				_, body := c.expect(http.StatusOK, http.MethodGet, r.href, "")
				snap[r.href] += "\ncontent sha1 " + sha1Hex([]byte(body))
				snap[r.href] += c.snapshotVersions(r.props[ocNS+" fileid"])
			}
		}
	}
	return snap
}

// describe lists properties one a line, sorted.
func describe(props map[string]string) string {
	lines := make([]string, 0, len(props))
	for k, v := range props {
		lines = append(lines, k+" = "+v)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// snapshotDiff says what differs between two snapshots, "" when nothing.
func snapshotDiff(before, after map[string]string) string {
	var diff []string
	for href, was := range before {
		now, ok := after[href]
		switch {
		case !ok:
			diff = append(diff, "gone: "+href)
		case now != was:
			diff = append(diff, "changed: "+href+"\n"+was+"\n-> now\n"+now)
		}
	}
	for href := range after {
		if _, ok := before[href]; !ok {
			diff = append(diff, "new: "+href)
		}
	}
	sort.Strings(diff)
	return strings.Join(diff, "\n")
}
