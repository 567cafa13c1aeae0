package integration

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The attack of issue 31's first finding and what it may cost at most:
// a bulk X-File-Path of 256 KiB of one-byte names, 16 requests at once.
const (
	pathAttackers   = 16
	pathAttackBytes = 256 << 10
	// The listings run for listWindow at least, the attacks start
	// attackDelay into it.
	listWindow        = 2 * time.Second
	attackDelay       = 500 * time.Millisecond
	maxAttackAnswer   = time.Second
	maxBystanderP99   = 200 * time.Millisecond
	maxPathAttackRSSB = 300 << 20
)

// TestClosedDoorsLongBulkPaths: while one member sends 16 bulk uploads at
// once whose X-File-Path is 256 KiB of one-byte names, another member
// lists their space in a loop: every attack is refused with a 4xx at once,
// the listing stays fast (p99 under 200 ms) and the server under 300 MB
// resident.
func TestClosedDoorsLongBulkPaths(t *testing.T) {
	s := startServer(t, serverOptions{davspaces: []string{"bulk_upload all"}})
	pid := s.cmd.Process.Pid
	attacker, bystander := newClient(t, s.URL, "einstein"), newClient(t, s.URL, "marie")
	attacker.http.Timeout = 5 * time.Minute
	for i := range 20 {
		bystander.expect(http.StatusCreated, http.MethodPut, fmt.Sprintf("/remote.php/webdav/f%02d.txt", i), "x")
	}
	bystander.expect(http.StatusMultiStatus, "PROPFIND", "/remote.php/webdav/", "", "Depth", "1")
	attacker.expect(http.StatusMultiStatus, "PROPFIND", "/remote.php/webdav/", "", "Depth", "0")
	body := []byte(longPathBulkBody(pathAttackBytes))

	cpuBefore := processCPU(t, pid)
	var (
		listings []time.Duration
		attacks  []attackResult
	)
	hwm, _ := peakDuring(t, pid, func() {
		stop := make(chan struct{})
		var listed sync.WaitGroup
		listed.Go(func() { listings = bystanderListings(t, bystander, "/remote.php/webdav/", stop) })
		window := time.After(listWindow)
		time.Sleep(attackDelay)
		attacks = sendPathAttacks(attacker, body)
		<-window
		close(stop)
		listed.Wait()
	})
	cpu := processCPU(t, pid) - cpuBefore

	slices.Sort(listings)
	var slowest time.Duration
	for _, a := range attacks {
		slowest = max(slowest, a.took)
	}
	t.Logf("%d bulk requests with a %d KiB X-File-Path (%d at a time): slowest answer %v; %d PROPFIND Depth 1 of another member: p50 %v, p99 %v, max %v; server VmHWM %d MB, %v of CPU",
		len(attacks), pathAttackBytes>>10, pathAttackers, slowest, len(listings),
		percentile(listings, 50), percentile(listings, 99), listings[len(listings)-1], hwm>>10, cpu)

	for _, a := range attacks {
		if a.err != nil {
			t.Fatalf("an attack: %v", a.err)
		}
		if a.status < 400 || a.status > 499 || a.took > maxAttackAnswer {
			t.Fatalf("an attack was answered %d after %v, want a 4xx within %v", a.status, a.took, maxAttackAnswer)
		}
	}
	if p99 := percentile(listings, 99); p99 > maxBystanderP99 {
		t.Errorf("another member's PROPFIND: p99 %v, want at most %v", p99, maxBystanderP99)
	}
	if hwm<<10 > maxPathAttackRSSB {
		t.Errorf("VmHWM %d MB, want at most %d MB", hwm>>10, maxPathAttackRSSB>>20)
	}
	// Nothing of the attack was stored.
	if _, b := attacker.expect(http.StatusMultiStatus, "PROPFIND", "/remote.php/webdav/", "", "Depth", "1"); strings.Contains(b, "f.txt") {
		t.Errorf("the attack stored a file:\n%s", b)
	}
}

// longPathBulkBody is a bulk upload of one byte whose X-File-Path is n
// bytes of one-byte names.
func longPathBulkBody(n int) string {
	const boundary = "closeddoors"
	path := strings.Repeat("a/", n/2-3) + "f.txt"
	return "--" + boundary + "\r\n" +
		"Content-Type: application/octet-stream\r\n" +
		"Content-Length: 1\r\n" +
		"X-File-MD5: 9dd4e461268c8034f5c8564e155c67a6\r\n" +
		"X-File-Mtime: 1700000000\r\n" +
		"X-File-Path: " + path + "\r\n\r\n" +
		"x\r\n--" + boundary + "--\r\n"
}

type attackResult struct {
	status int
	took   time.Duration
	err    error
}

// sendPathAttacks sends body to the bulk endpoint pathAttackers times at
// once.
func sendPathAttacks(c *client, body []byte) []attackResult {
	all := make([]attackResult, pathAttackers)
	var wg sync.WaitGroup
	for i := range all {
		wg.Go(func() {
			start := time.Now()
			resp, _, err := c.try(http.MethodPost, "/remote.php/dav/bulk",
				map[string]string{"Content-Type": `multipart/related; boundary="closeddoors"`}, body)
			all[i] = attackResult{took: time.Since(start), err: err}
			if err == nil {
				all[i].status = resp.StatusCode
			}
		})
	}
	wg.Wait()
	return all
}
