package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
)

// config is a run's settings, read from the flags.
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

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("davload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{large: 256 << 20, size: 4 << 10}
	rawURL, rawScenarios := cfg.define(fs)
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
	if cfg.scenarios, err = parseScenarios(*rawScenarios); err != nil {
		return nil, err
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.label == "" {
		cfg.label = base.Host
	}
	return cfg, nil
}

// define declares the flags on fs, with cfg's fields as their targets.
// -url and -scenario need checking beyond their type, so their raw text is
// returned for parseFlags to read.
func (cfg *config) define(fs *flag.FlagSet) (rawURL, rawScenarios *string) {
	rawURL = fs.String("url", "", "WebDAV collection URL to work under, e.g. http://127.0.0.1:9280/remote.php/webdav/ (loopback hosts only)")
	fs.StringVar(&cfg.user, "user", "", "Basic auth user (none when empty)")
	fs.StringVar(&cfg.pass, "pass", "", "Basic auth password")
	rawScenarios = fs.String("scenario", "all", "comma list of scenarios: "+strings.Join(scenarioNames, ", ")+", or all")
	fs.IntVar(&cfg.concurrency, "concurrency", 16, "workers for put-small, mkcol-delete, sync and the seeding of folders")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "length of each timed scenario")
	fs.IntVar(&cfg.files, "files", 10000, "files in propfind's folder and in each folder delete removes")
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
	return rawURL, rawScenarios
}

// check refuses numbers no run can use.
func (cfg *config) check() error {
	switch {
	case cfg.concurrency < 1:
		return errors.New("-concurrency must be at least 1")
	case cfg.duration <= 0:
		return errors.New("-duration must be positive")
	case cfg.files < 0:
		return errors.New("-files must not be negative")
	case cfg.count < 0:
		return errors.New("-count must not be negative")
	case cfg.size < 0:
		return errors.New("-size must not be negative")
	case cfg.large <= 0:
		return errors.New("-large must be positive")
	case cfg.timeout <= 0:
		return errors.New("-timeout must be positive")
	}
	return nil
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

// flagsStatus is the exit status of a command line that did not parse: 0
// when it asked for help (the usage is printed), 2 otherwise.
func flagsStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

// flagsFailed says, as cmd, why a command line did not parse, unless it
// asked for help, and returns flagsStatus.
func flagsFailed(stderr io.Writer, cmd string, err error) int {
	if !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, cmd+":", err)
	}
	return flagsStatus(err)
}

// untilInterrupted is the context of a run: it ends on SIGINT or
// SIGTERM.
func untilInterrupted() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
