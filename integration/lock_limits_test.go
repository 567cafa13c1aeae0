package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/davhandler"
)

// listingEntries is how many files the locked project root holds: a
// listing of a few hundred entries, each covered by every lock of the root.
const listingEntries = 300

// TestLockLimitsBoundListings: an editor's 50 shared Depth-infinity LOCKs
// with the largest owner allowed on a project root get as many locks as
// one resource may be covered by, and 8 viewers listing the root at once
// with d:lockdiscovery get answers bounded by entries × that cap, while the
// server stays under 200 MB of resident memory.
func TestLockLimitsBoundListings(t *testing.T) {
	t.Parallel()
	s := startServer(t, serverOptions{})
	einstein := newClient(t, s.URL, "einstein")
	physics := physicsPath(t, einstein)
	for i := range listingEntries {
		einstein.expect(http.StatusCreated, "PUT", fmt.Sprintf("%sf%03d.txt", physics, i), "x")
	}

	marie := newClient(t, s.URL, "marie")
	largest := strings.Repeat("o", davhandler.DefaultMaxLockOwnerBytes)
	lockRoot := func(owner string) (*http.Response, string) {
		return marie.do("LOCK", physics, lockInfo("shared", owner), "Depth", "infinity", "Timeout", "Second-600")
	}
	resp, b := lockRoot(largest + "o")
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("LOCK with an owner over the cap: %d, want 400\n%s", resp.StatusCode, b)
	}
	wantDAVError(t, b, "BadRequest")
	granted := 0
	for range 50 {
		resp, b := lockRoot(largest)
		switch resp.StatusCode {
		case http.StatusOK:
			granted++
		case http.StatusLocked:
			wantDAVError(t, b, "Locked")
		default:
			t.Fatalf("LOCK: %d\n%s", resp.StatusCode, b)
		}
	}
	if granted != davhandler.DefaultMaxLocksCovering {
		t.Fatalf("%d of 50 shared locks granted on the root, want the cap of %d", granted, davhandler.DefaultMaxLocksCovering)
	}

	before := peakRSS(t, s)
	const listers = 8
	answers := make([]listingCount, listers)
	errs := make([]error, listers)
	var wg sync.WaitGroup
	for i := range listers {
		wg.Go(func() { answers[i], errs[i] = countLockListing(s.URL, physics) })
	}
	wg.Wait()
	peak := peakRSS(t, s)
	// Each lock shows its owner and 300-odd bytes of elements around it.
	const perLock = davhandler.DefaultMaxLockOwnerBytes + 512
	bound := int64(listingEntries+1) * (davhandler.DefaultMaxLocksCovering*perLock + 2048)
	for i, a := range answers {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if a.responses != listingEntries+1 || a.mostLocks != davhandler.DefaultMaxLocksCovering {
			t.Fatalf("listing: %d entries, at most %d locks on one, want %d entries with %d", a.responses, a.mostLocks, listingEntries+1, davhandler.DefaultMaxLocksCovering)
		}
		if a.bytes > bound {
			t.Fatalf("listing of %d bytes, more than entries × the caps (%d)", a.bytes, bound)
		}
	}
	t.Logf("%d locks granted of 50; a Depth 1 listing of %d entries with d:lockdiscovery is %.1f MiB; peak RSS %.1f MiB before the %d listings, %.1f MiB after",
		granted, listingEntries+1, float64(answers[0].bytes)/(1<<20), float64(before)/(1<<20), listers, float64(peak)/(1<<20))
	if peak >= 200<<20 {
		t.Fatalf("peak RSS %d MiB, want under 200 MiB", peak>>20)
	}
}

// listingCount is what countLockListing saw of a multistatus.
type listingCount struct {
	bytes     int64
	responses int
	mostLocks int // d:activelock elements in one d:response
}

// countLockListing lists folder as the viewer richard with d:lockdiscovery
// (Depth 1), counting the answer as it streams in: the test must not hold
// 8 answers of tens of MiB, nor parse them under -race.
func countLockListing(base, folder string) (listingCount, error) {
	req, err := http.NewRequest("PROPFIND", base+folder, strings.NewReader(lockDiscoveryBody))
	if err != nil {
		return listingCount{}, err
	}
	req.SetBasicAuth("richard", users["richard"])
	req.Header.Set("Depth", "1")
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return listingCount{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusMultiStatus {
		return listingCount{}, fmt.Errorf("PROPFIND %s: %d", folder, resp.StatusCode)
	}
	var c elementCounter
	n, err := io.Copy(&c, resp.Body)
	c.endResponse()
	c.result.bytes = n
	return c.result, err
}

// elementCounter counts d:response and d:activelock start tags in a
// stream, keeping across writes only the bytes a tag split between them
// needs.
type elementCounter struct {
	carry  []byte
	locks  int
	result listingCount
}

var (
	responseTag   = []byte("<d:response>")
	activeLockTag = []byte("<d:activelock>")
)

func (c *elementCounter) Write(p []byte) (int, error) {
	buf := append(c.carry, p...)
	for {
		r, l := bytes.Index(buf, responseTag), bytes.Index(buf, activeLockTag)
		switch {
		case r >= 0 && (l < 0 || r < l):
			c.endResponse()
			c.result.responses++
			buf = buf[r+len(responseTag):]
			continue
		case l >= 0:
			c.locks++
			buf = buf[l+len(activeLockTag):]
			continue
		}
		break
	}
	keep := min(len(buf), len(activeLockTag)-1)
	c.carry = append(c.carry[:0], buf[len(buf)-keep:]...)
	return len(p), nil
}

// endResponse closes the count of the d:response read so far.
func (c *elementCounter) endResponse() {
	c.result.mostLocks = max(c.result.mostLocks, c.locks)
	c.locks = 0
}

// peakRSS is the server's peak resident set size so far (VmHWM), in bytes.
func peakRSS(t *testing.T, s *server) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc to read the server's memory from: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", s.cmd.Process.Pid)
	return 0
}

