// Command davload drives a running WebDAV server with bounded, concurrent
// request loops and prints one result line per scenario, then one JSON line
// per scenario. It speaks plain WebDAV, so the same run can measure other
// servers (Apache mod_dav, nginx dav, rclone serve webdav) for comparison.
//
//	davload -url http://127.0.0.1:9280/remote.php/webdav/ -user einstein -pass relativity
//	davload report results.jsonl...   # medians and ratios of many runs, see report.go
//
// Scenarios (-scenario, a comma list; default all, in this order):
//
//	propfind      seed -files 64-byte files into one folder with -concurrency
//	              workers (the seeding rate is reported too), then PROPFIND
//	              Depth: 1 with the ownCloud client's properties, one request
//	              at a time, for -duration or -count requests
//	put-small     -concurrency workers PUT -size files for -duration or
//	              -count requests
//	put-large     one PUT of -large bytes, generated while sent
//	get-large     GET that file back and check its length
//	mkcol-delete  -concurrency workers MKCOL and DELETE folders for -duration
//	              or -count pairs (each MKCOL and each DELETE counts as an
//	              operation)
//	sync          sync clients' mix: -concurrency workers each repeat
//	              PROPFIND Depth: 1 of a folder of 200 files, GET of one of
//	              them, PUT of a new 4 KiB file under a temporary name in the
//	              worker's subfolder and MOVE of it to its final name, for
//	              -duration or -count requests (each counts)
//
// Each scenario works in its own folder under -url (MKCOL first, DELETE at
// the end). Every loop stops by count or by deadline, and any failed request
// stops a loop after maxErrors failures. Only loopback hosts are accepted
// (127.0.0.0/8, ::1, localhost): load is only ever sent to this machine, and
// the dialer checks the address it actually connects to as well.
//
// The exit status is 1 when any request failed, 2 for bad flags or an
// unusable server, 130 after an interrupt.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
)

// scenarioNames lists the scenarios in the order they run.
var scenarioNames = []string{"propfind", "put-small", "put-large", "get-large", "mkcol-delete", "sync"}

const (
	// seedFileSize is propfind's seeded files: seeding 10,000 of them is
	// the "64 B × 10,000" small-PUT workload of the benchmark.
	seedFileSize = 64
	// maxErrors stops a scenario's loops once this many requests failed.
	maxErrors = 100
	// logErrors is how many failures per scenario are described on stderr.
	logErrors = 5
)

// propfindBody asks for the properties ownCloud's desktop client lists.
const propfindBody = `<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">
  <d:prop>
    <d:resourcetype/>
    <d:getlastmodified/>
    <d:getcontentlength/>
    <d:getetag/>
    <oc:id/>
    <oc:fileid/>
    <oc:permissions/>
    <oc:size/>
    <oc:checksums/>
    <oc:favorite/>
    <oc:share-types/>
  </d:prop>
</d:propfind>
`

