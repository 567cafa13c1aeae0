package integration

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMetricsAfterAWorkload runs Caddy with `metrics` on and the admin
// endpoint on a loopback port, sends a workload through it, and checks
// that every davspaces metric is on the admin endpoint's /metrics with
// values the workload explains; and that the refused upload of the
// workload is in the DEBUG log with its user, space and reason, while no
// credential is anywhere in the log.
func TestMetricsAfterAWorkload(t *testing.T) {
	t.Parallel()
	adminAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := startMetricsServer(t, adminAddr)
	einstein := newClient(t, s.URL, "einstein")

	// The workload: two whole files, a download, a listing, a lock, a
	// resumable upload and a chunking NG upload left open, and an upload
	// the quota refuses.
	big := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	einstein.expect(http.StatusCreated, http.MethodPut, "/webdav/big.bin", big)
	einstein.expect(http.StatusCreated, http.MethodPut, "/webdav/small.txt", "hello")
	if _, got := einstein.expect(http.StatusOK, http.MethodGet, "/webdav/big.bin", ""); got != big {
		t.Fatal("GET returned other bytes")
	}
	einstein.expect(http.StatusMultiStatus, "PROPFIND", "/webdav/", "", "Depth", "1")
	einstein.expect(http.StatusOK, "LOCK", "/webdav/small.txt", `<?xml version="1.0"?><d:lockinfo xmlns:d="DAV:">`+
		`<d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`)
	spaceRef := personalSpaceRef(t, s, "einstein")
	_, spaceID, _ := strings.Cut(spaceRef, "$")
	einstein.expect(http.StatusCreated, http.MethodPost, "/remote.php/dav/spaces/"+spaceRef+"/", "",
		"Tus-Resumable", "1.0.0", "Upload-Length", "10", "Upload-Metadata", "filename "+base64.StdEncoding.EncodeToString([]byte("tus.txt")))
	einstein.expect(http.StatusCreated, "MKCOL", "/remote.php/dav/uploads/einstein/transfer-1", "")
	einstein.expect(http.StatusInsufficientStorage, http.MethodPut, "/webdav/too-big.bin", big+big)

	m := scrape(t, "http://"+adminAddr+"/metrics")
	for _, c := range []struct {
		series string
		ok     func(float64) bool
		want   string
	}{
		{`davspaces_http_bytes_total{direction="in",method="PUT"}`, atLeast(float64(len(big) + 5)), "the bytes of both PUTs"},
		{`davspaces_http_bytes_total{direction="out",method="GET"}`, atLeast(float64(len(big))), "the bytes of the GET"},
		{`davspaces_http_bytes_total{direction="out",method="PROPFIND"}`, atLeast(1), "the listing"},
		{`davspaces_uploads_in_flight{kind="put"}`, exactly(0), "0 once the PUTs are done"},
		{`davspaces_upload_sessions_open{kind="tus"}`, exactly(1), "the TUS upload"},
		{`davspaces_upload_sessions_open{kind="chunking-ng"}`, exactly(1), "the NG upload"},
		{`davspaces_upload_sessions_open{kind="chunking-v1"}`, exactly(0), "none"},
		{`davspaces_store_operation_duration_seconds_count{operation="commit"}`, atLeast(2), "both PUTs"},
		{`davspaces_store_operation_duration_seconds_count{operation="open"}`, atLeast(1), "the GET"},
		{`davspaces_store_operation_duration_seconds_bucket{operation="commit",le="+Inf"}`, atLeast(2), "both PUTs"},
		{`davspaces_space_used_bytes{space="` + spaceID + `",type="personal"}`, atLeast(float64(len(big) + 5)), "both files"},
		{`davspaces_locks_held`, exactly(1), "the lock"},
		{`davspaces_sweep_runs_total{result="failed"}`, exactly(0), "no failed sweep"},
		{`davspaces_sweep_runs_total{result="ok"}`, atLeast(0), "present"},
		{`davspaces_sweep_removed_total{what="upload_sessions"}`, atLeast(0), "present"},
		{`davspaces_sweep_removed_total{what="content"}`, atLeast(0), "present"},
	} {
		v, ok := m.value(c.series)
		if !ok || !c.ok(v) {
			t.Errorf("%s = %v (present: %v), want %s", c.series, v, ok, c.want)
		}
	}
	if n := m.count(`davspaces_space_used_bytes{`, `type="project"`); n != 1 {
		t.Errorf("%d project spaces measured, want the example's one", n)
	}

	log := readLogWhenHas(t, s, "webdav request refused")
	t.Logf("scraped %d series", len(m))
	var refused string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "webdav request refused") && strings.Contains(line, "too-big.bin") {
			refused = line
		}
	}
	for _, want := range []string{`"level":"debug"`, `"user":"einstein"`, `"space":"` + spaceID + `"`, `"reason":"quota"`, `"status":507`} {
		if !strings.Contains(refused, want) {
			t.Errorf("the refusal's log line lacks %s: %s", want, refused)
		}
	}
	basic := base64.StdEncoding.EncodeToString([]byte("einstein:" + users["einstein"]))
	for _, secret := range []string{users["einstein"], basic, big[:64]} {
		if strings.Contains(log, secret) {
			t.Errorf("the log holds %.20q…", secret)
		}
	}
}

