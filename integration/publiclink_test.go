package integration

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
)

// linkPassword is the password of the protected links of these tests.
const linkPassword = "open sesame"

// linkSpec is a link to make on an item of einstein's personal space.
type linkSpec struct {
	item     string // path below /webdav/
	role     storage.ShareRole
	password string
	// expiresIn is how long after it is made the link expires (zero:
	// never): counted from the making, so that a slow start of the
	// server cannot make the link expired before it exists.
	expiresIn time.Duration
}

// startWithLinks starts Caddy, lets seed create einstein's files through
// WebDAV, stops Caddy (which holds the embedded store's lock while it
// runs), makes the links straight in the store, and starts Caddy again on
// the same data directory and port. It returns the links in the order of
// specs.
func startWithLinks(t *testing.T, seed func(c *client), specs ...linkSpec) (*server, []storage.Share) {
	t.Helper()
	port := freePort(t)
	s := startServer(t, serverOptions{port: port})
	owner := newClient(t, s.URL, "einstein")
	seed(owner)
	items := make([]string, len(specs))
	for i, spec := range specs {
		items[i] = owner.prop("/webdav/"+spec.item, ocNS, "fileid")
	}
	s.stop()

	store, err := boltstore.Open(s.Root, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	links := make([]storage.Share, len(specs))
	for i, spec := range specs {
		links[i] = createLink(t, store, items[i], spec)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	return startServer(t, serverOptions{root: s.Root, port: port}), links
}

// createLink makes one link on the item of resource id <storage>$<space>!<node>.
func createLink(t *testing.T, store *boltstore.Store, resourceID string, spec linkSpec) storage.Share {
	t.Helper()
	_, rest, _ := strings.Cut(resourceID, "$")
	spaceID, nodeID, _ := strings.Cut(rest, "!")
	hash, err := storage.HashLinkPassword(spec.password)
	if err != nil {
		t.Fatal(err)
	}
	var expires time.Time
	if spec.expiresIn > 0 {
		expires = time.Now().Add(spec.expiresIn)
	}
	link, err := store.CreateShare(context.Background(), storage.Share{
		Kind: storage.ShareLink, SpaceID: spaceID, NodeID: nodeID, Creator: "einstein",
		Role: spec.role, PasswordHash: hash, Expires: expires,
	})
	if err != nil {
		t.Fatalf("creating a link on %s: %v", spec.item, err)
	}
	return link
}

// publicURL is the WebDAV URL of a link, with path below its item.
func publicURL(s *server, link storage.Share, below string) string {
	return s.URL + "/dav/public-files/" + link.Token + (&url.URL{Path: below}).EscapedPath()
}

func seedLinkTree(c *client) {
	c.expect(http.StatusCreated, "MKCOL", "/webdav/shared", "")
	c.expect(http.StatusCreated, "PUT", "/webdav/shared/report.txt", "the report")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/drop", "")
	c.expect(http.StatusCreated, "PUT", "/webdav/drop/earlier.txt", "dropped before")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/expiring", "")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/doomed", "")
	c.expect(http.StatusCreated, "PUT", "/webdav/doomed/file.txt", "doomed")
}

// TestPublicLinks: links through the real Caddy with curl and rclone,
// without any user: a password link (right, wrong and missing password,
// and the limit on wrong ones), a file drop, an expired link and the link
// of a deleted item.
func TestPublicLinks(t *testing.T) {
	t.Parallel()
	s, links := startWithLinks(t, seedLinkTree,
		linkSpec{item: "shared", role: storage.ShareEditor, password: linkPassword},
		linkSpec{item: "drop", role: storage.ShareFileDrop},
		linkSpec{item: "expiring", role: storage.ShareViewer, expiresIn: 5 * time.Second},
		linkSpec{item: "doomed", role: storage.ShareViewer},
		linkSpec{item: "shared", role: storage.ShareViewer, password: linkPassword},
	)
	protected, drop, expiring, doomed, curled := links[0], links[1], links[2], links[3], links[4]
	t.Run("expired", func(t *testing.T) { publicLinkExpired(t, s, expiring) })
	t.Run("rclone", func(t *testing.T) { publicLinkRclone(t, s, protected) })
	t.Run("drop", func(t *testing.T) { publicLinkDrop(t, s, drop) })
	t.Run("deleted", func(t *testing.T) { publicLinkDeleted(t, s, doomed) })
	// Last: it blocks its link for this address.
	t.Run("curl", func(t *testing.T) { publicLinkCurl(t, s, curled) })
}

// publicLinkExpired: a link answers until it expires, then as a link
// that never existed.
func publicLinkExpired(t *testing.T, s *server, link storage.Share) {
	anon := newClient(t, s.URL, "")
	root := "/dav/public-files/" + link.Token + "/"
	if time.Until(link.Expires) > time.Second {
		// Checked only while surely before the expiry: a slow start
		// must not fail the test.
		anon.expect(http.StatusMultiStatus, "PROPFIND", root, "", "Depth", "0")
	}
	deadline := time.Now().Add(time.Until(link.Expires) + 30*time.Second)
	for {
		resp, _ := anon.do("PROPFIND", root, "", "Depth", "0")
		if resp.StatusCode == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the expired link still answers %d", resp.StatusCode)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// curlStatus runs curl and returns the status, the headers and the body.
func curlStatus(t *testing.T, curl string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	headers, body := filepath.Join(dir, "headers"), filepath.Join(dir, "body")
	args = append([]string{"-sS", "-o", body, "-D", headers, "-w", "%{http_code}"}, args...)
	out, err := runPeer(t, time.Minute, "", curl, args...)
	if err != nil {
		t.Fatalf("curl %v: %v\n%s", args, err, out)
	}
	code, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("curl status %q", out)
	}
	h, _ := os.ReadFile(headers)
	b, _ := os.ReadFile(body)
	return code, string(h), string(b)
}

func publicLinkCurl(t *testing.T, s *server, link storage.Share) {
	curl := requirePeer(t, "curl")
	file := publicURL(s, link, "/report.txt")
	code, headers, _ := curlStatus(t, curl, file)
	if code != http.StatusUnauthorized || !strings.Contains(strings.ToLower(headers), `www-authenticate: basic realm="davspaces public link"`) {
		t.Fatalf("no password: %d\n%s", code, headers)
	}
	if code, _, body := curlStatus(t, curl, "-u", "public:"+linkPassword, file); code != http.StatusOK || body != "the report" {
		t.Fatalf("right password: %d %q", code, body)
	}
	// A signed-in user's credentials open no link: the link asks its own.
	if code, _, _ := curlStatus(t, curl, "-u", "einstein:"+users["einstein"], file); code != http.StatusUnauthorized {
		t.Fatalf("a user's credentials: %d, want 401", code)
	}
	for i := 2; i <= 10; i++ {
		if code, _, _ := curlStatus(t, curl, "-u", "public:wrong password", file); code != http.StatusUnauthorized {
			t.Fatalf("wrong password #%d: %d, want 401", i, code)
		}
	}
	code, headers, _ = curlStatus(t, curl, "-u", "public:"+linkPassword, file)
	if code != http.StatusTooManyRequests || !strings.Contains(headers, "Retry-After: ") {
		t.Fatalf("after 10 wrong passwords: %d, want 429 with Retry-After\n%s", code, headers)
	}
}

func publicLinkRclone(t *testing.T, s *server, link storage.Share) {
	rclone := requirePeer(t, "rclone")
	r := newRcloneRemote(t, rclone, publicURL(s, link, "/"), "public", linkPassword)
	if out := r.mustRunQuiet(t, "lsf", "dav:"); strings.TrimSpace(out) != "report.txt" {
		t.Fatalf("rclone lsf of the link: %q", out)
	}
	if out := r.mustRunQuiet(t, "cat", "dav:report.txt"); out != "the report" {
		t.Fatalf("rclone cat: %q", out)
	}
	local := filepath.Join(t.TempDir(), "up")
	if err := os.MkdirAll(filepath.Join(local, "nested"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(local, "nested", "new.txt"), []byte("from rclone"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.mustRun(t, "copy", local, "dav:incoming")
	r.mustRun(t, "check", local, "dav:incoming")
	if got := mustGet(t, s, "/webdav/shared/incoming/nested/new.txt"); string(got) != "from rclone" {
		t.Fatalf("the owner reads %q", got)
	}
	r.mustRun(t, "deletefile", "dav:incoming/nested/new.txt")
	// A wrong password is refused.
	bad := newRcloneRemote(t, rclone, publicURL(s, link, "/"), "public", "wrong password")
	if out, err := bad.run(t, "lsf", "--retries", "1", "--low-level-retries", "1", "dav:"); err == nil {
		t.Fatalf("rclone with a wrong password listed the link:\n%s", out)
	}
}

func publicLinkDrop(t *testing.T, s *server, link storage.Share) {
	anon := newClient(t, s.URL, "")
	base := "/dav/public-files/" + link.Token
	anon.expect(http.StatusCreated, "PUT", base+"/upload.txt", "first")
	anon.expect(http.StatusCreated, "PUT", base+"/earlier.txt", "second")
	// Resumable, as ownCloud Web and the page upload.
	resp, _ := anon.expect(http.StatusCreated, "POST", base+"/", "", "Tus-Resumable", "1.0.0", "Upload-Length", "3",
		"Upload-Metadata", "filename "+base64.StdEncoding.EncodeToString([]byte("tus.txt")))
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.Path, "/dav/public-files/.uploads/") {
		t.Fatalf("Location %q", resp.Header.Get("Location"))
	}
	anon.expect(http.StatusNoContent, "PATCH", loc.Path, "tus", "Tus-Resumable", "1.0.0", "Upload-Offset", "0",
		"Content-Type", "application/offset+octet-stream")

	for name, want := range map[string]string{"upload.txt": "first", "earlier.txt": "dropped before", "earlier (2).txt": "second", "tus.txt": "tus"} {
		if got := mustGet(t, s, path.Join("/webdav/drop", name)); string(got) != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
	responses := anon.propfind(base+"/", "1", "")
	if len(responses) != 1 {
		t.Fatalf("the drop lists %d responses, want its root alone", len(responses))
	}
	anon.expect(http.StatusNotFound, "GET", base+"/upload.txt", "")
	anon.expect(http.StatusNotFound, "PROPFIND", base+"/upload.txt", "", "Depth", "0")
	anon.expect(http.StatusForbidden, "GET", base+"/", "")
}

func publicLinkDeleted(t *testing.T, s *server, link storage.Share) {
	anon := newClient(t, s.URL, "")
	base := "/dav/public-files/" + link.Token
	anon.expect(http.StatusOK, "GET", base+"/file.txt", "")
	owner := newClient(t, s.URL, "einstein")
	owner.expect(http.StatusNoContent, "DELETE", "/webdav/doomed", "")
	anon.expect(http.StatusNotFound, "GET", base+"/file.txt", "")

	ref := personalSpaceRef(t, s, "einstein")
	trash := "/dav/spaces/trash-bin/" + ref + "/"
	items := owner.propfind(trash, "1", `<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:trashbin-original-filename/></d:prop></d:propfind>`)
	href := ""
	for _, it := range items {
		if it.props[ocNS+" trashbin-original-filename"] == "doomed" {
			href = it.href
		}
	}
	if href == "" {
		t.Fatalf("the deleted folder is not in the trash: %v", items)
	}
	owner.expect(http.StatusCreated, "MOVE", href, "", "Destination", s.URL+"/dav/spaces/"+ref+"/doomed")
	if got := mustGet(t, s, "/webdav/doomed/file.txt"); string(got) != "doomed" {
		t.Fatalf("restored %q", got)
	}
	anon.expect(http.StatusNotFound, "GET", base+"/file.txt", "")
}
