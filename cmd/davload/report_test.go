package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestMeasures(t *testing.T) {
	for _, tc := range []struct {
		res  result
		want []string // work names
	}{
		{result{Scenario: "put-small", Size: 4096, Concurrency: 1}, []string{"PUT 4.0 KiB, 1 client"}},
		{result{Scenario: "put-small", Size: 4096, Concurrency: 16}, []string{"PUT 4.0 KiB, 16 clients"}},
		{result{Scenario: "propfind", Size: 64, Files: 10000, Concurrency: 8},
			[]string{"PUT 64 B × 10,000, 8 clients", "PROPFIND Depth 1, 10,000 files, p50"}},
		{result{Scenario: "put-large", Size: 1 << 30}, []string{"PUT 1.0 GiB"}},
		{result{Scenario: "get-large", Size: 1 << 30}, []string{"GET 1.0 GiB"}},
		{result{Scenario: "delete", Size: 64, Files: 10000, Concurrency: 8}, []string{"DELETE of a folder of 10,000 files, p50"}},
		{result{Scenario: "peak-rss", PeakRSSKB: 1024}, []string{"peak RSS (VmHWM)"}},
		{result{Scenario: "peak-rss", PeakRSSKB: 1024, PeakAnonRSSKB: 512},
			[]string{"peak RSS (VmHWM)", "peak anonymous RSS (heap, stacks)"}},
		{result{Scenario: "peak-rss", Workload: "delete 10000 files ×8", PeakRSSKB: 1024, PeakAnonRSSKB: 512},
			[]string{"peak RSS (VmHWM) in delete 10000 files ×8"}},
		{result{Scenario: "desktop-first", Client: "owncloudcmd", Files: 5000, Size: 4096, Folders: 50},
			[]string{"owncloudcmd first sync, 5,000 × 4.0 KiB in 50 folders", "owncloudcmd first sync, 5,000 × 4.0 KiB in 50 folders, time"}},
		{result{Scenario: "desktop-noop", Client: "nextcloudcmd"}, []string{"nextcloudcmd no-op sync"}},
		{result{Scenario: "desktop-resync", Client: "owncloudcmd"}, []string{"owncloudcmd first resync, nothing changed"}},
		{result{Scenario: "desktop-changed", Client: "nextcloudcmd", Files: 100}, []string{"nextcloudcmd sync of 100 changed files"}},
		{result{Scenario: "unknown"}, nil},
	} {
		var got []string
		for _, m := range measures(&tc.res) {
			got = append(got, m.work)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: works %q, want %q", tc.res.Scenario, got, tc.want)
		}
	}
	// Every work the issue sets a target for is one davload produces.
	produced := map[string]bool{}
	for _, res := range []result{
		{Scenario: "put-small", Size: 4096, Concurrency: 1}, {Scenario: "put-small", Size: 4096, Concurrency: 16},
		{Scenario: "propfind", Size: 64, Files: 10000, Concurrency: 8},
		{Scenario: "put-large", Size: 1 << 30}, {Scenario: "get-large", Size: 1 << 30}, {Scenario: "peak-rss", PeakAnonRSSKB: 1},
		{Scenario: "desktop-first", Client: "owncloudcmd", Files: 5000, Size: 4096, Folders: 50},
		{Scenario: "desktop-first", Client: "nextcloudcmd", Files: 5000, Size: 4096, Folders: 50},
		{Scenario: "desktop-noop", Client: "owncloudcmd"}, {Scenario: "desktop-noop", Client: "nextcloudcmd"},
		{Scenario: "desktop-resync", Client: "owncloudcmd"}, {Scenario: "desktop-resync", Client: "nextcloudcmd"},
	} {
		for _, m := range measures(&res) {
			produced[m.work] = true
		}
	}
	for work := range targets {
		if !produced[work] {
			t.Errorf("target for %q, which no result produces", work)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

func TestDescribeTargets(t *testing.T) {
	for _, tc := range []struct {
		name        string
		goals       []target
		lowerBetter bool
		value       float64
		ratios      map[string]float64
		want, met   string
	}{
		{"none", nil, false, 1, nil, "", ""},
		{"ratio met", []target{{peer: "apache", bound: 1.5}}, false, 0, map[string]float64{"apache": 1.6}, "≥ 1.5 × apache", "✓"},
		{"ratio missed", []target{{peer: "apache", bound: 1.5}}, false, 0, map[string]float64{"apache": 1.4}, "≥ 1.5 × apache", "✗"},
		{"latency, two peers", []target{{peer: "apache", bound: 0.2}, {peer: "nginx", bound: 1}}, true, 0,
			map[string]float64{"apache": 0.1, "nginx": 1.2}, "≤ 0.2 × apache, ≤ 1 × nginx", "✗"},
		{"absolute", []target{{bound: 80}}, true, 79, nil, "≤ 80", "✓"},
		{"no figure", []target{{peer: "nginx", bound: 0.9}}, false, 0, map[string]float64{"nginx": math.NaN()}, "≥ 0.9 × nginx", ""},
		{"peer did not run", []target{{peer: "apache", bound: 0.2}}, true, 0, map[string]float64{}, "≤ 0.2 × apache", ""},
	} {
		goal, met := describeTargets(tc.goals, tc.lowerBetter, tc.value, tc.ratios)
		if goal != tc.want || met != tc.met {
			t.Errorf("%s: got %q %q, want %q %q", tc.name, goal, met, tc.want, tc.met)
		}
	}
}

// TestReport feeds two rounds of davload output (with its text lines) and
// checks medians, ratios and the mark of a failed run.
func TestReport(t *testing.T) {
	in := `put-small  n=10  errors=0
{"label":"apache","round":1,"scenario":"put-small","concurrency":1,"size":4096,"ops_per_sec":100}
{"label":"apache","round":2,"scenario":"put-small","concurrency":1,"size":4096,"ops_per_sec":300}
{"label":"davspaces","round":1,"scenario":"put-small","concurrency":1,"size":4096,"ops_per_sec":250}
{"label":"davspaces","round":2,"scenario":"put-small","concurrency":1,"size":4096,"ops_per_sec":150}
{"label":"nginx","round":1,"scenario":"put-small","concurrency":1,"size":4096,"ops_per_sec":400,"errors":3}
{"label":"davspaces","scenario":"peak-rss","peak_rss_kb":51200,"peak_anon_rss_kb":70656}
`
	var out, errs bytes.Buffer
	if code := runReport(nil, strings.NewReader(in), &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	got := out.String()
	for _, want := range []string{
		"| work | apache | nginx | davspaces | davspaces/apache | davspaces/nginx | target | met |",
		"| PUT 4.0 KiB, 1 client (op/s) | 200 | —\\* | 200 | 1.00 | — | ≥ 1 × apache | ✓ |",
		"| peak RSS (VmHWM) (MB) | — | — | 50.0 | — | — | ≤ 100 | ✓ |",
		"| peak anonymous RSS (heap, stacks) (MB) | — | — | 69.0 | — | — | ≤ 64 | ✗ |",
		"some requests failed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if code := runReport(nil, strings.NewReader("{not json\n"), &out, &errs); code == 0 {
		t.Error("a broken JSON line was accepted")
	}
}
