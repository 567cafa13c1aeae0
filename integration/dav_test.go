package integration

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

const ocNS = "http://owncloud.org/ns"

// wantDAVError checks the Sabre error body shape.
func wantDAVError(t testing.TB, body, exception string) {
	t.Helper()
	if !strings.Contains(body, `<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns">`) ||
		!strings.Contains(body, `<s:exception>Sabre\DAV\Exception\`+exception+`</s:exception>`) {
		t.Fatalf("not a %s error body:\n%s", exception, body)
	}
}

func TestBasePathsReachTheSameSpace(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, "PUT", "/remote.php/webdav/hello.txt", "hello")
	spaceID := c.prop("/webdav/", ocNS, "spaceid")
	fileID := c.prop("/webdav/hello.txt", ocNS, "fileid")
	for _, p := range []string{
		"/webdav/hello.txt",
		"/remote.php/webdav/hello.txt",
		"/dav/files/einstein/hello.txt",
		"/remote.php/dav/files/einstein/hello.txt",
		"/dav/spaces/" + spaceID + "/hello.txt",
		"/remote.php/dav/spaces/" + strings.Replace(spaceID, "$", "%24", 1) + "/hello.txt",
		"/dav/spaces/" + fileID,
	} {
		if _, b := c.expect(http.StatusOK, "GET", p, ""); b != "hello" {
			t.Fatalf("GET %s: %q", p, b)
		}
	}
	// A MOVE between base paths keeps the file id.
	c.expect(http.StatusCreated, "MOVE", "/webdav/hello.txt", "", "Destination", s.URL+"/remote.php/dav/spaces/"+spaceID+"/moved.txt")
	if got := c.prop("/dav/files/einstein/moved.txt", ocNS, "fileid"); got != fileID {
		t.Fatalf("file id after MOVE %s, want %s", got, fileID)
	}
	// Another user learns nothing about the space.
	m := newClient(t, s.URL, "marie")
	for _, p := range []string{"/dav/spaces/" + spaceID + "/moved.txt", "/dav/spaces/" + spaceID + "/missing", "/dav/spaces/" + fileID, "/dav/files/einstein/"} {
		_, b := m.expect(http.StatusNotFound, "PROPFIND", p, "", "Depth", "0")
		wantDAVError(t, b, "NotFound")
	}
}

func TestAuthenticationAndBadInput(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	anon := newClient(t, s.URL, "")
	_, b := anon.expect(http.StatusUnauthorized, "PROPFIND", "/webdav/", "", "Depth", "0")
	wantDAVError(t, b, "NotAuthenticated")
	resp, _ := anon.expect(http.StatusNoContent, "OPTIONS", "/remote.php/dav/spaces/x/", "")
	if !strings.Contains(resp.Header.Get("DAV"), "1") {
		t.Fatalf("OPTIONS DAV header %q", resp.Header.Get("DAV"))
	}
	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, "PUT", "/webdav/keep.txt", "keep")
	bad := []struct {
		method, path, body string
		hdr                []string
		status             int
		exception          string
	}{
		{"PUT", "/webdav/%2e%2e/escape.txt", "x", nil, http.StatusBadRequest, "BadRequest"},
		{"PUT", "/webdav/a%00b", "x", nil, http.StatusBadRequest, "BadRequest"},
		{"PUT", "/webdav/" + strings.Repeat("n", 256), "x", nil, http.StatusBadRequest, "BadRequest"},
		{"PUT", "/webdav/keep.txt", "changed", []string{"OC-Checksum", "MD5:00000000000000000000000000000000"}, http.StatusBadRequest, "BadRequest"},
		{"PROPFIND", "/webdav/", "<d:propfind", []string{"Depth", "0"}, http.StatusBadRequest, "BadRequest"},
		{"PROPFIND", "/webdav/", "", []string{"Depth", "2"}, http.StatusBadRequest, "BadRequest"},
		{"PROPFIND", "/webdav/", "", []string{"Depth", "infinity"}, http.StatusBadRequest, "BadRequest"},
		{"PROPFIND", "/webdav/", `<d:propfind xmlns:d="DAV:"><d:prop>` + strings.Repeat("<d:getetag/>", 100000) + `</d:prop></d:propfind>`, []string{"Depth", "0"}, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge"},
		{"MOVE", "/webdav/keep.txt", "", []string{"Destination", s.URL + "/webdav/%2e%2e/x"}, http.StatusBadRequest, "BadRequest"},
	}
	for _, tt := range bad {
		_, b := c.expect(tt.status, tt.method, tt.path, tt.body, tt.hdr...)
		wantDAVError(t, b, tt.exception)
	}
	if _, b := c.expect(http.StatusOK, "GET", "/webdav/keep.txt", ""); b != "keep" {
		t.Fatalf("bad input changed the file: %q", b)
	}
	entries, err := os.ReadDir(filepath.Join(s.Root, "uploads"))
	if err != nil || len(entries) != 0 {
		t.Fatalf("refused uploads left files behind: %v %v", entries, err)
	}
}

func TestRestartKeepsDataAndIDs(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "data")
	s := startServer(t, serverOptions{root: root})
	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, "MKCOL", "/webdav/dir", "")
	c.expect(http.StatusCreated, "PUT", "/webdav/dir/f.txt", "durable")
	c.expect(http.StatusMultiStatus, "PROPPATCH", "/webdav/dir/f.txt",
		`<d:propertyupdate xmlns:d="DAV:" xmlns:z="urn:z"><d:set><d:prop><z:color>red</z:color></d:prop></d:set></d:propertyupdate>`)
	id := c.prop("/webdav/dir/f.txt", ocNS, "fileid")
	s.kill() // as a crash would: no graceful shutdown

	s = startServer(t, serverOptions{root: root})
	c = newClient(t, s.URL, "einstein")
	if _, b := c.expect(http.StatusOK, "GET", "/webdav/dir/f.txt", ""); b != "durable" {
		t.Fatalf("content after restart %q", b)
	}
	if got := c.prop("/webdav/dir/f.txt", ocNS, "fileid"); got != id {
		t.Fatalf("file id after restart %s, want %s", got, id)
	}
	if got := c.prop("/webdav/dir/f.txt", "urn:z", "color"); got != "red" {
		t.Fatalf("dead property after restart %q", got)
	}
}

// checkExampleOCS checks what clients read before they sync, as the
// example configuration serves it: status.php without credentials, the
// capabilities and the Graph drives with them, and 404 with the WebDAV
// error body for a path nothing serves.
func checkExampleOCS(t *testing.T, c *client) {
	t.Helper()
	c.user = ""
	resp, b := c.expect(http.StatusOK, "GET", "/status.php", "")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || !strings.Contains(b, `"installed":true`) {
		t.Fatalf("status.php: %s %s", ct, b)
	}
	// Open as in oCIS: ownCloud Web reads them for a link's visitor.
	c.expect(http.StatusOK, "GET", "/ocs/v1.php/cloud/capabilities?format=json", "")
	c.user = "einstein"
	_, b = c.expect(http.StatusOK, "GET", "/ocs/v1.php/cloud/capabilities?format=json", "", "OCS-APIREQUEST", "true")
	if !strings.Contains(b, `"statuscode":100`) || !strings.Contains(b, `"webdav-root":"remote.php/webdav"`) || !strings.Contains(b, `"tus_support"`) {
		t.Fatalf("capabilities: %s", b)
	}
	// Bulk upload is offered to Nextcloud's desktop clients, but not to
	// those (3.4 to 3.8) that fail a batch holding an empty file.
	for agent, offered := range map[string]bool{
		"Mozilla/5.0 (Linux) mirall/3.9.0 (Nextcloud, debian-6.1)":    true,
		"Mozilla/5.0 (Linux) mirall/3.7.3git (Nextcloud, debian-6.1)": false,
	} {
		_, b = c.expect(http.StatusOK, "GET", "/ocs/v1.php/cloud/capabilities?format=json", "", "OCS-APIREQUEST", "true", "User-Agent", agent)
		if strings.Contains(b, `"bulkupload":"1.0"`) != offered {
			t.Errorf("capabilities for %q: bulk upload offered %v, want %v", agent, !offered, offered)
		}
	}
	_, b = c.expect(http.StatusOK, "GET", "/ocs/v2.php/cloud/user", "")
	if !strings.Contains(b, "<id>einstein</id>") {
		t.Fatalf("cloud/user: %s", b)
	}
	_, b = c.expect(http.StatusOK, "GET", "/graph/v1.0/me/drives", "")
	if !strings.Contains(b, `"Physics"`) {
		t.Fatalf("graph drives: %s", b)
	}
	resp, b = c.expect(http.StatusNotFound, "GET", "/no/such/path", "")
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/xml") || !strings.Contains(b, "Sabre\\DAV\\Exception\\NotFound") {
		t.Fatalf("unclaimed path: %s %s", resp.Header.Get("Content-Type"), b)
	}
	c.user = ""
}

// examplePort is the fixed port of Caddyfile.example.
const examplePort = 9200

// startExample runs binary on Caddyfile.example as it is, on its fixed
// address https://localhost:9200, and returns a client of it as einstein
// once it answers, and the address of its admin endpoint: the example's
// unix socket, in the test's XDG_RUNTIME_DIR.
func startExample(t *testing.T, binary string) (c *client, admin string) {
	t.Helper()
	// Another test of the example (or of a second copy of the suite)
	// serving there would take part of this one's connections.
	testpeer.HoldPort(t, examplePort)
	dir := t.TempDir()
	cmd := testpeer.Command(binary, "run", "--config", "../Caddyfile.example")
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_RUNTIME_DIR="+dir)
	admin = "unix/" + filepath.Join(dir, "davspaces-admin.sock")
	logFile, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{URL: "https://localhost:9200", cmd: cmd, log: logFile}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			out, _ := os.ReadFile(logFile.Name())
			t.Logf("caddy log:\n%s", tail(string(out), 4000))
		}
	})
	c = newClient(t, s.URL, "einstein")
	c.http.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodOptions, s.URL+"/remote.php/webdav/", nil)
		resp, err := c.http.Do(req)
		if err == nil {
			resp.Body.Close()
			return c, admin
		}
		if time.Now().After(deadline) {
			t.Fatalf("the example server did not start: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestExampleCaddyfileAsIs runs the configuration of the README's server command
// unchanged: HTTPS on localhost:9200 with Caddy's internal CA.
func TestExampleCaddyfileAsIs(t *testing.T) {
	t.Parallel()
	c, admin := startExample(t, caddyBinary)
	c.expect(http.StatusCreated, "PUT", "/remote.php/webdav/readme.txt", "hi")
	c.expect(http.StatusMultiStatus, "PROPFIND", "/remote.php/webdav/", "", "Depth", "1")
	c.user = "richard"
	own := "/dav/spaces/" + c.prop("/webdav/", ocNS, "spaceid") // richard's personal space
	c.expect(http.StatusCreated, "PUT", own+"/mine.txt", "mine")

	c.user = ""
	_, b := c.expect(http.StatusOK, "GET", "/.well-known/webfinger?resource=acct:richard@localhost", "")
	if !strings.Contains(b, `"href":"https://localhost:9200"`) {
		t.Fatalf("webfinger issuer link: %s", b)
	}
	checkExampleOCS(t, c)
	// The admin endpoint, on the example's unix socket, serves the
	// metrics, which include the identity provider counters.
	if status, b := adminGet(t, admin, "/metrics"); status != http.StatusOK || !strings.Contains(b, "davspaces_oidc_userinfo_requests_total") {
		t.Fatalf("no davspaces_oidc metrics on the admin endpoint (%d)", status)
	}
}
