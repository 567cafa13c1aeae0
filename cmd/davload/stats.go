package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

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
	// Files is the number of files propfind seeded and listed, or delete
	// seeded into each folder it deleted.
	Files int `json:"files,omitempty"`
	// Client and Folders describe a desktop pass: the sync client and
	// the folders the tree has.
	Client  string `json:"client,omitempty"`
	Folders int    `json:"folders,omitempty"`
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
	// SetupSecs is the time spent seeding (propfind's and delete's files,
	// or get-large's file when put-large did not leave one).
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
	// Workload names the workload a "peak-rss" line is the peak of (the
	// server's start among them); without it the line is the whole run's.
	Workload string `json:"workload,omitempty"`
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

// transferred records one large transfer of n bytes that took d.
func (res *result) transferred(d time.Duration, n int64) {
	res.N = 1
	res.Secs = d.Seconds()
	res.Bytes = n
	res.MBPerSec = float64(n) / 1e6 / res.Secs
}

// roundFigures drops the digits that are noise, to keep the JSON lines
// short.
func (res *result) roundFigures() {
	res.Secs = round(res.Secs, 3)
	res.SetupSecs = round(res.SetupSecs, 3)
	res.OpsPerSec = round(res.OpsPerSec, 1)
	res.SetupOpsPerSec = round(res.SetupOpsPerSec, 1)
	res.MBPerSec = round(res.MBPerSec, 1)
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
		case "delete":
			f = append(f, lat...)
			f = append(f, fmt.Sprintf("files=%d", r.Files), fmt.Sprintf("seeding=%.1fs", r.SetupSecs))
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
