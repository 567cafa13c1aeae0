package integration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// TestCadaver drives the interactive cadaver client with scripted sessions
// (credentials from ~/.netrc) against the personal space at /webdav/, and
// checks each step's output and the resulting server state over plain HTTP,
// on every deployment.
func TestCadaver(t *testing.T) {
	t.Parallel()
	cadaver := requirePeer(t, "cadaver")
	onEachDeployment(t, serverOptions{}, func(t *testing.T, s *server) { cadaverScenario(t, cadaver, s) })
}

func cadaverScenario(t *testing.T, cadaver string, s *server) {
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	netrc := "machine 127.0.0.1\nlogin einstein\npassword " + users["einstein"] + "\n"
	if err := os.WriteFile(filepath.Join(home, ".netrc"), []byte(netrc), 0o600); err != nil {
		t.Fatal(err)
	}
	// Binary content with every byte value, large enough for several reads.
	upload := make([]byte, 200<<10)
	rand.New(rand.NewSource(42)).Read(upload)
	// cadaver runs in work: local paths are relative to keep the commands
	// short (readline scrolls lines longer than the terminal horizontally).
	localFile := filepath.Join(work, "upload.bin")
	if err := os.WriteFile(localFile, upload, 0o644); err != nil {
		t.Fatal(err)
	}
	localCopy := filepath.Join(work, "download.bin")
	size := fmt.Sprint(len(upload))
	const unicodeName = "Ünï – ✓ space.txt"

	// Session 1: create, upload, download, copy, move, properties, list,
	// delete.
	cadaverSession(t, cadaver, home, work, s.URL+"/webdav/", []cadaverStep{
		{cmd: "mkcol dir", want: "Creating `dir': succeeded."},
		// A second MKCOL of the same name fails (405).
		{cmd: "mkcol dir", want: "Creating `dir': failed:\n405 Method Not Allowed", fails: true},
		{cmd: "cd dir", next: "/webdav/dir/"},
		{cmd: `put upload.bin a.txt`, want: "Uploading upload.bin to `/webdav/dir/a.txt': [.* succeeded.$"},
		{cmd: `get a.txt download.bin`, want: "Downloading `/webdav/dir/a.txt' to download.bin: [.* succeeded.$"},
		{cmd: "copy a.txt b.txt", want: "Copying `/webdav/dir/a.txt' to `/webdav/dir/b.txt': +succeeded."},
		{cmd: "move b.txt c.txt", want: "Moving `/webdav/dir/b.txt' to `/webdav/dir/c.txt': +succeeded."},
		{cmd: "propset c.txt myprop myvalue", want: "Setting property on `c.txt': succeeded."},
		{cmd: "propget c.txt myprop", want: "Value of myprop is: myvalue"},
		// The property is on c.txt only, not on the copy source a.txt.
		{cmd: "propget a.txt myprop", want: "Could not fetch property: 404 Not Found", fails: true},
		// Locking: cadaver keeps the token and sends it with its own
		// writes (an If header), discover shows the lock as the server
		// reports it (neon reads "Second-N", not "Infinity"), unlock
		// removes it.
		{cmd: "lock c.txt", want: "Locking `c.txt': succeeded."},
		// cadaver asks for no expiry and gets the default maximum, 24h.
		{cmd: "discover c.txt", want: "Discovering locks on `c.txt':\nLock token <urn:uuid:.*>:\n  Depth 0 on `" + s.URL + "/webdav/dir/c.txt'\n  Scope: exclusive  Type: write  Timeout: 86400 seconds\n"},
		{cmd: "put upload.bin c.txt", want: "Uploading upload.bin to `/webdav/dir/c.txt': [.* succeeded.$"},
		{cmd: "unlock c.txt", want: "Unlocking `c.txt': succeeded."},
		{cmd: "discover c.txt", want: "Discovering locks on `c.txt':.*no locks found."},
		{cmd: `put upload.bin "` + unicodeName + `"`, want: "Uploading upload.bin to `/webdav/dir/%c3%9cn%c3%af%20%e2%80%93%20%e2%9c%93%20space.txt': [.* succeeded.$"},
		{cmd: "ls", want: "Listing collection `/webdav/dir/': succeeded.", listing: []string{"a.txt", "c.txt", unicodeName}, size: size},
		{cmd: "delete a.txt", want: "Deleting `a.txt': succeeded."},
		{cmd: "get a.txt missing.bin", want: "failed:\n404 Not Found", fails: true},
		{cmd: "ls", want: "Listing collection `/webdav/dir/': succeeded.", listing: []string{"c.txt", unicodeName}, size: size},
		{cmd: "cd ..", next: "/webdav/"},
		{cmd: "ls", want: "Listing collection `/webdav/': succeeded.", listing: []string{"Coll: dir"}},
		{cmd: "quit", want: "Connection to `127.0.0.1' closed."},
	})
	got, err := os.ReadFile(localCopy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, upload) {
		t.Errorf("cadaver get: downloaded %d bytes differ from the %d uploaded", len(got), len(upload))
	}

	// The server state after session 1, over plain HTTP.
	items := cadaverPropfind(t, s, "/webdav/dir/", "1")
	cadaverWantNames(t, "/webdav/dir/", items, []string{"/webdav/dir/", "/webdav/dir/c.txt", "/webdav/dir/" + unicodeName})
	if c := items["/webdav/dir/c.txt"]; c != nil {
		if c.props["DAV: getcontentlength"] != size {
			t.Errorf("c.txt getcontentlength = %q, want %s", c.props["DAV: getcontentlength"], size)
		}
		if v := c.props["http://webdav.org/cadaver/custom-properties/ myprop"]; v != "myvalue" {
			t.Errorf("c.txt dead property myprop = %q, want myvalue (props %v)", v, c.props)
		}
	}
	// After unlock, nothing is locked: a write without a token goes
	// through.
	if _, b := newClient(t, s.URL, "einstein").expect(http.StatusMultiStatus, "PROPFIND", "/webdav/dir/c.txt", lockDiscoveryBody, "Depth", "0"); strings.Contains(b, "activelock") {
		t.Errorf("c.txt is still locked after cadaver's unlock:\n%s", b)
	}
	for _, name := range []string{"c.txt", unicodeName} {
		if got := mustGet(t, s, "/webdav/dir/"+name); !bytes.Equal(got, upload) {
			t.Errorf("GET /webdav/dir/%s: %d bytes differ from the %d uploaded", name, len(got), len(upload))
		}
	}

	// Session 2: remove the property and the collection.
	cadaverSession(t, cadaver, home, work, s.URL+"/webdav/", []cadaverStep{
		{cmd: "cd dir", next: "/webdav/dir/"},
		{cmd: "propdel c.txt myprop", want: "Deleting property on `c.txt': succeeded."},
		{cmd: "propget c.txt myprop", want: "Could not fetch property: 404 Not Found", fails: true},
		{cmd: "delete c.txt", want: "Deleting `c.txt': succeeded."},
		{cmd: "cd ..", next: "/webdav/"},
		// rmcol deletes the collection with what it still holds.
		{cmd: "rmcol dir", want: "Deleting collection `dir': succeeded."},
		{cmd: "ls dir", want: "Listing collection `/webdav/dir/': failed:\n404 Not Found", fails: true},
		{cmd: "cd dir", want: "Could not access /webdav/dir/ (not WebDAV-enabled?):\n404 Not Found", fails: true, next: "/webdav/"},
		{cmd: "ls", want: "Listing collection `/webdav/': collection is empty."},
		{cmd: "quit", want: "Connection to `127.0.0.1' closed."},
	})
	root := cadaverPropfind(t, s, "/webdav/", "1")
	for href := range root {
		if strings.HasPrefix(href, "/webdav/dir") {
			t.Errorf("PROPFIND /webdav/ still lists %q after rmcol", href)
		}
	}
	if code := sendAs(t, s, "einstein", "PROPFIND", "/webdav/dir/", map[string]string{"Depth": "0"}, nil).code; code != http.StatusNotFound {
		t.Errorf("PROPFIND /webdav/dir/ after rmcol: %d, want 404", code)
	}

	// Session 3: a lock cadaver leaves behind (it does not unlock when it
	// quits) holds for everybody else, with the owner cadaver sent.
	cadaverSession(t, cadaver, home, work, s.URL+"/webdav/", []cadaverStep{
		{cmd: "set lockowner mailto:einstein@example.org"},
		// LOCK on an unmapped URL creates an empty file.
		{cmd: "lock held.txt", want: "Locking `held.txt': succeeded."},
		{cmd: "ls", want: "Listing collection `/webdav/': succeeded.", listing: []string{"held.txt"}, size: "0"},
		{cmd: "quit", want: "Connection to `127.0.0.1' closed."},
	})
	c := newClient(t, s.URL, "einstein")
	_, b := c.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/held.txt", lockDiscoveryBody, "Depth", "0")
	if !regexp.MustCompile(`<d:owner><([a-zA-Z]+:)?href( xmlns(:[a-zA-Z]+)?="DAV:")?>mailto:einstein@example.org</([a-zA-Z]+:)?href></d:owner>`).MatchString(b) {
		t.Errorf("the lock's owner is not the href cadaver sent:\n%s", b)
	}
	c.expect(http.StatusLocked, http.MethodPut, "/webdav/held.txt", "without the token")
	tokens := c.activeLockTokens("/webdav/held.txt")
	if len(tokens) != 1 {
		t.Fatalf("held.txt has locks %v, want cadaver's one", tokens)
	}
	c.expect(http.StatusNoContent, "UNLOCK", "/webdav/held.txt", "", "Lock-Token", "<"+tokens[0]+">")
	c.expect(http.StatusNoContent, http.MethodPut, "/webdav/held.txt", "unlocked")
}

