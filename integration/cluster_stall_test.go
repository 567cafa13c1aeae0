package integration

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
	"github.com/davspaces/davspaces/ocs"
	"github.com/davspaces/davspaces/storage/pgstore"
)

// The slow-client test of the cluster: uploads whose clients announce
// 10 MiB, send 100 bytes and stall must not take a node from other users.
const (
	// stalledTusPatches is twice a node's default pool: a node that held
	// a database connection while it waits for a client's bytes has none
	// left for anybody.
	stalledTusPatches = 2 * pgstore.DefaultMaxConns
	// stalledPuts and stalledNGParts stall the other ways bytes come in.
	stalledPuts    = 8
	stalledNGParts = 8
	// stalledAnnounced is what a stalled request announces, of which it
	// sends stalledSent bytes.
	stalledAnnounced = 10 << 20
	stalledSent      = 100
	// stallProbeRounds of other users' requests run while the uploads
	// stall, each of which must answer within stallProbeBudget of the
	// slowest of the same requests before the stalls.
	stallProbeRounds = 3
	stallProbeBudget = time.Second
	// stallSettle is how long the stalled requests are given to reach the
	// node's store before the probes start.
	stallSettle = 2 * time.Second
)

// TestClusterStalledUploadsHoldNoNode holds node A of a cluster with twice
// its pool size of stalled TUS PATCHes, and stalled PUTs and chunking NG
// parts beside them, and checks that another user's PROPFIND, PUT and GET
// to node A still answer within a second of what the same requests took
// before the stalls.
func TestClusterStalledUploadsHoldNoNode(t *testing.T) {
	c := startCluster(t, clusterOptions{})
	node := c.nodes[0]
	einstein := newClient(t, node.URL, "einstein")
	einstein.expect(http.StatusCreated, "MKCOL", "/webdav/stalled", "")

	var stalls []string // request heads, each sent with stalledSent bytes
	for i := range stalledTusPatches {
		resp, b := einstein.send(http.MethodPost, "/webdav/stalled", map[string]string{
			"Tus-Resumable":   tusResumable,
			"Upload-Length":   fmt.Sprint(stalledAnnounced),
			"Upload-Metadata": tusMetadata("filename", fmt.Sprintf("tus-%d.bin", i)),
		}, nil)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("TUS creation: %d\n%s", resp.StatusCode, b)
		}
		stalls = append(stalls, stalledHead(t, http.MethodPatch, uploadPath(t, node.URL, resp.Header.Get("Location")), "einstein",
			"Tus-Resumable: "+tusResumable, "Upload-Offset: 0", "Content-Type: application/offset+octet-stream"))
	}
	for i := range stalledPuts {
		stalls = append(stalls, stalledHead(t, http.MethodPut, fmt.Sprintf("/webdav/stalled/put-%d.bin", i), "einstein"))
	}
	for i := range stalledNGParts {
		upload := ngUpload("einstein", fmt.Sprintf("stalled-%d", i))
		einstein.expect(http.StatusCreated, "MKCOL", upload, "")
		stalls = append(stalls, stalledHead(t, http.MethodPut, upload+"/00001", "einstein"))
	}
	// marie's round before anything stalls (her space made first) is what
	// this machine gives the same requests in the same minute: a probe
	// beside the stalls may take a second more than its slowest. A node
	// that held a connection per stalled upload would keep her waiting
	// until her client's timeout.
	marie := newClient(t, node.URL, "marie")
	marie.http.Timeout = 10 * stallProbeBudget // a frozen node fails the test, not hangs it
	marie.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "0")
	baseline := probeRound(t, marie, "before", len(stalls), marie.http.Timeout)

	for _, head := range stalls {
		stallRequest(t, node.URL, head)
	}
	time.Sleep(stallSettle)

	for round := range stallProbeRounds {
		probeRound(t, marie, fmt.Sprint(round), len(stalls), stallProbeBudget+baseline)
	}
}

// probeRound PUTs a file named after round, PROPFINDs the folder and GETs
// the file back, each within budget, and returns the slowest's time.
func probeRound(t *testing.T, c *client, round string, stalls int, budget time.Duration) time.Duration {
	t.Helper()
	name := "/webdav/beside-" + round + ".txt"
	content := fmt.Sprintf("round %s beside %d stalled uploads", round, stalls)
	var slowest time.Duration
	probe := func(method, path, body string, status int) string {
		got, took := probeWithin(t, c, method, path, body, status, budget)
		slowest = max(slowest, took)
		return got
	}
	probe("PUT", name, content, http.StatusCreated)
	probe("PROPFIND", "/webdav/", "", http.StatusMultiStatus)
	if got := probe("GET", name, "", http.StatusOK); got != content {
		t.Fatalf("GET %s = %q, want %q", name, got, content)
	}
	return slowest
}

