package integration

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// physicsSpaceID is the id Caddyfile.example's Physics space derives from
// its name (caddymodule's TestSpaceIDFromName keeps it stable).
const physicsSpaceID = "611c36a9-5419-59b6-b0a8-b0f550d98743"

// physicsMembers opens the Physics space of Caddyfile.example as the test
// configuration holds it; the block may go on with comments.
const physicsMembers = "\t\t\tspace Physics {\n\t\t\t\tmanager einstein\n\t\t\t\teditor marie\n\t\t\t\tviewer richard\n"

// physicsBlock is the whole Physics space block of cfg, "" when cfg has
// none as expected.
func physicsBlock(cfg string) string {
	start := strings.Index(cfg, physicsMembers)
	if start < 0 {
		return ""
	}
	end := strings.Index(cfg[start:], "\n\t\t\t}\n")
	if end < 0 {
		return ""
	}
	return cfg[start : start+end+len("\n\t\t\t}\n")]
}

// reloadable is a running Caddy whose configuration a test replaces through
// the admin endpoint, as `caddy reload` does.
type reloadable struct {
	*server
	admin  string // the admin endpoint's address
	config string // the Caddyfile it was started with
	// physics is the Physics space block of config.
	physics string
}

func startReloadable(t *testing.T) *reloadable {
	t.Helper()
	return startReloadableWith(t, serverOptions{})
}

// startReloadableWith is startReloadable with opts (their admin endpoint
// set here).
func startReloadableWith(t *testing.T, opts serverOptions) *reloadable {
	t.Helper()
	opts.admin = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := startServer(t, opts)
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	cfg := exampleCaddyfile(t, port, s.Root, opts)
	physics := physicsBlock(cfg)
	if physics == "" {
		t.Fatalf("the test configuration has no Physics space as expected:\n%s", cfg)
	}
	return &reloadable{server: s, admin: opts.admin, config: cfg, physics: physics}
}

// load replaces the running configuration with the started one edited by
// the replacer's old/new pairs; it returns once Caddy runs it.
func (r *reloadable) load(t *testing.T, oldnew ...string) {
	t.Helper()
	cfg := strings.NewReplacer(oldnew...).Replace(r.config)
	req, err := http.NewRequest(http.MethodPost, "http://"+r.admin+"/load", strings.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/caddyfile")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("POST /load: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /load: %d %s", resp.StatusCode, b)
	}
	r.waitOldListenerClosed(t)
	// The replaced server closes its idle connections; a PROPFIND or PUT
	// sent on one would fail instead of being retried, as GET would be.
	http.DefaultClient.CloseIdleConnections()
}

// waitOldListenerClosed waits until the replaced server's socket is closed.
// Caddy binds each configuration's socket with SO_REUSEPORT and closes the
// old one after /load answers; until then the kernel hands some new
// connections to the old socket, and they are reset when it closes.
func (r *reloadable) waitOldListenerClosed(t *testing.T) {
	t.Helper()
	u, err := url.Parse(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.ParseUint(u.Port(), 10, 16)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := listeningSockets(uint16(port))
		if err != nil {
			t.Fatal(err)
		}
		if n <= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sockets still listen on port %d after the reload", n, port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listeningSockets counts the TCP sockets in LISTEN state on port, from
// Linux's /proc/net/tcp and tcp6.
func listeningSockets(port uint16) (int, error) {
	const listen = "0A"
	local := fmt.Sprintf(":%04X", port)
	n := 0
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(name)
		if err != nil {
			return 0, fmt.Errorf("counting listeners: %w", err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) > 3 && strings.HasSuffix(f[1], local) && f[3] == listen {
				n++
			}
		}
	}
	return n, nil
}

// physicsPath is the Physics space's root by resource id.
func physicsPath(t *testing.T, c *client) string {
	t.Helper()
	storageID, _, ok := strings.Cut(c.prop("/webdav/", ocNS, "spaceid"), "$")
	if !ok {
		t.Fatal("the personal space id has no storage id")
	}
	return "/dav/spaces/" + storageID + "$" + physicsSpaceID + "/"
}

// TestReloadStopsServingRemovedSpace: a project space taken out of the
// configuration is no longer served to its members after `caddy reload`;
// its content is back when it is configured again.
func TestReloadStopsServingRemovedSpace(t *testing.T) {
	t.Parallel()
	s := startReloadable(t)
	einstein := newClient(t, s.URL, "einstein")
	physics := physicsPath(t, einstein)
	einstein.expect(http.StatusCreated, "PUT", physics+"notes.txt", "kept")

	s.load(t, s.physics, "")
	for _, user := range []string{"einstein", "marie", "richard"} {
		c := newClient(t, s.URL, user)
		_, b := c.expect(http.StatusNotFound, "PROPFIND", physics, "", "Depth", "0")
		wantDAVError(t, b, "NotFound")
		c.expect(http.StatusNotFound, "GET", physics+"notes.txt", "")
	}
	einstein.expect(http.StatusNotFound, "PUT", physics+"new.txt", "x")
	einstein.expect(http.StatusNotFound, "DELETE", physics+"notes.txt", "")
	einstein.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "0")

	s.load(t)
	if _, b := einstein.expect(http.StatusOK, "GET", physics+"notes.txt", ""); b != "kept" {
		t.Fatalf("content after the space was configured again: %q", b)
	}
	einstein.expect(http.StatusNotFound, "GET", physics+"new.txt", "")
}

// TestReloadRemovesMember: a member taken out of a space's configuration
// loses access at the reload.
func TestReloadRemovesMember(t *testing.T) {
	t.Parallel()
	s := startReloadable(t)
	marie := newClient(t, s.URL, "marie")
	physics := physicsPath(t, marie)
	marie.expect(http.StatusCreated, "PUT", physics+"notes.txt", "x")

	s.load(t, "\t\t\teditor marie\n", "")
	_, b := marie.expect(http.StatusNotFound, "PROPFIND", physics, "", "Depth", "0")
	wantDAVError(t, b, "NotFound")
	marie.expect(http.StatusNotFound, "PUT", physics+"notes.txt", "changed")
	einstein := newClient(t, s.URL, "einstein")
	if _, b := einstein.expect(http.StatusOK, "GET", physics+"notes.txt", ""); b != "x" {
		t.Fatalf("content after the member left: %q", b)
	}
}