type config struct {
	base        *url.URL
	user, pass  string
	scenarios   []string
	concurrency int
	duration    time.Duration
	files       int
	count       int   // requests per timed loop, 0 for no limit
	size        int64 // put-small's body
	round       int   // recorded in the JSON lines for davload report
	large       int64
	insecure    bool
	timeout     time.Duration
	label       string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "report" {
		return runReport(args[1:], os.Stdin, stdout, stderr)
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "davload:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	r := newRunner(cfg, stderr)
	if err := r.preflight(ctx); err != nil {
		fmt.Fprintln(stderr, "davload:", err)
		return 2
	}
	r.logf("target %s (%s), concurrency %d, duration %s, files %d, large %s",
		redact(cfg.base), cfg.label, cfg.concurrency, cfg.duration, cfg.files, formatSize(cfg.large))

	var results []*result
	for _, name := range cfg.scenarios {
		if ctx.Err() != nil {
			break
		}
		res := r.runScenario(ctx, name)
		r.logf("%s: done, %d errors", name, res.Errors)
		results = append(results, res)
	}

	printTable(stdout, results)
	for _, res := range results {
		line, err := json.Marshal(res)
		if err != nil {
			fmt.Fprintln(stderr, "davload:", err)
			return 2
		}
		fmt.Fprintln(stdout, string(line))
	}

	failed := false
	for _, res := range results {
		if res.Errors > 0 {
			failed = true
		}
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(stderr, "davload: interrupted")
		return 130
	case failed:
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("davload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{large: 256 << 20, size: 4 << 10}
	rawURL := fs.String("url", "", "WebDAV collection URL to work under, e.g. http://127.0.0.1:9280/remote.php/webdav/ (loopback hosts only)")
	fs.StringVar(&cfg.user, "user", "", "Basic auth user (none when empty)")
	fs.StringVar(&cfg.pass, "pass", "", "Basic auth password")
	scen := fs.String("scenario", "all", "comma list of scenarios: "+strings.Join(scenarioNames, ", ")+", or all")
	fs.IntVar(&cfg.concurrency, "concurrency", 16, "workers for put-small, mkcol-delete, sync and the seeding of folders")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "length of each timed scenario")
	fs.IntVar(&cfg.files, "files", 10000, "files in propfind's folder")
	fs.IntVar(&cfg.count, "count", 0, "stop each timed loop after this many requests (0: only -duration)")
	fs.Var((*sizeFlag)(&cfg.size), "size", "size of put-small's files, e.g. 4KiB or 64")
	fs.IntVar(&cfg.round, "round", 0, "round number to record in the JSON lines (for davload report)")
	fs.Var((*sizeFlag)(&cfg.large), "large", "size of put-large's file, e.g. 256MiB or 1GB (bytes without a unit)")
	fs.BoolVar(&cfg.insecure, "insecure", false, "skip TLS certificate verification")
	fs.DurationVar(&cfg.timeout, "timeout", time.Minute, "limit for one request (large transfers get another second per MB)")
	fs.StringVar(&cfg.label, "label", "", "name of the server under test in the output (default: the URL's host)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: davload -url URL [-user U -pass P] [flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *rawURL == "" {
		return nil, errors.New("-url is required")
	}
	base, err := parseBaseURL(*rawURL)
	if err != nil {
		return nil, err
	}
	cfg.base = base
	if cfg.scenarios, err = parseScenarios(*scen); err != nil {
		return nil, err
	}
	switch {
	case cfg.concurrency < 1:
		return nil, errors.New("-concurrency must be at least 1")
	case cfg.duration <= 0:
		return nil, errors.New("-duration must be positive")
	case cfg.files < 0:
		return nil, errors.New("-files must not be negative")
	case cfg.count < 0:
		return nil, errors.New("-count must not be negative")
	case cfg.size < 0:
		return nil, errors.New("-size must not be negative")
	case cfg.large <= 0:
		return nil, errors.New("-large must be positive")
	case cfg.timeout <= 0:
		return nil, errors.New("-timeout must be positive")
	}
	if cfg.label == "" {
		cfg.label = base.Host
	}
	return cfg, nil
}

// parseBaseURL accepts http and https URLs on loopback hosts and makes the
// path end in a slash, so names can be appended.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("-url: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("-url: scheme must be http or https, not %q", u.Scheme)
	}
	if !isLoopbackHost(u.Hostname()) {
		return nil, fmt.Errorf("-url: refusing host %q: only loopback addresses (127.0.0.0/8, ::1, localhost) are allowed", u.Hostname())
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("-url: no user info, query or fragment (use -user and -pass)")
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		u.RawPath = ""
	}
	return u, nil
}