// startMetricsServer is startServer with the admin endpoint on adminAddr,
// Caddy's metrics on, a DEBUG log and a personal quota of 2 MiB.
func startMetricsServer(t *testing.T, adminAddr string) *server {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	root := filepath.Join(dir, "data")
	cfg := exampleCaddyfile(t, port, root, serverOptions{admin: adminAddr, davspaces: []string{"personal_quota 2MiB"}})
	global := "\tadmin " + adminAddr + "\n"
	if !strings.Contains(cfg, global) {
		t.Fatalf("no admin line in the test's Caddyfile")
	}
	cfg = strings.Replace(cfg, global, global+"\tmetrics\n\tlog {\n\t\tlevel DEBUG\n\t\toutput stderr\n\t\tformat json\n\t}\n", 1)
	s := caddyRun{dir: dir, config: cfg, url: fmt.Sprintf("http://127.0.0.1:%d", port)}.start(t)
	s.Root = root
	return s
}

// readLogWhenHas reads the server's log once it holds want (the log is
// written by another process: give it a moment).
func readLogWhenHas(t *testing.T, s *server, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(s.log.Name())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), want) || time.Now().After(deadline) {
			return string(b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exposition is a scrape in the Prometheus text format: series (name and
// labels as written) to value.
type exposition map[string]float64

func scrape(t *testing.T, url string) exposition {
	t.Helper()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(url)
	if err != nil {
		t.Fatalf("scraping %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scraping %s: %s", url, resp.Status)
	}
	m := exposition{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape line %q: %v", line, err)
		}
		m[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// value finds the series named as written in the test: a name and some
// of its labels; the store label and the order of labels do not matter.
func (m exposition) value(series string) (float64, bool) {
	name, labels, _ := strings.Cut(strings.TrimSuffix(series, "}"), "{")
	for s, v := range m {
		if m.matches(s, name, labels) {
			return v, true
		}
	}
	return 0, false
}

// count counts the series of name prefix holding label.
func (m exposition) count(prefix, label string) int {
	n := 0
	for s := range m {
		if strings.HasPrefix(s, prefix) && strings.Contains(s, label) {
			n++
		}
	}
	return n
}

func (exposition) matches(series, name, labels string) bool {
	sName, sLabels, _ := strings.Cut(strings.TrimSuffix(series, "}"), "{")
	if sName != name {
		return false
	}
	for _, l := range strings.Split(labels, ",") {
		if l != "" && !strings.Contains(","+sLabels+",", ","+l+",") {
			return false
		}
	}
	return true
}

func atLeast(min float64) func(float64) bool  { return func(v float64) bool { return v >= min } }
func exactly(want float64) func(float64) bool { return func(v float64) bool { return v == want } }