// stalledHead is the head of a request that announces stalledAnnounced
// bytes, sent as user with the extra header lines.
func stalledHead(t *testing.T, method, path, user string, header ...string) string {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + users[user]))
	lines := append([]string{
		method + " " + path + " HTTP/1.1",
		"Host: 127.0.0.1",
		"Authorization: Basic " + auth,
		fmt.Sprintf("Content-Length: %d", stalledAnnounced),
	}, header...)
	return strings.Join(lines, "\r\n") + "\r\n\r\n"
}

// stallRequest sends head and stalledSent bytes of its body to base and
// then sends nothing more, until the test ends and closes the connection.
func stallRequest(t *testing.T, base, head string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatalf("dialling %s: %v", u.Host, err)
	}
	t.Cleanup(func() { conn.Close() })
	w := bufio.NewWriter(conn)
	w.WriteString(head)
	w.WriteString(strings.Repeat("x", stalledSent))
	if err := w.Flush(); err != nil {
		t.Fatalf("sending a stalled request: %v", err)
	}
}

// probeWithin sends one request as c and fails the test unless it is
// answered with status within budget; it returns the body and the time.
func probeWithin(t *testing.T, c *client, method, path, body string, status int, budget time.Duration) (string, time.Duration) {
	t.Helper()
	header := map[string]string{}
	if method == "PROPFIND" {
		header["Depth"] = "1"
	}
	start := time.Now()
	resp, b, err := c.try(method, path, header, []byte(body))
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s %s while uploads stall: %v after %v", method, path, err, took.Round(time.Millisecond))
	}
	if resp.StatusCode != status {
		t.Fatalf("%s %s while uploads stall: %d after %v, want %d\n%s", method, path, resp.StatusCode, took.Round(time.Millisecond), status, b)
	}
	t.Logf("%s %s: %d in %v (budget %v)", method, path, resp.StatusCode, took.Round(time.Millisecond), budget.Round(time.Millisecond))
	if took > budget {
		t.Fatalf("%s %s took %v, more than %v", method, path, took.Round(time.Millisecond), budget.Round(time.Millisecond))
	}
	return string(b), took
}

// TestClusterHealthReportsOutage stops the bucket under a running cluster:
// every node's /healthz turns 503 with Retry-After and its status.php,
// still 200, says maintenance; once the bucket is back both recover, with
// Caddy never restarted.
func TestClusterHealthReportsOutage(t *testing.T) {
	t.Parallel()
	m := testpeer.OwnMinIO(t)
	c := startCluster(t, clusterOptions{minio: m})
	for _, n := range c.nodes {
		anon := newClient(t, n.URL, "")
		awaitStatus(t, anon, http.StatusOK, http.MethodGet, ocs.HealthPath, nil)
		if got := maintenanceOf(t, anon); got {
			t.Fatalf("status.php of a healthy node %s says maintenance", n.URL)
		}
	}

	m.Stop()
	for _, n := range c.nodes {
		anon := newClient(t, n.URL, "")
		awaitStatus(t, anon, http.StatusServiceUnavailable, http.MethodGet, ocs.HealthPath, nil)
		wantUnavailable(t, anon, http.MethodGet, ocs.HealthPath, nil)
		if got := maintenanceOf(t, anon); !got {
			t.Fatalf("status.php of %s while the bucket is down does not say maintenance", n.URL)
		}
	}

	if err := m.Start(); err != nil {
		t.Fatalf("starting MinIO again: %v", err)
	}
	for _, n := range c.nodes {
		anon := newClient(t, n.URL, "")
		awaitStatus(t, anon, http.StatusOK, http.MethodGet, ocs.HealthPath, nil)
		if got := maintenanceOf(t, anon); got {
			t.Fatalf("status.php of %s once the bucket is back says maintenance", n.URL)
		}
	}
}

// maintenanceOf reads status.php, which must answer 200 with its fields.
func maintenanceOf(t *testing.T, c *client) bool {
	t.Helper()
	resp, b := c.send(http.MethodGet, "/status.php", nil, nil)
	var status struct {
		Installed   *bool `json:"installed"`
		Maintenance *bool `json:"maintenance"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &status) != nil || status.Installed == nil || status.Maintenance == nil {
		t.Fatalf("status.php on %s: %d\n%s", c.base, resp.StatusCode, b)
	}
	return *status.Maintenance
}
