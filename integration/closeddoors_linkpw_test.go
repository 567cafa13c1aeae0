package integration

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// The figures the link password burst must keep to (issue 31): another
// user's listing stays quick and the server small.
const (
	linkpwGuesses         = 250
	linkpwMaxCompared     = 10
	linkpwMaxPropfindP99  = 200 * time.Millisecond
	linkpwMaxResidentKB   = 300 << 10
	linkpwMinListingsTime = 2 * time.Second
)

// TestClosedDoorsLinkPasswordBurst sends 250 wrong passwords of a
// protected link at once from one address while marie lists her folder:
// at most 10 are compared (401), the others are refused without a compare
// (429 with Retry-After and the WebDAV error body); the right password
// afterwards is refused too, since the block holds for the address;
// marie's PROPFIND Depth 1 stays under 200 ms at p99 and the server under
// 300 MB resident.
func TestClosedDoorsLinkPasswordBurst(t *testing.T) {
	s, links := startWithLinks(t, seedLinkTree, linkSpec{item: "shared", role: storage.ShareViewer, password: linkPassword})
	link := links[0]
	marie := newClient(t, s.URL, "marie")
	marie.expect(http.StatusCreated, "MKCOL", "/webdav/papers", "")
	for i := range 50 {
		marie.expect(http.StatusCreated, "PUT", fmt.Sprintf("/webdav/papers/p%02d.txt", i), "paper")
	}
	pid := s.cmd.Process.Pid
	cpuBefore := processCPU(t, pid)

	var (
		codes    map[int]int
		listings []time.Duration
		burst    time.Duration
	)
	hwm, _ := peakDuring(t, pid, func() {
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { listings = bystanderListings(t, marie, "/webdav/papers", done) })
		start := time.Now()
		codes = linkpwGuessAtOnce(t, publicURL(s, link, "/report.txt"), linkpwGuesses)
		burst = time.Since(start)
		time.Sleep(max(linkpwMinListingsTime-burst, 0))
		close(done)
		wg.Wait()
	})
	cpu := processCPU(t, pid) - cpuBefore
	p50, p99, worst := percentile(listings, 50), percentile(listings, 99), slices.Max(listings)
	t.Logf("%d wrong passwords at once in %v: answers %v; server CPU %v; marie's %d PROPFIND Depth 1: p50 %v, p99 %v, max %v; VmHWM %d kB",
		linkpwGuesses, burst.Round(time.Millisecond), codes, cpu, len(listings), p50, p99, worst, hwm)

	if codes[http.StatusUnauthorized] > linkpwMaxCompared || codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests] != linkpwGuesses {
		t.Errorf("answers %v: want at most %d compared (401), every other one 429", codes, linkpwMaxCompared)
	}
	if p99 >= linkpwMaxPropfindP99 {
		t.Errorf("marie's PROPFIND p99 %v during the burst, want under %v", p99, linkpwMaxPropfindP99)
	}
	if hwm >= linkpwMaxResidentKB {
		t.Errorf("VmHWM %d kB during the burst, want under %d kB", hwm, linkpwMaxResidentKB)
	}

	// The right password from the same address: the block holds.
	code, header, body := linkpwGuess(publicURL(s, link, "/report.txt"), linkPassword)
	if code != http.StatusTooManyRequests || header.Get("Retry-After") == "" || !strings.Contains(body, "<s:message>Too many wrong passwords") {
		t.Fatalf("the right password after the burst: %d, Retry-After %q\n%s", code, header.Get("Retry-After"), body)
	}
}

// linkpwGuessAtOnce sends n GETs of url with a wrong password at once and
// counts the answers by status. A 429 must say when to retry and carry
// the WebDAV error body.
func linkpwGuessAtOnce(t *testing.T, url string, n int) map[int]int {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
		ready = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-ready
			code, header, body := linkpwGuess(url, fmt.Sprintf("wrong password %d", i))
			if code == http.StatusTooManyRequests && (header.Get("Retry-After") == "" || !strings.Contains(body, "<d:error")) {
				t.Errorf("a 429 without Retry-After or error body: %q\n%s", header.Get("Retry-After"), body)
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		})
	}
	close(ready)
	wg.Wait()
	return codes
}

// linkpwClient sends the guesses, each on a connection of its own.
var linkpwClient = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: -1, DisableKeepAlives: true}}

// linkpwGuess GETs url with password as the link's; a transport error is
// status 0.
func linkpwGuess(url, password string) (int, http.Header, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err.Error()
	}
	req.SetBasicAuth("public", password)
	resp, err := linkpwClient.Do(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestClosedDoorsLinkPasswordCluster guesses a link's password on both
// nodes of a cluster, five wrong passwords on each: the budget is the
// cluster's, so the right password is then refused on either node.
func TestClosedDoorsLinkPasswordCluster(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOptions{})
	einstein := newClient(t, c.lb.URL, "einstein")
	einstein.expect(http.StatusCreated, "MKCOL", "/webdav/shared", "")
	einstein.expect(http.StatusCreated, "PUT", "/webdav/shared/report.txt", "the report")
	link := ocsCall[ocsShare](einstein, http.StatusOK, "POST", "/shares", url.Values{
		"path": {"/shared/"}, "shareType": {"3"}, "password": {linkPassword}})
	file := func(n *clusterNode) string { return n.URL + "/dav/public-files/" + link.Token + "/report.txt" }
	for i := range linkpwMaxCompared {
		node := c.nodes[i%len(c.nodes)]
		if code, _, body := linkpwGuess(file(node), "wrong password"); code != http.StatusUnauthorized {
			t.Fatalf("wrong password #%d: %d, want 401\n%s", i+1, code, body)
		}
	}
	for i, node := range c.nodes {
		code, header, _ := linkpwGuess(file(node), linkPassword)
		t.Logf("node %d: the right password after %d wrong ones on both nodes: %d, Retry-After %s", i, linkpwMaxCompared, code, header.Get("Retry-After"))
		if code != http.StatusTooManyRequests {
			t.Errorf("node %d: the right password after %d wrong ones on both nodes: %d, want 429", i, linkpwMaxCompared, code)
		}
	}
}