// isLoopbackHost reports whether host (without port or brackets) names this
// machine: localhost, an address in 127.0.0.0/8, or ::1.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parseScenarios checks a comma list of scenario names and returns them in
// run order without duplicates.
func parseScenarios(s string) ([]string, error) {
	want := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case f == "all":
			for _, n := range scenarioNames {
				want[n] = true
			}
		case slices.Contains(scenarioNames, f):
			want[f] = true
		default:
			return nil, fmt.Errorf("-scenario: unknown scenario %q (known: %s)", f, strings.Join(scenarioNames, ", "))
		}
	}
	var out []string
	for _, n := range scenarioNames {
		if want[n] {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("-scenario: no scenario selected")
	}
	return out, nil
}

// sizeFlag is a byte count written as a number with an optional unit.
type sizeFlag int64

func (s *sizeFlag) String() string { return formatSize(int64(*s)) }

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// parseSize reads sizes as the Caddyfile does (go-humanize): 4096, 64KiB,
// 256MiB, 1.5GiB; the *iB units are powers of 1024, kB, MB, GB powers of
// 1000.
func parseSize(s string) (int64, error) {
	n, err := humanize.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %w", s, err)
	}
	if n > math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(n), nil
}

// formatSize writes n in binary units for people; the exact count goes
// into the JSON line.
func formatSize(n int64) string { return humanize.IBytes(uint64(max(n, 0))) }

// redact drops user info from a URL for display (parseBaseURL refuses it,
// this is a second guard).
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// patternReader produces n pseudo-random bytes (xorshift64*) without
// holding them: the stream depends only on the seed, not on read sizes.
type patternReader struct {
	left  int64
	state uint64
	word  [8]byte
	used  int // bytes of word already returned; 8 means none left
}

func newPatternReader(n int64, seed uint64) *patternReader {
	if seed == 0 {
		seed = 0x9e3779b97f4a7c15
	}
	return &patternReader{left: n, state: seed, used: 8}
}

