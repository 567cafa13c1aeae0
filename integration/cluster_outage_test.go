package integration

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// clusterRecovery bounds how long the nodes may take to notice that a
// peer is back.
const clusterRecovery = 30 * time.Second

// TestClusterPostgresOutage stops PostgreSQL under a running cluster: every
// node answers PROPFIND, GET and PUT with 503 and Retry-After (never 500), and
// once PostgreSQL is back the same requests work, with Caddy never
// restarted.
func TestClusterPostgresOutage(t *testing.T) {
	t.Parallel()
	pg := testpeer.OwnPostgres(t)
	c := startCluster(t, clusterOptions{postgres: pg})
	lb := newClient(t, c.lb.URL, "einstein")
	lb.expect(http.StatusCreated, http.MethodPut, "/webdav/before.txt", "before the outage")

	pg.Stop()
	for _, n := range c.nodes {
		nc := newClient(t, n.URL, "einstein")
		wantUnavailable(t, nc, "PROPFIND", "/webdav/", nil, "Depth", "1")
		wantUnavailable(t, nc, http.MethodGet, "/webdav/before.txt", nil)
		wantUnavailable(t, nc, http.MethodPut, "/webdav/during.txt", []byte("during the outage"))
	}

	if err := pg.Start(); err != nil {
		t.Fatalf("starting PostgreSQL again: %v", err)
	}
	for _, n := range c.nodes {
		nc := newClient(t, n.URL, "einstein")
		awaitStatus(t, nc, http.StatusMultiStatus, "PROPFIND", "/webdav/", nil, "Depth", "1")
		awaitStatus(t, nc, http.StatusNoContent, http.MethodPut, "/webdav/before.txt", []byte("after the outage, "+n.URL))
	}
	lb.expect(http.StatusCreated, http.MethodPut, "/webdav/after.txt", "after the outage")
}

// TestClusterNodesStartBeforeTheDatabase: nodes started while PostgreSQL
// is down start all the same (Caddy runs, WebDAV answers 503 with
// Retry-After), and once PostgreSQL is up they serve, the project space of
// their configuration included, with Caddy never restarted.
func TestClusterNodesStartBeforeTheDatabase(t *testing.T) {
	t.Parallel()
	pg := testpeer.OwnPostgres(t)
	c := startCluster(t, clusterOptions{postgres: pg, beforeNodes: pg.Stop})
	for _, n := range c.nodes {
		wantUnavailable(t, newClient(t, n.URL, "einstein"), "PROPFIND", "/webdav/", nil, "Depth", "1")
	}

	if err := pg.Start(); err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	lb := newClient(t, c.lb.URL, "einstein")
	for _, n := range c.nodes {
		nc := newClient(t, n.URL, "einstein")
		awaitStatus(t, nc, http.StatusMultiStatus, "PROPFIND", "/webdav/", nil, "Depth", "1")
		awaitStatus(t, nc, http.StatusMultiStatus, "PROPFIND", physicsPath(t, nc), nil, "Depth", "0")
	}
	lb.expect(http.StatusCreated, http.MethodPut, physicsPath(t, lb)+"notes.txt", "once the database is up")
}

// TestClusterMinIOOutage stops MinIO under a running cluster: every node
// answers a download and an upload with 503 and Retry-After (never 500),
// and once MinIO is back the same requests work, with Caddy never
// restarted.
func TestClusterMinIOOutage(t *testing.T) {
	t.Parallel()
	m := testpeer.OwnMinIO(t)
	c := startCluster(t, clusterOptions{minio: m})
	lb := newClient(t, c.lb.URL, "einstein")
	// Large enough that no store keeps it beside the metadata.
	content := randomBytes(t, 1<<20)
	lb.expect(http.StatusCreated, http.MethodPut, "/webdav/before.bin", string(content))

	m.Stop()
	for _, n := range c.nodes {
		nc := newClient(t, n.URL, "einstein")
		wantUnavailable(t, nc, http.MethodGet, "/webdav/before.bin", nil)
		wantUnavailable(t, nc, http.MethodPut, "/webdav/during.bin", content)
	}

	if err := m.Start(); err != nil {
		t.Fatalf("starting MinIO again: %v", err)
	}
	for _, n := range c.nodes {
		nc := newClient(t, n.URL, "einstein")
		if got := awaitStatus(t, nc, http.StatusOK, http.MethodGet, "/webdav/before.bin", nil); !bytes.Equal(got, content) {
			t.Errorf("GET /webdav/before.bin from %s after the outage: %d bytes, SHA1 %s; want %d bytes, SHA1 %s",
				n.URL, len(got), sha1Hex(got), len(content), sha1Hex(content))
		}
	}
	lb.expect(http.StatusCreated, http.MethodPut, "/webdav/after.bin", string(content))
	if got := mustGetFrom(t, newClient(t, c.nodes[1].URL, "einstein"), "/webdav/after.bin"); !bytes.Equal(got, content) {
		t.Errorf("GET /webdav/after.bin: %d bytes, want the %d written after the outage", len(got), len(content))
	}
}

// wantUnavailable sends a request during an outage: it must be answered
// 503 with Retry-After, which tells clients to come back rather than give
// up.
func wantUnavailable(t *testing.T, c *client, method, p string, body []byte, hdr ...string) {
	t.Helper()
	resp, err := c.sendStream(method, p, headerMap(hdr), bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Errorf("%s %s on %s during the outage: %v", method, p, c.base, err)
		return
	}
	defer resp.Body.Close()
	// Read apart from the status: a server that commits to an answer
	// before it finds the backend gone cuts the body off.
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		t.Errorf("%s %s on %s during the outage: %d (Content-Length %d), then the body was cut off after %d bytes: %v",
			method, p, c.base, resp.StatusCode, resp.ContentLength, len(b), err)
	case resp.StatusCode != http.StatusServiceUnavailable:
		t.Errorf("%s %s on %s during the outage: %d, want 503\n%s", method, p, c.base, resp.StatusCode, tail(string(b), 1000))
	case resp.Header.Get("Retry-After") == "":
		t.Errorf("%s %s on %s during the outage: 503 without Retry-After\n%s", method, p, c.base, tail(string(b), 1000))
	}
}

// awaitStatus repeats a request until it is answered with status, for at
// most clusterRecovery, and returns the answer's body.
func awaitStatus(t *testing.T, c *client, status int, method, p string, body []byte, hdr ...string) []byte {
	t.Helper()
	deadline := time.Now().Add(clusterRecovery)
	for {
		resp, b, err := c.try(method, p, headerMap(hdr), body)
		if err == nil && resp.StatusCode == status {
			return b
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("%s %s on %s after the outage: %v", method, p, c.base, err)
			}
			t.Fatalf("%s %s on %s %s after the outage: %d, want %d\n%s", method, p, c.base, clusterRecovery, resp.StatusCode, status, tail(string(b), 1000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// headerMap turns name/value pairs into a header map.
func headerMap(pairs []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return m
}