// lockDiscoveryBody asks PROPFIND for the lock properties.
const lockDiscoveryBody = `<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:lockdiscovery/><d:supportedlock/></d:prop></d:propfind>`

// cadaverStep is one command of a session and what its output must show.
type cadaverStep struct {
	cmd string
	// want is a regular expression (multi-line mode) the output must match;
	// QuoteMeta is applied to everything but ".*", " +" and a final "$".
	want string
	// fails marks commands that must fail; others must not print "failed".
	fails bool
	// next is the working collection the following prompt must show.
	next string
	// listing are the entries an ls must print ("Coll: name" for
	// collections); other names are errors. Files must have size if set.
	listing []string
	size    string
}

var cadaverPrompt = regexp.MustCompile(`(?m)^dav:(/[^>]*)> (.*)$`)

// cadaverSession runs cadaver in dir on url with the steps as its script and
// checks every step's output.
func cadaverSession(t *testing.T, bin, home, dir, url string, steps []cadaverStep) {
	t.Helper()
	var script strings.Builder
	for _, s := range steps {
		script.WriteString(s.cmd + "\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, bin, url)
	cmd.Env = append(os.Environ(), "HOME="+home, "LC_ALL=C.UTF-8", "TERM=dumb")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(script.String())
	cmd.WaitDelay = 5 * time.Second
	raw, err := cmd.CombinedOutput()
	out := string(raw)
	if ctx.Err() != nil {
		t.Fatalf("cadaver timed out:\n%s", out)
	}
	if err != nil {
		t.Fatalf("cadaver: %v\n%s", err, out)
	}
	t.Logf("cadaver session:\n%s", out)
	if strings.Contains(out, "Authentication required") || strings.Contains(out, "Username:") {
		t.Fatalf("cadaver did not authenticate from ~/.netrc:\n%s", out)
	}

	// Split the output at the prompts, which echo the commands.
	prompts := cadaverPrompt.FindAllStringSubmatchIndex(out, -1)
	if len(prompts) != len(steps) {
		t.Fatalf("cadaver ran %d commands, want %d:\n%s", len(prompts), len(steps), out)
	}
	for i, step := range steps {
		p := prompts[i]
		if got := out[p[4]:p[5]]; got != step.cmd {
			t.Errorf("step %d: cadaver echoed %q, want %q", i, got, step.cmd)
		}
		end := len(out)
		if i+1 < len(prompts) {
			end = prompts[i+1][0]
			if step.next != "" && out[prompts[i+1][2]:prompts[i+1][3]] != step.next {
				t.Errorf("after %q the prompt is at %q, want %q", step.cmd, out[prompts[i+1][2]:prompts[i+1][3]], step.next)
			}
		}
		chunk := out[p[1]:end]
		if step.want != "" {
			if re := cadaverPattern(step.want); !re.MatchString(chunk) {
				t.Errorf("%q: output does not match %q:\n%s", step.cmd, re, chunk)
			}
		}
		if failed := strings.Contains(chunk, "failed") || strings.Contains(chunk, "Could not"); failed != step.fails {
			t.Errorf("%q: failed=%v, want %v:\n%s", step.cmd, failed, step.fails, chunk)
		}
		if step.listing != nil {
			cadaverCheckListing(t, step, chunk)
		}
	}
}

func cadaverPattern(want string) *regexp.Regexp {
	anchored := strings.HasSuffix(want, "$")
	want = strings.TrimSuffix(want, "$")
	var b strings.Builder
	b.WriteString("(?m)")
	for i, part := range strings.Split(want, ".*") {
		if i > 0 {
			b.WriteString(".*")
		}
		for j, sub := range strings.Split(part, " +") {
			if j > 0 {
				b.WriteString(" +")
			}
			b.WriteString(regexp.QuoteMeta(sub))
		}
	}
	if anchored {
		b.WriteString("$")
	}
	return regexp.MustCompile(b.String())
}

// cadaverLsLine is a line of cadaver's ls: an optional "Coll:" marker, the
// name, the size and the date.
var cadaverLsLine = regexp.MustCompile(`^(Coll:)?\s+(.+?)\s+(\d+)\s+\w{3}\s+\d+\s+[\d:]+$`)

func cadaverCheckListing(t *testing.T, step cadaverStep, chunk string) {
	t.Helper()
	var got []string
	for _, line := range strings.Split(chunk, "\n") {
		m := cadaverLsLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := m[2]
		if m[1] != "" {
			name = "Coll: " + name
		} else if step.size != "" && m[3] != step.size {
			t.Errorf("%q: %s has size %s, want %s", step.cmd, name, m[3], step.size)
		}
		got = append(got, name)
	}
	want := append([]string(nil), step.listing...)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%q listed %q, want %q:\n%s", step.cmd, got, want, chunk)
	}
}

// cadaverItem is a PROPFIND response: its properties as "namespace local"
// to text, for 200 propstats.
type cadaverItem struct {
	props map[string]string
}

// cadaverPropfind runs an allprop PROPFIND (plus the dead property myprop)
// as einstein and returns the responses by unescaped href.
func cadaverPropfind(t *testing.T, s *server, p, depth string) map[string]*cadaverItem {
	t.Helper()
	body := `<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:allprop/><d:include><C:myprop xmlns:C="http://webdav.org/cadaver/custom-properties/"/></d:include></d:propfind>`
	items := map[string]*cadaverItem{}
	for _, r := range newClient(t, s.URL, "einstein").propfind((&url.URL{Path: p}).EscapedPath(), depth, body) {
		u, err := url.PathUnescape(r.href)
		if err != nil {
			t.Fatalf("PROPFIND %s: bad href %q", p, r.href)
		}
		if _, dup := items[u]; dup {
			t.Errorf("PROPFIND %s: %q listed twice", p, u)
		}
		items[u] = &cadaverItem{props: r.props}
	}
	return items
}

func cadaverWantNames(t *testing.T, p string, items map[string]*cadaverItem, want []string) {
	t.Helper()
	var got []string
	for href := range items {
		got = append(got, href)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("PROPFIND %s lists %q, want %q", p, got, want)
	}
}