// TestManagerAndReloadFreeLocks: a manager can UNLOCK an editor's lock,
// and once a reload takes the editor out of the space their locks no
// longer block writes and no longer show.
func TestManagerAndReloadFreeLocks(t *testing.T) {
	t.Parallel()
	s := startReloadable(t)
	einstein, marie := newClient(t, s.URL, "einstein"), newClient(t, s.URL, "marie")
	physics := physicsPath(t, einstein)
	einstein.expect(http.StatusCreated, "PUT", physics+"a.txt", "a")
	einstein.expect(http.StatusCreated, "MKCOL", physics+"d", "")
	einstein.expect(http.StatusCreated, "PUT", physics+"d/b.txt", "b")
	a := marie.lock(http.StatusOK, physics+"a.txt", "exclusive", "0")
	marie.lock(http.StatusOK, physics+"d", "exclusive", "infinity")
	einstein.expect(http.StatusLocked, "PUT", physics+"a.txt", "changed")
	einstein.expect(http.StatusLocked, "PUT", physics+"d/b.txt", "changed")

	// The viewer cannot remove the editor's lock; the manager can.
	richard := newClient(t, s.URL, "richard")
	richard.expect(http.StatusConflict, "UNLOCK", physics+"a.txt", "", "Lock-Token", "<"+a+">")
	einstein.expect(http.StatusNoContent, "UNLOCK", physics+"a.txt", "", "Lock-Token", "<"+a+">")
	einstein.expect(http.StatusNoContent, "PUT", physics+"a.txt", "changed")

	// marie leaves the space: her Depth-infinity lock on d stops counting
	// at once, for writes and for listings.
	s.load(t, "\t\t\teditor marie\n", "")
	einstein.expect(http.StatusNoContent, "PUT", physics+"d/b.txt", "changed")
	einstein.expect(http.StatusCreated, "PUT", physics+"d/c.txt", "new")
	for _, p := range []string{physics + "d/", physics + "d/b.txt"} {
		if tokens := einstein.activeLockTokens(p); len(tokens) != 0 {
			t.Fatalf("%s still shows the locks of a former editor: %v", p, tokens)
		}
	}
	einstein.lock(http.StatusOK, physics+"d", "exclusive", "infinity")
}

// TestLockCapsRefuseWith423: beyond what a user's locks may cost
// (lock_bytes_per_user) or count (locks_per_user, still honoured) in a
// space, a LOCK of a new file is 423 with no-conflicting-lock, never 507,
// which davfs2 and other clients read as a full disk; the file is not
// left behind, and another user locks on.
func TestLockCapsRefuseWith423(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		setting string
		granted func(n int) bool
	}{
		// A lock costs 512 bytes and its text: 4 KiB hold a few.
		{"lock_bytes_per_user 4KiB", func(n int) bool { return n >= 3 && n < 8 }},
		{"locks_per_user 2", func(n int) bool { return n == 2 }},
	} {
		t.Run(tt.setting, func(t *testing.T) {
			s := startServer(t, serverOptions{davspaces: []string{tt.setting}})
			einstein, marie := newClient(t, s.URL, "einstein"), newClient(t, s.URL, "marie")
			physics := physicsPath(t, einstein)
			granted := 0
			for i := range 10 {
				p := fmt.Sprintf("%snew%d.txt", physics, i)
				resp, b := marie.do("LOCK", p, lockInfo("exclusive", "marie"), "Timeout", "Second-600")
				if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusCreated {
					granted++
					continue
				}
				if resp.StatusCode != http.StatusLocked {
					t.Fatalf("LOCK of new file %d beyond the cap: %d, want 423\n%s", i+1, resp.StatusCode, b)
				}
				wantDAVError(t, b, "Locked")
				if !strings.Contains(b, "<d:no-conflicting-lock") {
					t.Fatalf("the 423 names no precondition:\n%s", b)
				}
				einstein.expect(http.StatusNotFound, "GET", p, "")
			}
			if !tt.granted(granted) {
				t.Fatalf("%d of 10 locks granted under %s", granted, tt.setting)
			}
			einstein.expect(http.StatusCreated, "PUT", physics+"theirs.txt", "x")
			einstein.lock(http.StatusOK, physics+"theirs.txt", "exclusive", "0")
		})
	}
}