func (p *patternReader) next() uint64 {
	p.state ^= p.state >> 12
	p.state ^= p.state << 25
	p.state ^= p.state >> 27
	return p.state * 0x2545f4914f6cdd1d
}

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n := 0
	for n < len(b) && p.used < 8 { // the rest of a partly returned word
		b[n] = p.word[p.used]
		n++
		p.used++
	}
	for ; len(b)-n >= 8; n += 8 {
		v := p.next()
		b[n], b[n+1], b[n+2], b[n+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		b[n+4], b[n+5], b[n+6], b[n+7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
	}
	if n < len(b) {
		v := p.next()
		for i := range p.word {
			p.word[i] = byte(v >> (8 * i))
		}
		p.used = 0
		for n < len(b) {
			b[n] = p.word[p.used]
			n++
			p.used++
		}
	}
	p.left -= int64(n)
	return n, nil
}

// stats summarises request latencies.
type stats struct {
	mean, p50, p90, p95, max time.Duration
}

func summarize(d []time.Duration) stats {
	if len(d) == 0 {
		return stats{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	var sum time.Duration
	for _, v := range s {
		sum += v
	}
	return stats{
		mean: sum / time.Duration(len(s)),
		p50:  percentile(s, 50),
		p90:  percentile(s, 90),
		p95:  percentile(s, 95),
		max:  s[len(s)-1],
	}
}

// percentile returns the nearest-rank p-th percentile of sorted values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// result is one scenario's outcome; the JSON line carries these fields.
type result struct {
	Label    string `json:"label"`
	Round    int    `json:"round,omitempty"`
	Scenario string `json:"scenario"`
	// Concurrency is the number of workers (1 for the large transfers).
	Concurrency int `json:"concurrency"`
	// Size is the body of one PUT: -size for put-small, 64 for propfind's
	// seeding, 4096 for sync, -large for the large transfers.
	Size int64 `json:"size,omitempty"`
	// Files is the number of files propfind seeded and listed.
	Files int `json:"files,omitempty"`
	// N counts the measured requests that succeeded.
	N      int     `json:"n"`
	Errors int     `json:"errors"`
	Secs   float64 `json:"seconds"`
	// OpsPerSec is N over Secs for the concurrent loops.
	OpsPerSec float64 `json:"ops_per_sec,omitempty"`
	MeanMs    float64 `json:"mean_ms,omitempty"`
	P50Ms     float64 `json:"p50_ms,omitempty"`
	P90Ms     float64 `json:"p90_ms,omitempty"`
	P95Ms     float64 `json:"p95_ms,omitempty"`
	MaxMs     float64 `json:"max_ms,omitempty"`
	// Bytes: response bytes for propfind, body bytes for the large
	// transfers, request bytes for put-small.
	Bytes int64 `json:"bytes,omitempty"`
	// BytesPerResponse is propfind's mean response size.
	BytesPerResponse int64 `json:"bytes_per_response,omitempty"`
	// Entries is the number of responses in propfind's first multistatus.
	Entries int `json:"entries,omitempty"`
	// MBPerSec is Bytes / Secs in 10^6 bytes per second (large transfers).
	MBPerSec float64 `json:"mb_per_sec,omitempty"`
	// SetupSecs is the time spent seeding (propfind's files, or get-large's
	// file when put-large did not leave one).
	SetupSecs float64 `json:"setup_seconds,omitempty"`
	// SetupOpsPerSec and SetupP50Ms are propfind's seeding rate and the
	// median latency of its PUTs.
	SetupOpsPerSec float64 `json:"setup_ops_per_sec,omitempty"`
	SetupP50Ms     float64 `json:"setup_p50_ms,omitempty"`
	// PeakRSSKB and PeakAnonRSSKB are not davload's: scripts/bench adds a
	// "peak-rss" line with the server's VmHWM and the largest RssAnon it
	// saw, for davload report.
	PeakRSSKB     int64 `json:"peak_rss_kb,omitempty"`
	PeakAnonRSSKB int64 `json:"peak_anon_rss_kb,omitempty"`
}

// finish records a run that started at start and timed the requests in d.
func (res *result) finish(start time.Time, d []time.Duration) {
	res.Secs = time.Since(start).Seconds()
	res.N = len(d)
	res.OpsPerSec = float64(res.N) / res.Secs
	res.setLatency(d)
}

func (res *result) setLatency(d []time.Duration) {
	s := summarize(d)
	res.MeanMs, res.P50Ms, res.P90Ms, res.P95Ms, res.MaxMs = ms(s.mean), ms(s.p50), ms(s.p90), ms(s.p95), ms(s.max)
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// printTable writes one aligned key=value line per scenario.
func printTable(w io.Writer, results []*result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range results {
		f := []string{r.Scenario, fmt.Sprintf("n=%d", r.N), fmt.Sprintf("errors=%d", r.Errors)}
		lat := []string{"mean=" + fmtMs(r.MeanMs), "p50=" + fmtMs(r.P50Ms), "p90=" + fmtMs(r.P90Ms), "p95=" + fmtMs(r.P95Ms)}
		switch r.Scenario {
		case "propfind":
			f = append(f, lat...)
			f = append(f, fmt.Sprintf("bytes=%d", r.BytesPerResponse), fmt.Sprintf("entries=%d", r.Entries),
				fmt.Sprintf("seed=%.0f/s", r.SetupOpsPerSec))
		case "put-small", "mkcol-delete", "sync":
			f = append(f, lat...)
			f = append(f, fmt.Sprintf("ops/s=%.1f", r.OpsPerSec))
		case "put-large", "get-large":
			f = append(f, fmt.Sprintf("time=%.2fs", r.Secs), fmt.Sprintf("bytes=%d", r.Bytes),
				fmt.Sprintf("MB/s=%.1f", r.MBPerSec))
		}
		fmt.Fprintln(tw, strings.Join(f, "\t"))
	}
	tw.Flush()
}

func fmtMs(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0fms", v)
	case v >= 10:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.2fms", v)
}

// runner holds the HTTP client and the settings all scenarios share.
type runner struct {
	cfg    *config
	client *http.Client
	stderr io.Writer
	runID  string

	logMu sync.Mutex

	// large is the file put-large left for get-large, if any.
	large *largeFile
}

type largeFile struct {
	folder, file string
}

func newRunner(cfg *config, stderr io.Writer) *runner {
	dialer := &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		// Whatever a name resolves to, connect to loopback addresses only.
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return fmt.Errorf("refusing to connect to non-loopback address %s", address)
			}
			return nil
		},
	}
	tr := &http.Transport{
		Proxy:                 nil, // never through a proxy: the load stays on this machine
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4 * cfg.concurrency,
		MaxIdleConnsPerHost:   2 * cfg.concurrency,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true, // measure the bytes the server sends
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: cfg.insecure},
	}
	var id [4]byte
	rand.Read(id[:])
	return &runner{
		cfg: cfg,
		client: &http.Client{
			Transport: tr,
			// Redirects count as failures, and are never followed elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		stderr: stderr,
		runID:  time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(id[:]),
	}
}

func (r *runner) logf(format string, args ...any) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	fmt.Fprintf(r.stderr, "davload: "+format+"\n", args...)
}

