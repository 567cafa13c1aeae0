// Command davload drives a running WebDAV server with bounded, concurrent
// request loops and prints one result line per scenario, then one JSON line
// per scenario. It speaks plain WebDAV, so the same run can measure other
// servers (Apache mod_dav, nginx dav, rclone serve webdav) for comparison.
//
//	davload -url http://127.0.0.1:9280/remote.php/webdav/ -user einstein -pass relativity
//	davload report results.jsonl...   # medians and ratios of many runs, see report.go
//	davload stub -listen 127.0.0.1:PORT  # the desktop clients' floor, see stub.go
//	davload desktop -client owncloudcmd -url … -work DIR  # a desktop client's syncs, see desktop.go
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
//	delete        seed a folder with -files 64-byte files (untimed), then
//	              time one DELETE of the whole folder; repeated for -count
//	              folders or until -duration has passed (at least once)
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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "report" {
		return runReport(args[1:], os.Stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "desktop" {
		return runDesktop(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "stub" {
		return runStub(args[1:], stderr)
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return flagsFailed(stderr, "davload", err)
	}
	ctx, stop := untilInterrupted()
	defer stop()

	r := newRunner(cfg, stderr)
	if err := r.preflight(ctx); err != nil {
		fmt.Fprintln(stderr, "davload:", err)
		return 2
	}
	r.logf("target %s (%s), concurrency %d, duration %s, files %d, large %s",
		redact(cfg.base), cfg.label, cfg.concurrency, cfg.duration, cfg.files, formatSize(cfg.large))
	results := r.runScenarios(ctx)
	if err := writeResults(stdout, results); err != nil {
		fmt.Fprintln(stderr, "davload:", err)
		return 2
	}
	return exitStatus(ctx, results, stderr)
}

// writeResults prints the table for people, then one JSON line per
// scenario for davload report.
func writeResults(w io.Writer, results []*result) error {
	printTable(w, results)
	for _, res := range results {
		line, err := json.Marshal(res)
		if err != nil {
			return err
		}
		fmt.Fprintln(w, string(line))
	}
	return nil
}

// exitStatus is 130 after an interrupt, 1 when a request failed, else 0.
func exitStatus(ctx context.Context, results []*result, stderr io.Writer) int {
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "davload: interrupted")
		return 130
	}
	for _, res := range results {
		if res.Errors > 0 {
			return 1
		}
	}
	return 0
}
