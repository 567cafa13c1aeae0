package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/internal/testpeer"
)

// tusClientDir holds the tus-js-client helper and its npm packages.
const tusClientDir = "testdata/tusclient"

// tusClientInstall installs the helper's npm packages, from the module root.
const tusClientInstall = "npm ci --prefix integration/testdata/tusclient"

// requireTusClient finds node and tus-js-client. Missing ones fail the test
// in CI (CI=true), where the test command installs them, and skip it
// elsewhere.
func requireTusClient(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(tusClientDir)
	if err != nil {
		t.Fatal(err)
	}
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "tus-js-client", "package.json")); err != nil {
		missing = "tus-js-client is not installed; run: " + tusClientInstall
	}
	if missing == "" {
		return dir
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("tus client: %s", missing)
	}
	t.Skipf("tus client: %s", missing)
	return ""
}

// tusOptions are the helper's options (testdata/tusclient/upload.mjs).
type tusOptions struct {
	Endpoint                 string            `json:"endpoint,omitempty"`
	UploadURL                string            `json:"uploadUrl,omitempty"`
	File                     string            `json:"file"`
	Metadata                 map[string]string `json:"metadata,omitempty"`
	Headers                  map[string]string `json:"headers,omitempty"`
	ChunkSize                int64             `json:"chunkSize,omitempty"`
	RetryDelays              []int             `json:"retryDelays,omitempty"`
	UploadDataDuringCreation bool              `json:"uploadDataDuringCreation,omitempty"`
}

// tusEvent is one line the helper reports.
type tusEvent struct {
	Event    string `json:"event"`
	URL      string `json:"url"`
	Accepted int64  `json:"accepted"`
	Total    int64  `json:"total"`
	Attempt  int    `json:"attempt"`
	Status   int    `json:"status"`
	Error    string `json:"error"`
}

// tusResult sums up one run of the helper.
type tusResult struct {
	url      string // the upload URL, once known
	accepted int64  // the most bytes the server acknowledged
	chunks   int    // acknowledged PATCHes (and a POST with data)
	retries  int
	success  bool
	failure  string // the error event and stderr of a failed run
}

// runTusClient uploads with tus-js-client as user and waits for it to end.
func runTusClient(t testing.TB, user string, opts tusOptions) tusResult {
	t.Helper()
	dir := requireTusClient(t)
	if opts.Headers == nil {
		opts.Headers = map[string]string{}
	}
	opts.Headers["Authorization"] = basicAuth(user)
	arg, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := testpeer.CommandContext(ctx, "node", filepath.Join(dir, "upload.mjs"), string(arg))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	res := readTusEvents(t, &stdout)
	if res.success != (runErr == nil) {
		t.Fatalf("tus client: exit %v but success=%v\n%s%s", runErr, res.success, stdout.String(), stderr.String())
	}
	if !res.success {
		res.failure += "\n" + tail(stderr.String(), 2000)
	}
	return res
}

// basicAuth is the Authorization header of a demo user.
func basicAuth(user string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+users[user]))
}

func readTusEvents(t testing.TB, r io.Reader) tusResult {
	t.Helper()
	var res tusResult
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var ev tusEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("tus client printed %q: %v", sc.Text(), err)
		}
		switch ev.Event {
		case "url":
			res.url = ev.URL
		case "chunk":
			res.chunks++
			res.accepted = max(res.accepted, ev.Accepted)
		case "retry":
			res.retries++
		case "success":
			res.success, res.url = true, ev.URL
		case "error":
			res.failure = fmt.Sprintf("status %d: %s", ev.Status, ev.Error)
			if ev.URL != "" {
				res.url = ev.URL
			}
		}
	}
	return res
}

// cutProxy forwards loopback TCP connections to a Caddy. Armed with
// cutAfter, it trips once when that many bytes in total have come from
// clients: it calls onTrip, then drops every connection it holds, as a
// broken network or a crashed server would.
type cutProxy struct {
	URL string
	ln  net.Listener

	mu       sync.Mutex
	upstream string
	cutAfter int64 // 0: never
	onTrip   func()
	sent     int64 // client bytes forwarded
	trips    int
	conns    map[net.Conn]bool
}

func startCutProxy(t testing.TB, upstream string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{URL: "http://" + ln.Addr().String(), ln: ln, upstream: hostPort(upstream), conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.dropAll()
	})
	return p
}

// hostPort strips the scheme of a server URL.
func hostPort(u string) string {
	return strings.TrimPrefix(u, "http://")
}

// arm makes the proxy trip once after n more client bytes.
func (p *cutProxy) arm(n int64, onTrip func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutAfter, p.onTrip = p.sent+n, onTrip
}

// retarget sends new connections to another server (a restarted Caddy).
func (p *cutProxy) retarget(upstream string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.upstream = hostPort(upstream)
}

// stats returns the client bytes forwarded and how often the proxy tripped.
func (p *cutProxy) stats() (sent int64, trips int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent, p.trips
}

func (p *cutProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(client)
	}
}

func (p *cutProxy) forward(client net.Conn) {
	p.mu.Lock()
	upstream := p.upstream
	p.mu.Unlock()
	server, err := net.DialTimeout("tcp", upstream, 5*time.Second)
	if err != nil {
		client.Close()
		return
	}
	p.track(client, server)
	go func() {
		io.Copy(client, server)
		client.Close()
	}()
	p.copyFromClient(server, client)
	server.Close()
}

// track registers connections for dropAll.
func (p *cutProxy) track(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		p.conns[c] = true
	}
}

// copyFromClient forwards client bytes, tripping where armed.
func (p *cutProxy) copyFromClient(server, client net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			allowed, trip := p.take(int64(n))
			if _, werr := server.Write(buf[:allowed]); werr != nil {
				return
			}
			if trip != nil {
				trip()
				p.dropAll()
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// take counts n client bytes and returns how many of them to forward and,
// when they reach the armed limit, what to do before dropping everything.
func (p *cutProxy) take(n int64) (int64, func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cutAfter == 0 || p.sent+n < p.cutAfter {
		p.sent += n
		return n, nil
	}
	allowed := p.cutAfter - p.sent
	p.sent, p.cutAfter = p.cutAfter, 0
	p.trips++
	trip := p.onTrip
	if trip == nil {
		trip = func() {}
	}
	return allowed, trip
}

func (p *cutProxy) dropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}