// call describes one request.
type call struct {
	method string
	url    string
	header map[string]string
	body   io.Reader
	size   int64 // Content-Length when body is set
	want   []int // accepted statuses
	// read, when set, consumes a successful response body as it streams
	// in (what it leaves is discarded).
	read  func(io.Reader) error
	large bool // allow the large-transfer timeout
}

// do sends c, reads the whole response and checks its status. It returns
// the number of body bytes received.
func (r *runner) do(ctx context.Context, c call) (int64, error) {
	timeout := r.cfg.timeout
	if c.large {
		timeout += time.Duration(r.cfg.large/1e6) * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, c.method, c.url, nil)
	if err != nil {
		return 0, err
	}
	if c.body != nil {
		req.Body = io.NopCloser(c.body)
		req.ContentLength = c.size
		if c.size == 0 {
			req.Body = http.NoBody
		}
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	if r.cfg.user != "" {
		req.SetBasicAuth(r.cfg.user, r.cfg.pass)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if !slices.Contains(c.want, resp.StatusCode) {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return int64(len(body)), fmt.Errorf("%s %s: status %s, want %v%s", c.method, c.url, resp.Status, c.want, excerpt(body))
	}
	body := &countingReader{r: resp.Body}
	if c.read != nil {
		if err := c.read(body); err != nil {
			return body.n, fmt.Errorf("%s %s: %w", c.method, c.url, err)
		}
	}
	if _, err := io.Copy(io.Discard, body); err != nil {
		return body.n, fmt.Errorf("%s %s: reading response: %w", c.method, c.url, err)
	}
	return body.n, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// excerpt shows the start of an error body.
func excerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if s == "" {
		return ""
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return ": " + s
}

// child returns the URL of name inside the collection at base (a URL ending
// in a slash); dir adds the trailing slash of a collection.
func child(base, name string, dir bool) string {
	u := base + url.PathEscape(name)
	if dir {
		u += "/"
	}
	return u
}

// preflight checks that the URL is a collection the credentials can read.
func (r *runner) preflight(ctx context.Context) error {
	_, err := r.do(ctx, call{
		method: "PROPFIND", url: r.cfg.base.String(),
		header: map[string]string{"Depth": "0", "Content-Type": "application/xml; charset=utf-8"},
		body:   strings.NewReader(propfindBody), size: int64(len(propfindBody)),
		want: []int{http.StatusMultiStatus},
	})
	if err != nil {
		return fmt.Errorf("server check failed: %v", err)
	}
	return nil
}

// scenario tracks one scenario's errors and stops its loops after too many.
type scenario struct {
	r      *runner
	name   string
	ctx    context.Context
	errors atomic.Int64
}

// fail counts err unless the run was interrupted, and describes the first
// few failures.
func (s *scenario) fail(err error) {
	if s.ctx.Err() != nil {
		return
	}
	n := s.errors.Add(1)
	if n <= logErrors {
		s.r.logf("%s: %v", s.name, err)
	}
	if n == maxErrors {
		s.r.logf("%s: %d errors, stopping its loops", s.name, n)
	}
}

// ok reports whether loops may go on.
func (s *scenario) ok() bool {
	return s.ctx.Err() == nil && s.errors.Load() < maxErrors
}

func (r *runner) runScenario(ctx context.Context, name string) *result {
	s := &scenario{r: r, name: name, ctx: ctx}
	res := &result{Label: r.cfg.label, Round: r.cfg.round, Scenario: name, Concurrency: r.cfg.concurrency}
	r.logf("%s: starting", name)
	switch name {
	case "propfind":
		res.Size, res.Files = seedFileSize, r.cfg.files
		r.propfind(s, res)
	case "put-small":
		res.Size = r.cfg.size
		r.putSmall(s, res)
	case "put-large":
		res.Size, res.Concurrency = r.cfg.large, 1
		r.putLarge(s, res)
	case "get-large":
		res.Size, res.Concurrency = r.cfg.large, 1
		r.getLarge(s, res)
	case "mkcol-delete":
		r.mkcolDelete(s, res)
	case "sync":
		res.Size, res.Files = syncFileSize, syncFiles
		r.syncMix(s, res)
	}
	res.Errors = int(s.errors.Load())
	res.Secs = round(res.Secs, 3)
	res.SetupSecs = round(res.SetupSecs, 3)
	res.OpsPerSec = round(res.OpsPerSec, 1)
	res.SetupOpsPerSec = round(res.SetupOpsPerSec, 1)
	res.MBPerSec = round(res.MBPerSec, 1)
	return res
}

// folderName is the scenario's own folder under -url.
func (r *runner) folderName(scenario string) string {
	return "davload-" + r.runID + "-" + scenario
}

// mkcol creates a folder at URL u (ending in a slash).
func (r *runner) mkcol(s *scenario, u string) bool {
	if _, err := r.do(s.ctx, call{method: "MKCOL", url: u, want: []int{http.StatusCreated}}); err != nil {
		s.fail(err)
		return false
	}
	return true
}

// scenarioFolder creates the scenario's folder under -url and returns its
// URL.
func (r *runner) scenarioFolder(s *scenario, name string) (string, bool) {
	u := child(r.cfg.base.String(), name, true)
	return u, r.mkcol(s, u)
}

// remove deletes a folder at the end of a scenario, even after an
// interrupt.
func (r *runner) remove(s *scenario, u string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 10*r.cfg.timeout)
	defer cancel()
	_, err := r.do(ctx, call{method: "DELETE", url: u, want: []int{http.StatusNoContent, http.StatusOK}})
	if err != nil {
		s.errors.Add(1)
		r.logf("%s: cleanup: %v", s.name, err)
	}
}

// putStatuses are the answers to a successful PUT.
var putStatuses = []int{http.StatusCreated, http.StatusNoContent, http.StatusOK}

// put uploads content to u.
func (r *runner) put(ctx context.Context, u string, content []byte) error {
	_, err := r.do(ctx, call{method: "PUT", url: u,
		header: map[string]string{"Content-Type": "application/octet-stream"},
		body:   bytes.NewReader(content), size: int64(len(content)), want: putStatuses})
	return err
}

// workers runs fn on n goroutines until each returns and gives back their
// latencies.
func workers(n int, fn func(w int, lat *[]time.Duration)) []time.Duration {
	lats := make([][]time.Duration, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() { fn(w, &lats[w]) })
	}
	wg.Wait()
	return slices.Concat(lats...)
}

// budget hands out the requests of a timed loop: it ends at the deadline,
// after -count requests (when set) or when the scenario stops, whichever
// comes first. It is shared by all of a loop's workers.
type budget struct {
	s        *scenario
	deadline time.Time
	limited  bool
	left     atomic.Int64
}

func (r *runner) newBudget(s *scenario) *budget {
	b := &budget{s: s, deadline: time.Now().Add(r.cfg.duration), limited: r.cfg.count > 0}
	b.left.Store(int64(r.cfg.count))
	return b
}

// take reports whether one more request may be sent.
func (b *budget) take() bool {
	if !b.s.ok() || !time.Now().Before(b.deadline) {
		return false
	}
	return !b.limited || b.left.Add(-1) >= 0
}

// seed PUTs n files of content into dir with the scenario's workers and
// returns how many were stored and how long it took. The file names are
// handed out by count, so every file is written once.
func (r *runner) seed(s *scenario, dir string, n int, content []byte, name func(int64) string) (int64, []time.Duration, time.Duration) {
	var next, stored atomic.Int64
	start := time.Now()
	lat := workers(r.cfg.concurrency, func(_ int, lat *[]time.Duration) {
		for s.ok() {
			i := next.Add(1) - 1
			if i >= int64(n) {
				return
			}
			t := time.Now()
			if err := r.put(s.ctx, child(dir, name(i), false), content); err != nil {
				s.fail(err)
				continue
			}
			*lat = append(*lat, time.Since(t))
			stored.Add(1)
		}
	})
	return stored.Load(), lat, time.Since(start)
}

// propfindCall lists dir with the ownCloud client's properties; read, when
// set, gets the multistatus as it streams in.
func propfindCall(dir string, read func(io.Reader) error) call {
	return call{method: "PROPFIND", url: dir,
		header: map[string]string{"Depth": "1", "Content-Type": "application/xml; charset=utf-8"},
		body:   strings.NewReader(propfindBody), size: int64(len(propfindBody)),
		want: []int{http.StatusMultiStatus}, read: read}
}

func (r *runner) propfind(s *scenario, res *result) {
	dir, ok := r.scenarioFolder(s, r.folderName("propfind"))
	if !ok {
		return
	}
	defer r.remove(s, dir)

	content := bytes.Repeat([]byte("davload\n"), seedFileSize/8)
	seeded, seedLat, took := r.seed(s, dir, r.cfg.files, content, func(i int64) string { return fmt.Sprintf("f%07d.txt", i) })
	res.SetupSecs = took.Seconds()
	if res.SetupSecs > 0 {
		res.SetupOpsPerSec = float64(seeded) / res.SetupSecs
	}
	res.SetupP50Ms = ms(summarize(seedLat).p50)
	r.logf("propfind: seeded %d files in %.2fs", seeded, res.SetupSecs)
	if !s.ok() {
		return
	}

	// List, one request at a time. The first answer is counted as it
	// streams, to check that every file is listed.
	var lat []time.Duration
	b := r.newBudget(s)
	start := time.Now()
	for first := true; b.take(); first = false {
		var read func(io.Reader) error
		if first {
			read = func(body io.Reader) error {
				n, err := countResponses(body)
				res.Entries = n
				if err == nil && n != int(seeded)+1 {
					err = fmt.Errorf("%d responses, want %d", n, seeded+1)
				}
				return err
			}
		}
		t := time.Now()
		n, err := r.do(s.ctx, propfindCall(dir, read))
		if err != nil {
			s.fail(err)
			continue
		}
		lat = append(lat, time.Since(t))
		res.Bytes += n
	}
	res.Secs = time.Since(start).Seconds()
	res.N = len(lat)
	if res.N > 0 {
		res.BytesPerResponse = res.Bytes / int64(res.N)
	}
	res.setLatency(lat)
}

// countResponses counts the DAV:response elements of a multistatus body.
func countResponses(body io.Reader) (int, error) {
	dec := xml.NewDecoder(body)
	n := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("parsing multistatus: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Space == "DAV:" && se.Name.Local == "response" {
			n++
		}
	}
}

