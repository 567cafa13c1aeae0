package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/dustin/go-humanize"
)

// The report subcommand reads the JSON lines of many davload runs (several
// servers, several rounds) and prints one Markdown table: per workload the
// median over the rounds for each server, the subject's ratio to each peer,
// and the target beside it. Lines that are not JSON objects are
// skipped, so whole davload outputs can be fed in.

// measure is one figure a result contributes to the table.
type measure struct {
	work  string
	unit  string
	value float64
	// lowerBetter is set for latencies and memory.
	lowerBetter bool
	failed      bool
}

// target is a goal for the subject: a ratio to a peer, or with an empty
// peer an absolute value, as a bound in the direction that is better.
type target struct {
	peer  string
	bound float64
}

// targets are the goals of the performance issue, by work name.
var targets = map[string][]target{
	"PROPFIND Depth 1, 10,000 files, p50": {{peer: "apache", bound: 0.2}, {peer: "nginx", bound: 1}},
	"PUT 4.0 KiB, 1 client":               {{peer: "apache", bound: 1}},
	"PUT 4.0 KiB, 16 clients":             {{peer: "apache", bound: 1.5}},
	"PUT 64 B × 10,000, 8 clients":        {{peer: "apache", bound: 1.5}},
	"PUT 1.0 GiB":                         {{peer: "apache", bound: 1.3}},
	"GET 1.0 GiB":                         {{peer: "nginx", bound: 0.9}},
	// Memory over the whole run (issue 23): VmHWM counts the binary's
	// text and the database pages mapped, RssAnon only heap and stacks.
	"peak RSS (VmHWM)":                  {{bound: 100}},
	"peak anonymous RSS (heap, stacks)": {{bound: 64}},
	// Issue 23: the desktop clients against their floor (the stub).
	"owncloudcmd first sync, 5,000 × 4.0 KiB in 50 folders, time":  {{peer: "stub", bound: 1.2}},
	"nextcloudcmd first sync, 5,000 × 4.0 KiB in 50 folders, time": {{bound: 11}},
	"owncloudcmd no-op sync":                     {{bound: 1}},
	"nextcloudcmd no-op sync":                    {{bound: 1}},
	"owncloudcmd first resync, nothing changed":  {{bound: 1}},
	"nextcloudcmd first resync, nothing changed": {{bound: 1}},
}

// desktopMeasures are the figures of one pass of a desktop client (davload
// desktop): the first sync as files/s and seconds, the others in seconds.
func desktopMeasures(res *result, failed bool) []measure {
	switch res.Scenario {
	case "desktop-first":
		work := fmt.Sprintf("%s first sync, %s × %s in %d folders", res.Client, humanize.Comma(int64(res.Files)), formatSize(res.Size), res.Folders)
		return []measure{
			{work: work, unit: "files/s", value: res.OpsPerSec, failed: failed},
			{work: work + ", time", unit: "s", value: res.Secs, lowerBetter: true, failed: failed},
		}
	case "desktop-resync":
		return []measure{{work: res.Client + " first resync, nothing changed", unit: "s", value: res.Secs, lowerBetter: true, failed: failed}}
	case "desktop-noop":
		return []measure{{work: res.Client + " no-op sync", unit: "s", value: res.Secs, lowerBetter: true, failed: failed}}
	}
	return []measure{{work: fmt.Sprintf("%s sync of %d changed files", res.Client, res.Files), unit: "s",
		value: res.Secs, lowerBetter: true, failed: failed}}
}

// measures turns one result line into the figures it stands for. The
// propfind scenario gives two: its seeding is the many-small-PUTs workload.
func measures(res *result) []measure {
	failed := res.Errors > 0
	clients := func(n int) string {
		if n == 1 {
			return "1 client"
		}
		return fmt.Sprintf("%d clients", n)
	}
	switch res.Scenario {
	case "put-small":
		return []measure{{work: fmt.Sprintf("PUT %s, %s", formatSize(res.Size), clients(res.Concurrency)),
			unit: "op/s", value: res.OpsPerSec, failed: failed}}
	case "propfind":
		files := humanize.Comma(int64(res.Files))
		return []measure{
			{work: fmt.Sprintf("PUT %d B × %s, %s", res.Size, files, clients(res.Concurrency)),
				unit: "op/s", value: res.SetupOpsPerSec, failed: failed},
			{work: fmt.Sprintf("PROPFIND Depth 1, %s files, p50", files),
				unit: "ms", value: res.P50Ms, lowerBetter: true, failed: failed},
		}
	case "put-large", "get-large":
		return []measure{{work: fmt.Sprintf("%s %s", strings.ToUpper(res.Scenario[:3]), formatSize(res.Size)),
			unit: "MB/s", value: res.MBPerSec, failed: failed}}
	case "sync":
		return []measure{{work: fmt.Sprintf("sync mix (PROPFIND %d + GET + PUT + MOVE), %s", res.Files, clients(res.Concurrency)),
			unit: "op/s", value: res.OpsPerSec, failed: failed}}
	case "desktop-first", "desktop-resync", "desktop-noop", "desktop-changed":
		return desktopMeasures(res, failed)
	case "mkcol-delete":
		return []measure{{work: "MKCOL + DELETE, " + clients(res.Concurrency), unit: "op/s", value: res.OpsPerSec, failed: failed}}
	case "delete":
		return []measure{{work: fmt.Sprintf("DELETE of a folder of %s files, p50", humanize.Comma(int64(res.Files))),
			unit: "ms", value: res.P50Ms, lowerBetter: true, failed: failed}}
	case "peak-rss":
		if res.Workload != "" {
			return []measure{{work: "peak RSS (VmHWM) in " + res.Workload, unit: "MB",
				value: float64(res.PeakRSSKB) / 1024, lowerBetter: true}}
		}
		peaks := []measure{{work: "peak RSS (VmHWM)", unit: "MB", value: float64(res.PeakRSSKB) / 1024, lowerBetter: true}}
		if res.PeakAnonRSSKB > 0 {
			peaks = append(peaks, measure{work: "peak anonymous RSS (heap, stacks)", unit: "MB",
				value: float64(res.PeakAnonRSSKB) / 1024, lowerBetter: true})
		}
		return peaks
	}
	return nil
}

