package integration

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What another user sees while one attacks the server: the closed-doors
// tests run an attack and measure a bystander's listings and the
// server's CPU beside it.

// minBystanderListings is how many listings a p99 is read from at the
// least: with fewer, the one slowest listing is the p99, and one that a
// busy machine delayed fails the bar alone.
const minBystanderListings = 200

// bystanderListings lists folder as c with PROPFIND Depth 1, one request
// after another, until stop is closed and it made minBystanderListings
// (or 20 s more went by), and returns how long each took.
func bystanderListings(t *testing.T, c *client, folder string, stop <-chan struct{}) []time.Duration {
	var took []time.Duration
	var deadline time.Time
	for {
		if deadline.IsZero() {
			select {
			case <-stop:
				deadline = time.Now().Add(20 * time.Second)
			default:
			}
		}
		if !deadline.IsZero() && (len(took) >= minBystanderListings || time.Now().After(deadline)) {
			return took
		}
		start := time.Now()
		resp, _, err := c.try("PROPFIND", folder, map[string]string{"Depth": "1"}, nil)
		if err != nil || resp.StatusCode != http.StatusMultiStatus {
			t.Errorf("a bystander's PROPFIND during the attack: %v %v", resp, err)
			return took
		}
		took = append(took, time.Since(start))
	}
}

// percentile returns the p-th percentile of ds (nearest rank); 0 for none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(ds))
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

// processCPU is the CPU time process pid has used, from /proc/pid/stat
// (utime and stime, in clock ticks of 10 ms).
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command, which is in parentheses.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime: fields 14 and 15
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
