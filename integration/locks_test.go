package integration

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/davspaces/davspaces/davhandler"
	"github.com/davspaces/davspaces/internal/testidp"
)

// lockers is how many clients race for one lock: enough for the requests
// to overlap on two cores, few enough to stay fast under -race.
const lockers = 20

// lockInfo is a LOCK body asking for a write lock of scope (exclusive or
// shared) for owner.
func lockInfo(scope, owner string) string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?>
<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:%s/></d:lockscope><d:locktype><d:write/></d:locktype><d:owner>%s</d:owner></d:lockinfo>`, scope, owner)
}

// lockResult is the answer to one LOCK: its status, the token of the
// Lock-Token header without the angle brackets, and the body.
type lockResult struct {
	status int
	token  string
	body   string
	err    error
}

// tryLock sends a LOCK from any goroutine.
func (c *client) tryLock(p, scope, depth string) lockResult {
	header := map[string]string{"Timeout": "Second-600", "Depth": depth, "Content-Type": "application/xml"}
	resp, b, err := c.try("LOCK", p, header, []byte(lockInfo(scope, c.user)))
	if err != nil {
		return lockResult{err: err}
	}
	token := strings.TrimSuffix(strings.TrimPrefix(resp.Header.Get("Lock-Token"), "<"), ">")
	return lockResult{status: resp.StatusCode, token: token, body: string(b)}
}

// lock takes a lock that must be granted with status and returns its token.
func (c *client) lock(status int, p, scope, depth string) string {
	c.t.Helper()
	r := c.tryLock(p, scope, depth)
	if r.err != nil {
		c.t.Fatal(r.err)
	}
	if r.status != status {
		c.t.Fatalf("LOCK %s (%s, Depth %s): %d, want %d\n%s", p, scope, depth, r.status, status, r.body)
	}
	if !strings.HasPrefix(r.token, "urn:uuid:") && !strings.HasPrefix(r.token, "opaquelocktoken:") {
		c.t.Fatalf("LOCK %s: Lock-Token %q is not a lock token URI", p, r.token)
	}
	return r.token
}

// refuseLock sends a LOCK that must be refused with 423.
func (c *client) refuseLock(p, scope, depth string) {
	c.t.Helper()
	r := c.tryLock(p, scope, depth)
	if r.err != nil {
		c.t.Fatal(r.err)
	}
	if r.status != http.StatusLocked {
		c.t.Errorf("LOCK %s (%s, Depth %s) over a conflicting lock: %d, want 423\n%s", p, scope, depth, r.status, r.body)
	}
}

// lockRace sends one LOCK per path at once, each from its own goroutine,
// and returns the results in the order of paths.
func lockRace(t *testing.T, c *client, scope, depth string, paths []string) []lockResult {
	t.Helper()
	results := make([]lockResult, len(paths))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = c.tryLock(p, scope, depth)
		}()
	}
	close(start)
	wg.Wait()
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("LOCK %s: %v", paths[i], r.err)
		}
	}
	return results
}

// statusCounts counts results by status.
func statusCounts(results []lockResult) map[int]int {
	counts := map[int]int{}
	for _, r := range results {
		counts[r.status]++
	}
	return counts
}

// activeLockTokens reads the tokens of the locks PROPFIND reports on p.
func (c *client) activeLockTokens(p string) []string {
	c.t.Helper()
	_, b := c.expect(http.StatusMultiStatus, "PROPFIND", p, lockDiscoveryBody, "Depth", "0")
	var ms struct {
		Responses []struct {
			Propstats []struct {
				Locks []struct {
					Token string `xml:"locktoken>href"`
				} `xml:"prop>lockdiscovery>activelock"`
			} `xml:"propstat"`
		} `xml:"response"`
	}
	if err := xml.Unmarshal([]byte(b), &ms); err != nil {
		c.t.Fatalf("PROPFIND %s: %v\n%s", p, err, b)
	}
	var tokens []string
	for _, r := range ms.Responses {
		for _, ps := range r.Propstats {
			for _, l := range ps.Locks {
				tokens = append(tokens, strings.TrimSpace(l.Token))
			}
		}
	}
	return tokens
}

func repeat(p string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = p
	}
	return out
}

// TestLockRace has many clients lock the same resources at once against the
// real server: of exclusive locks on one file exactly one is granted and
// every other refused with 423; shared locks coexist; an exclusive Depth
// infinity lock on a folder and the locks of its members exclude each other.
func TestLockRace(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	c := newClient(t, s.URL, "einstein")

	t.Run("exclusive", func(t *testing.T) {
		c := c.in(t)
		c.expect(http.StatusCreated, "PUT", "/webdav/exclusive.txt", "contended")
		counts := statusCounts(lockRace(t, c, "exclusive", "0", repeat("/webdav/exclusive.txt", lockers)))
		if counts[http.StatusOK] != 1 || counts[http.StatusLocked] != lockers-1 {
			t.Errorf("%d exclusive LOCKs at once: statuses %v, want one 200 and %d 423", lockers, counts, lockers-1)
		}
		if got := c.activeLockTokens("/webdav/exclusive.txt"); len(got) != 1 {
			t.Errorf("lockdiscovery lists %d locks, want the one granted: %v", len(got), got)
		}
	})

	t.Run("shared", func(t *testing.T) {
		c := c.in(t)
		c.expect(http.StatusCreated, "PUT", "/webdav/shared.txt", "shared")
		results := lockRace(t, c, "shared", "0", repeat("/webdav/shared.txt", lockers))
		// Shared locks coexist up to the cap on locks covering one
		// resource, which holds however many arrive at once.
		granted := min(lockers, davhandler.DefaultMaxLocksCovering)
		if counts := statusCounts(results); counts[http.StatusOK] != granted || counts[http.StatusLocked] != lockers-granted {
			t.Errorf("%d shared LOCKs at once: statuses %v, want %d 200 and the rest 423; one answer:\n%s", lockers, counts, granted, results[0].body)
		}
		tokens := map[string]bool{}
		for _, r := range results {
			if r.status == http.StatusOK {
				tokens[r.token] = true
			}
		}
		if len(tokens) != granted {
			t.Errorf("%d shared locks got %d distinct tokens", granted, len(tokens))
		}
		listed := c.activeLockTokens("/webdav/shared.txt")
		for _, tok := range listed {
			delete(tokens, tok)
		}
		if len(listed) != granted || len(tokens) != 0 {
			t.Errorf("lockdiscovery lists %d locks, missing %v", len(listed), tokens)
		}
		// An exclusive lock conflicts with the shared ones.
		c.refuseLock("/webdav/shared.txt", "exclusive", "0")
	})

	t.Run("folder then member", func(t *testing.T) {
		c := c.in(t)
		makeTree(c, "/webdav/tree1")
		c.lock(http.StatusOK, "/webdav/tree1/", "exclusive", "infinity")
		for _, p := range []string{"/webdav/tree1/a.txt", "/webdav/tree1/sub/", "/webdav/tree1/sub/b.txt", "/webdav/tree1/sub/new.txt"} {
			for _, scope := range []string{"exclusive", "shared"} {
				c.refuseLock(p, scope, "0")
			}
		}
		// The lock's own root, shared or not, conflicts too.
		c.refuseLock("/webdav/tree1/", "shared", "0")
	})

	t.Run("member then folder", func(t *testing.T) {
		c := c.in(t)
		makeTree(c, "/webdav/tree2")
		c.lock(http.StatusOK, "/webdav/tree2/sub/b.txt", "shared", "0")
		c.refuseLock("/webdav/tree2/", "exclusive", "infinity")
		c.refuseLock("/webdav/tree2/sub/", "exclusive", "infinity")
		// A Depth 0 lock of the folder does not cover its members.
		c.lock(http.StatusOK, "/webdav/tree2/", "exclusive", "0")
	})

	t.Run("folder and members at once", func(t *testing.T) {
		c := c.in(t)
		makeTree(c, "/webdav/tree3")
		var members []string
		for i := range lockers - 1 {
			p := fmt.Sprintf("/webdav/tree3/sub/m%d.txt", i)
			c.expect(http.StatusCreated, "PUT", p, "member")
			members = append(members, p)
		}
		// The folder's lock is first in line but not first to arrive.
		paths := append([]string{"/webdav/tree3/"}, members...)
		results := lockRace(t, c, "exclusive", "infinity", paths)
		folder, memberCounts := results[0].status, statusCounts(results[1:])
		switch folder {
		case http.StatusOK:
			// Granted: it came before every member's lock, which must all
			// have been refused.
			if memberCounts[http.StatusLocked] != len(members) {
				t.Errorf("the folder was locked, yet its members got %v, want all 423", memberCounts)
			}
		case http.StatusLocked:
			// Refused: some member was locked first. Members never
			// conflict with each other, so every one was granted.
			if memberCounts[http.StatusOK] != len(members) {
				t.Errorf("the folder lock was refused, its members got %v, want all 200", memberCounts)
			}
		default:
			t.Errorf("the folder's LOCK: %d, want 200 or 423\n%s", folder, results[0].body)
		}
	})
}

// makeTree creates folder with a.txt, sub/ and sub/b.txt.
func makeTree(c *client, folder string) {
	c.t.Helper()
	c.expect(http.StatusCreated, "MKCOL", folder, "")
	c.expect(http.StatusCreated, "PUT", folder+"/a.txt", "a")
	c.expect(http.StatusCreated, "MKCOL", folder+"/sub", "")
	c.expect(http.StatusCreated, "PUT", folder+"/sub/b.txt", "b")
}

// TestLocksSurviveRestart: a lock taken before Caddy stops (abruptly, as
// in a crash) still holds after it starts again on the same data: a write
// without its token is refused, one with the token in an If header or, as
// ownCloud clients send it, a Lock-Token header goes through.
func TestLocksSurviveRestart(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "data")
	s := startServer(t, serverOptions{root: root})
	c := newClient(t, s.URL, "einstein")
	c.expect(http.StatusCreated, "PUT", "/webdav/locked.txt", "before")
	token := c.lock(http.StatusOK, "/webdav/locked.txt", "exclusive", "0")
	s.kill()

	s = startServer(t, serverOptions{root: root})
	c = newClient(t, s.URL, "einstein")
	if got := c.activeLockTokens("/webdav/locked.txt"); len(got) != 1 || got[0] != token {
		t.Fatalf("lockdiscovery after restart: %v, want [%s]", got, token)
	}
	_, b := c.expect(http.StatusLocked, "PUT", "/webdav/locked.txt", "without the token")
	if !strings.Contains(b, "lock-token-submitted") || !strings.Contains(b, "/webdav/locked.txt") {
		t.Errorf("423 body does not name the locked resource in d:lock-token-submitted:\n%s", b)
	}
	c.expect(http.StatusNoContent, "PUT", "/webdav/locked.txt", "with If", "If", "(<"+token+">)")
	c.expect(http.StatusNoContent, "PUT", "/webdav/locked.txt", "with Lock-Token", "Lock-Token", "<"+token+">")
	if _, b := c.expect(http.StatusOK, "GET", "/webdav/locked.txt", ""); b != "with Lock-Token" {
		t.Errorf("content %q, want the last PUT's", b)
	}
	c.expect(http.StatusNoContent, "UNLOCK", "/webdav/locked.txt", "", "Lock-Token", "<"+token+">")
	c.expect(http.StatusNoContent, "PUT", "/webdav/locked.txt", "unlocked")
}

// TestLockTokensOfOthers: a lock token is worth nothing in the hands of
// anyone but its owner. A non-member who has the token of a lock in a space
// gets the 404 of a missing file for LOCK, UNLOCK and writes there, a
// member who is not the lock's owner cannot use or remove it, a viewer
// cannot lock, and the lock stays in place throughout.
func TestLockTokensOfOthers(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	owner := newClient(t, s.URL, "einstein")
	editor := newClient(t, s.URL, "marie")
	outsider := newClient(t, s.URL, "richard") // viewer of Physics, no member of einstein's space
	personal := "/dav/spaces/" + personalSpaceRef(t, s, "einstein")
	project := "/dav/spaces/" + projectSpaceRef(personalSpaceRef(t, s, "einstein"), "Physics")
	owner.expect(http.StatusCreated, "PUT", personal+"/doc.txt", "einstein's")
	owner.expect(http.StatusCreated, "PUT", project+"/doc.txt", "the team's")
	personalToken := owner.lock(http.StatusOK, personal+"/doc.txt", "exclusive", "0")
	projectToken := owner.lock(http.StatusOK, project+"/doc.txt", "exclusive", "0")
	notFound := notFoundAnswers(outsider)[http.MethodGet]

	t.Run("non-member with the token", func(t *testing.T) {
		c := outsider.in(t)
		for _, req := range []struct {
			method, body string
			hdr          []string
		}{
			{"UNLOCK", "", []string{"Lock-Token", "<" + personalToken + ">"}},
			{"LOCK", "", []string{"If", "(<" + personalToken + ">)", "Timeout", "Second-60"}},
			{"LOCK", lockInfo("shared", "richard"), []string{"If", "(<" + personalToken + ">)"}},
			{http.MethodPut, "stolen", []string{"If", "(<" + personalToken + ">)"}},
			{http.MethodPut, "stolen", []string{"Lock-Token", "<" + personalToken + ">"}},
			{http.MethodDelete, "", []string{"If", "(<" + personalToken + ">)"}},
		} {
			resp, body := c.do(req.method, personal+"/doc.txt", req.body, req.hdr...)
			notFound.check(t, req.method+" with the owner's token", resp, []byte(body))
		}
	})

	t.Run("own file, another's token", func(t *testing.T) {
		c := outsider.in(t)
		c.expect(http.StatusCreated, "PUT", "/webdav/mine.txt", "richard's")
		_, b := c.expect(http.StatusConflict, "UNLOCK", "/webdav/mine.txt", "", "Lock-Token", "<"+personalToken+">")
		wantDAVError(t, b, "Conflict")
	})

	t.Run("viewer", func(t *testing.T) {
		c := outsider.in(t)
		r := c.tryLock(project+"/doc.txt", "shared", "0")
		if r.err != nil || r.status != http.StatusForbidden {
			t.Errorf("a viewer's LOCK: %d %v, want 403\n%s", r.status, r.err, r.body)
		}
	})

	t.Run("editor with the owner's token", func(t *testing.T) {
		c := editor.in(t)
		_, b := c.expect(http.StatusConflict, "UNLOCK", project+"/doc.txt", "", "Lock-Token", "<"+projectToken+">")
		wantDAVError(t, b, "Conflict")
		c.expect(http.StatusLocked, "PUT", project+"/doc.txt", "marie's", "If", "(<"+projectToken+">)")
		c.expect(http.StatusLocked, "PUT", project+"/doc.txt", "marie's", "Lock-Token", "<"+projectToken+">")
		c.expect(http.StatusLocked, "DELETE", project+"/doc.txt", "", "If", "(<"+projectToken+">)")
	})

	for p, token := range map[string]string{personal + "/doc.txt": personalToken, project + "/doc.txt": projectToken} {
		if got := owner.activeLockTokens(p); len(got) != 1 || got[0] != token {
			t.Errorf("%s: locks %v after the others' attempts, want [%s]", p, got, token)
		}
	}
	if _, b := owner.expect(http.StatusOK, "GET", project+"/doc.txt", ""); b != "the team's" {
		t.Errorf("the locked project file changed to %q", b)
	}
	if _, b := owner.expect(http.StatusOK, "GET", personal+"/doc.txt", ""); b != "einstein's" {
		t.Errorf("the locked personal file changed to %q", b)
	}
}

// TestLockCORS: the example's CORS snippet lets a browser client of an
// allowed origin lock: the preflight allows LOCK and UNLOCK and the headers
// they carry, and the answer exposes the Lock-Token header. The client
// signs in with a token: another origin's state changes with Basic
// credentials are refused (package samesite).
func TestLockCORS(t *testing.T) {
	t.Parallel()
	idp := testidp.Start(t, testidp.Options{})
	s := startServer(t, serverOptions{issuer: idp.Issuer})
	const origin = "https://localhost:9200"
	anonymous := newClient(t, s.URL, "")
	for _, method := range []string{"LOCK", "UNLOCK"} {
		resp, _ := anonymous.do(http.MethodOptions, "/webdav/f.txt", "",
			"Origin", origin, "Access-Control-Request-Method", method, "Access-Control-Request-Headers", "if, lock-token, timeout")
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("preflight for %s: %d", method, resp.StatusCode)
		}
		// Methods are case-sensitive, header names are not.
		if allowed := listHeader(resp.Header, "Access-Control-Allow-Methods", strings.Clone); !allowed[method] {
			t.Errorf("preflight for %s: Access-Control-Allow-Methods %q", method, resp.Header.Get("Access-Control-Allow-Methods"))
		}
		allowed := listHeader(resp.Header, "Access-Control-Allow-Headers", http.CanonicalHeaderKey)
		for _, h := range []string{"If", "Lock-Token", "Timeout"} {
			if !allowed[http.CanonicalHeaderKey(h)] {
				t.Errorf("preflight for %s: Access-Control-Allow-Headers %q lacks %s", method, resp.Header.Get("Access-Control-Allow-Headers"), h)
			}
		}
	}
	c := &client{t: t, base: s.URL, token: idp.Token(t, "alice"), http: http.DefaultClient}
	resp, b := c.do("LOCK", "/webdav/f.txt", lockInfo("exclusive", "alice"), "Origin", origin)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("LOCK of a new file: %d\n%s", resp.StatusCode, b)
	}
	if !listHeader(resp.Header, "Access-Control-Expose-Headers", http.CanonicalHeaderKey)["Lock-Token"] {
		t.Errorf("LOCK answer: Access-Control-Expose-Headers %q lacks Lock-Token", resp.Header.Get("Access-Control-Expose-Headers"))
	}
}

// listHeader reads a comma-separated header as a set of items, each as
// norm makes it.
func listHeader(h http.Header, name string, norm func(string) string) map[string]bool {
	set := map[string]bool{}
	for _, v := range h.Values(name) {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				set[norm(item)] = true
			}
		}
	}
	return set
}

// TestLockTimeoutMax: the Caddyfile's lock_timeout_max caps what a client
// asks for, in the LOCK answer and in lockdiscovery alike.
func TestLockTimeoutMax(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{davspaces: []string{"lock_timeout_max 10m"}})
	c := newClient(t, s.URL, "einstein")
	for i, timeout := range []string{"Infinite", "Second-4100000000", "Infinite, Second-60"} {
		p := fmt.Sprintf("/webdav/capped-%d.txt", i)
		_, b := c.expect(http.StatusCreated, "LOCK", p, lockInfo("exclusive", "einstein"), "Timeout", timeout)
		if !strings.Contains(b, "<d:timeout>Second-600</d:timeout>") {
			t.Errorf("LOCK with Timeout %q: want Second-600 in\n%s", timeout, b)
		}
		_, b = c.expect(http.StatusMultiStatus, "PROPFIND", p, lockDiscoveryBody, "Depth", "0")
		if !regexp.MustCompile(`<d:timeout>Second-(600|59\d)</d:timeout>`).MatchString(b) {
			t.Errorf("lockdiscovery after a LOCK with Timeout %q: want about Second-600 in\n%s", timeout, b)
		}
	}
}