// cell collects one server's figures for one work over the rounds.
type cell struct {
	values []float64
	failed bool
}

// table is the collected figures: works in the order first seen.
type table struct {
	works []string
	units map[string]measure
	cells map[[2]string]*cell // work, label
}

func newTable() *table {
	return &table{units: map[string]measure{}, cells: map[[2]string]*cell{}}
}

func (t *table) add(label string, m measure) {
	if _, ok := t.units[m.work]; !ok {
		t.works = append(t.works, m.work)
		t.units[m.work] = m
	}
	key := [2]string{m.work, label}
	c := t.cells[key]
	if c == nil {
		c = &cell{}
		t.cells[key] = c
	}
	if m.failed {
		c.failed = true
		return // a run with failed requests is not a figure
	}
	c.values = append(c.values, m.value)
}

// readResults adds every JSON result line of r to t.
func (t *table) readResults(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var res result
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			return fmt.Errorf("reading result %.80q: %w", line, err)
		}
		for _, m := range measures(&res) {
			t.add(res.Label, m)
		}
	}
	return sc.Err()
}

// median of values; NaN when there are none.
func median(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	s := slices.Clone(values)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}

func (t *table) median(work, label string) (float64, bool) {
	c := t.cells[[2]string{work, label}]
	if c == nil {
		return math.NaN(), false
	}
	return median(c.values), c.failed
}

// print writes the Markdown table: subject's ratio to each peer, targets
// and whether they are met.
func (t *table) print(w io.Writer, subject string, peers []string) {
	labels := append(slices.Clone(peers), subject)
	head := append([]string{"work"}, labels...)
	for _, p := range peers {
		head = append(head, subject+"/"+p)
	}
	head = append(head, "target", "met")
	fmt.Fprintln(w, "| "+strings.Join(head, " | ")+" |")
	fmt.Fprintln(w, "|"+strings.Repeat("---|", len(head)))
	anyFailed := false
	for _, work := range t.works {
		m := t.units[work]
		row := []string{fmt.Sprintf("%s (%s)", work, m.unit)}
		for _, l := range labels {
			v, failed := t.median(work, l)
			anyFailed = anyFailed || failed
			row = append(row, formatFigure(v, failed))
		}
		subjectValue, _ := t.median(work, subject)
		ratios := map[string]float64{}
		for _, p := range peers {
			pv, _ := t.median(work, p)
			ratios[p] = subjectValue / pv
			row = append(row, formatRatio(ratios[p]))
		}
		goal, met := describeTargets(targets[work], m.lowerBetter, subjectValue, ratios)
		row = append(row, goal, met)
		fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
	}
	if anyFailed {
		fmt.Fprintln(w, "\n\\* some requests failed in at least one round; the median is over the other rounds.")
	}
}

// describeTargets writes the goals of a work and whether the figures meet
// them: "✓", "✗", or "" when there is no goal or no figure.
func describeTargets(goals []target, lowerBetter bool, value float64, ratios map[string]float64) (string, string) {
	if len(goals) == 0 {
		return "", ""
	}
	cmp := "≥"
	if lowerBetter {
		cmp = "≤"
	}
	var parts []string
	met := "✓"
	for _, g := range goals {
		got := value
		if g.peer != "" {
			got = math.NaN() // the peer did not run
			if r, ok := ratios[g.peer]; ok {
				got = r
			}
			parts = append(parts, fmt.Sprintf("%s %g × %s", cmp, g.bound, g.peer))
		} else {
			parts = append(parts, fmt.Sprintf("%s %g", cmp, g.bound))
		}
		switch {
		case math.IsNaN(got) || math.IsInf(got, 0):
			if met == "✓" {
				met = ""
			}
		case lowerBetter && got > g.bound, !lowerBetter && got < g.bound:
			met = "✗"
		}
	}
	return strings.Join(parts, ", "), met
}

func formatFigure(v float64, failed bool) string {
	s := "—"
	switch {
	case math.IsNaN(v):
	case v >= 100:
		s = fmt.Sprintf("%.0f", v)
	case v >= 10:
		s = fmt.Sprintf("%.1f", v)
	default:
		s = fmt.Sprintf("%.2f", v)
	}
	if failed {
		s += "\\*"
	}
	return s
}

func formatRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return fmt.Sprintf("%.2f", v)
}

// runReport is "davload report [-subject S] [-peers P,Q] [file...]"; without
// files it reads standard input.
func runReport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("davload report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	subject := fs.String("subject", "davspaces", "label of the server the ratios are about")
	peers := fs.String("peers", "apache,nginx", "comma list of the labels to compare with, in column order")
	if err := fs.Parse(args); err != nil {
		return flagsStatus(err)
	}
	t := newTable()
	read := func(name string, r io.Reader) bool {
		if err := t.readResults(r); err != nil {
			fmt.Fprintf(stderr, "davload report: %s: %v\n", name, err)
			return false
		}
		return true
	}
	if fs.NArg() == 0 && !read("standard input", stdin) {
		return 1
	}
	for _, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "davload report:", err)
			return 1
		}
		ok := read(name, f)
		f.Close()
		if !ok {
			return 1
		}
	}
	t.print(stdout, *subject, splitList(*peers))
	return 0
}

// splitList splits a comma list and drops empty entries.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
