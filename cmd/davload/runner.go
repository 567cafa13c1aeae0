package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// maxErrors stops a scenario's loops once this many requests failed.
	maxErrors = 100
	// logErrors is how many failures per scenario are described on stderr.
	logErrors = 5
)

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

func newRunner(cfg *config, stderr io.Writer) *runner {
	return &runner{
		cfg: cfg,
		client: &http.Client{
			Transport: newTransport(cfg),
			// Redirects count as failures, and are never followed elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		stderr: stderr,
		runID:  newRunID(),
	}
}

// newTransport keeps enough idle connections for -concurrency workers.
func newTransport(cfg *config) *http.Transport {
	return &http.Transport{
		Proxy:                 nil, // never through a proxy: the load stays on this machine
		DialContext:           loopbackDialer().DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4 * cfg.concurrency,
		MaxIdleConnsPerHost:   2 * cfg.concurrency,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true, // measure the bytes the server sends
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: cfg.insecure},
	}
}

// loopbackDialer connects to loopback addresses only, whatever a name
// resolves to.
func loopbackDialer() *net.Dialer {
	return &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
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
}

// newRunID names a run's folders by its start and a random suffix, so that
// two runs never work in the same folder.
func newRunID() string {
	var id [4]byte
	rand.Read(id[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(id[:])
}

func (r *runner) logf(format string, args ...any) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	fmt.Fprintf(r.stderr, "davload: "+format+"\n", args...)
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

// timed sends one measured request: its latency goes into lat when it
// succeeds, its error is counted when it fails. It reports whether it
// succeeded.
func (s *scenario) timed(lat *[]time.Duration, send func() error) bool {
	t := time.Now()
	if err := send(); err != nil {
		s.fail(err)
		return false
	}
	*lat = append(*lat, time.Since(t))
	return true
}

// scenarioFolder creates the scenario's own folder under -url and returns
// its URL.
func (r *runner) scenarioFolder(s *scenario) (string, bool) {
	u := child(r.cfg.base.String(), "davload-"+r.runID+"-"+s.name, true)
	return u, r.mkcol(s, u)
}

// mkcol creates a folder at URL u (ending in a slash) and reports whether
// it could.
func (r *runner) mkcol(s *scenario, u string) bool {
	if err := r.send(s.ctx, mkcolCall(u)); err != nil {
		s.fail(err)
		return false
	}
	return true
}

// remove deletes a folder at the end of a scenario, even after an
// interrupt.
func (r *runner) remove(s *scenario, u string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 10*r.cfg.timeout)
	defer cancel()
	if err := r.send(ctx, deleteCall(u)); err != nil {
		s.errors.Add(1)
		r.logf("%s: cleanup: %v", s.name, err)
	}
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

// runTimed runs loop on -concurrency workers that share one budget, and
// records in res the requests they timed.
func (r *runner) runTimed(s *scenario, res *result, loop func(w int, b *budget, lat *[]time.Duration)) {
	b := r.newBudget(s)
	start := time.Now()
	lat := workers(r.cfg.concurrency, func(w int, lat *[]time.Duration) { loop(w, b, lat) })
	res.finish(start, lat)
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