func (r *runner) putSmall(s *scenario, res *result) {
	dir, ok := r.scenarioFolder(s, r.folderName("put-small"))
	if !ok {
		return
	}
	defer r.remove(s, dir)
	content := make([]byte, r.cfg.size)
	io.ReadFull(newPatternReader(r.cfg.size, 1), content)
	b := r.newBudget(s)
	start := time.Now()
	lat := workers(r.cfg.concurrency, func(w int, lat *[]time.Duration) {
		for i := 0; b.take(); i++ {
			t := time.Now()
			if err := r.put(s.ctx, child(dir, fmt.Sprintf("w%03d-%07d.bin", w, i), false), content); err != nil {
				s.fail(err)
				continue
			}
			*lat = append(*lat, time.Since(t))
		}
	})
	res.finish(start, lat)
	res.Bytes = int64(res.N) * r.cfg.size
}

// uploadLarge PUTs -large generated bytes and returns the time it took.
func (r *runner) uploadLarge(s *scenario, u string) (time.Duration, error) {
	t := time.Now()
	_, err := r.do(s.ctx, call{method: "PUT", url: u,
		header: map[string]string{"Content-Type": "application/octet-stream"},
		body:   newPatternReader(r.cfg.large, 42), size: r.cfg.large, want: putStatuses, large: true})
	return time.Since(t), err
}

func (r *runner) putLarge(s *scenario, res *result) {
	dir, ok := r.scenarioFolder(s, r.folderName("put-large"))
	if !ok {
		return
	}
	file := child(dir, "large.bin", false)
	d, err := r.uploadLarge(s, file)
	if err != nil {
		s.fail(err)
		r.remove(s, dir)
		return
	}
	res.N = 1
	res.Secs = d.Seconds()
	res.Bytes = r.cfg.large
	res.MBPerSec = float64(r.cfg.large) / 1e6 / res.Secs
	if slices.Contains(r.cfg.scenarios, "get-large") {
		r.large = &largeFile{folder: dir, file: file} // get-large removes it
		return
	}
	r.remove(s, dir)
}

func (r *runner) getLarge(s *scenario, res *result) {
	lf := r.large
	r.large = nil
	if lf == nil { // put-large did not run or failed: upload untimed
		dir, ok := r.scenarioFolder(s, r.folderName("get-large"))
		if !ok {
			return
		}
		lf = &largeFile{folder: dir, file: child(dir, "large.bin", false)}
		d, err := r.uploadLarge(s, lf.file)
		res.SetupSecs = d.Seconds()
		if err != nil {
			s.fail(err)
			r.remove(s, dir)
			return
		}
	}
	defer r.remove(s, lf.folder)
	t := time.Now()
	n, err := r.do(s.ctx, call{method: "GET", url: lf.file, want: []int{http.StatusOK}, large: true})
	d := time.Since(t)
	if err != nil {
		s.fail(err)
		return
	}
	if n != r.cfg.large {
		s.fail(fmt.Errorf("GET %s: %d bytes, want %d", lf.file, n, r.cfg.large))
		return
	}
	res.N = 1
	res.Secs = d.Seconds()
	res.Bytes = n
	res.MBPerSec = float64(n) / 1e6 / res.Secs
}

func (r *runner) mkcolDelete(s *scenario, res *result) {
	dir, ok := r.scenarioFolder(s, r.folderName("mkcol-delete"))
	if !ok {
		return
	}
	defer r.remove(s, dir)
	b := r.newBudget(s)
	start := time.Now()
	lat := workers(r.cfg.concurrency, func(w int, lat *[]time.Duration) {
		for i := 0; b.take(); i++ {
			u := child(dir, fmt.Sprintf("w%03d-%07d", w, i), true)
			t := time.Now()
			if _, err := r.do(s.ctx, call{method: "MKCOL", url: u, want: []int{http.StatusCreated}}); err != nil {
				s.fail(err)
				continue
			}
			*lat = append(*lat, time.Since(t))
			t = time.Now()
			if _, err := r.do(s.ctx, call{method: "DELETE", url: u, want: []int{http.StatusNoContent, http.StatusOK}}); err != nil {
				s.fail(err)
				continue
			}
			*lat = append(*lat, time.Since(t))
		}
	})
	res.finish(start, lat)
}
