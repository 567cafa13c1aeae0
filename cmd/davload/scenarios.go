package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"
)

// scenarioNames lists the scenarios in the order they run.
var scenarioNames = []string{"propfind", "put-small", "put-large", "get-large", "mkcol-delete", "sync", "delete"}

// seedFileSize is propfind's seeded files: seeding 10,000 of them is the
// "64 B × 10,000" small-PUT workload of the benchmark.
const seedFileSize = 64

// runScenarios runs the selected scenarios in order, until an interrupt.
func (r *runner) runScenarios(ctx context.Context) []*result {
	var results []*result
	for _, name := range r.cfg.scenarios {
		if ctx.Err() != nil {
			break
		}
		res := r.runScenario(ctx, name)
		r.logf("%s: done, %d errors", name, res.Errors)
		results = append(results, res)
	}
	return results
}

// runScenario runs one scenario in its own folder and returns its result.
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
	case "delete":
		res.Size, res.Files = seedFileSize, r.cfg.files
		r.deleteFolders(s, res)
	}
	res.Errors = int(s.errors.Load())
	res.roundFigures()
	return res
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
			if s.timed(lat, func() error { return r.put(s.ctx, child(dir, name(i), false), content) }) {
				stored.Add(1)
			}
		}
	})
	return stored.Load(), lat, time.Since(start)
}

func (r *runner) propfind(s *scenario, res *result) {
	dir, ok := r.scenarioFolder(s)
	if !ok {
		return
	}
	defer r.remove(s, dir)
	seeded := r.seedListing(s, dir, res)
	if !s.ok() {
		return
	}
	r.listRepeatedly(s, dir, int(seeded)+1, res)
}

// seedListing fills propfind's folder with -files small files and records
// the rate and median latency of their PUTs, the many-small-PUTs workload.
func (r *runner) seedListing(s *scenario, dir string, res *result) int64 {
	content := bytes.Repeat([]byte("davload\n"), seedFileSize/8)
	seeded, seedLat, took := r.seed(s, dir, r.cfg.files, content, func(i int64) string { return fmt.Sprintf("f%07d.txt", i) })
	res.SetupSecs = took.Seconds()
	if res.SetupSecs > 0 {
		res.SetupOpsPerSec = float64(seeded) / res.SetupSecs
	}
	res.SetupP50Ms = ms(summarize(seedLat).p50)
	r.logf("propfind: seeded %d files in %.2fs", seeded, res.SetupSecs)
	return seeded
}

// listRepeatedly lists dir, one request at a time. The first answer is
// counted as it streams, to check that it has all entries.
func (r *runner) listRepeatedly(s *scenario, dir string, entries int, res *result) {
	var lat []time.Duration
	b := r.newBudget(s)
	start := time.Now()
	for first := true; b.take(); first = false {
		var read func(io.Reader) error
		if first {
			read = checkEntries(entries, &res.Entries)
		}
		s.timed(&lat, func() error {
			n, err := r.do(s.ctx, propfindCall(dir, "1", read))
			if err == nil {
				res.Bytes += n
			}
			return err
		})
	}
	res.Secs = time.Since(start).Seconds()
	res.N = len(lat)
	if res.N > 0 {
		res.BytesPerResponse = res.Bytes / int64(res.N)
	}
	res.setLatency(lat)
}

// checkEntries reads a multistatus, stores its number of responses in
// *got and fails unless it is want.
func checkEntries(want int, got *int) func(io.Reader) error {
	return func(body io.Reader) error {
		n, err := countResponses(body)
		*got = n
		if err == nil && n != want {
			err = fmt.Errorf("%d responses, want %d", n, want)
		}
		return err
	}
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
	dir, ok := r.scenarioFolder(s)
	if !ok {
		return
	}
	defer r.remove(s, dir)
	content := patternBytes(r.cfg.size, 1)
	r.runTimed(s, res, func(w int, b *budget, lat *[]time.Duration) {
		for i := 0; b.take(); i++ {
			u := child(dir, fmt.Sprintf("w%03d-%07d.bin", w, i), false)
			s.timed(lat, func() error { return r.put(s.ctx, u, content) })
		}
	})
	res.Bytes = int64(res.N) * r.cfg.size
}

// largeFile is the file put-large leaves for get-large, and its folder.
type largeFile struct {
	folder, file string
}

// placeLarge creates the scenario's folder and PUTs -large generated bytes
// into it. It returns the time the upload took; when the upload fails, it
// removes the folder again.
func (r *runner) placeLarge(s *scenario) (*largeFile, time.Duration, bool) {
	dir, ok := r.scenarioFolder(s)
	if !ok {
		return nil, 0, false
	}
	lf := &largeFile{folder: dir, file: child(dir, "large.bin", false)}
	t := time.Now()
	err := r.send(s.ctx, largeTransfer(putCall(lf.file, newPatternReader(r.cfg.large, 42), r.cfg.large)))
	d := time.Since(t)
	if err != nil {
		s.fail(err)
		r.remove(s, dir)
		return nil, d, false
	}
	return lf, d, true
}

func (r *runner) putLarge(s *scenario, res *result) {
	lf, d, ok := r.placeLarge(s)
	if !ok {
		return
	}
	res.transferred(d, r.cfg.large)
	if slices.Contains(r.cfg.scenarios, "get-large") {
		r.large = lf // get-large removes it
		return
	}
	r.remove(s, lf.folder)
}

func (r *runner) getLarge(s *scenario, res *result) {
	lf, ok := r.largeToGet(s, res)
	if !ok {
		return
	}
	defer r.remove(s, lf.folder)
	t := time.Now()
	err := r.fetch(s.ctx, largeTransfer(getCall(lf.file)), r.cfg.large)
	d := time.Since(t)
	if err != nil {
		s.fail(err)
		return
	}
	res.transferred(d, r.cfg.large)
}

// largeToGet takes the file put-large left. When put-large did not run or
// failed, it uploads one, untimed: that is get-large's setup.
func (r *runner) largeToGet(s *scenario, res *result) (*largeFile, bool) {
	if lf := r.large; lf != nil {
		r.large = nil
		return lf, true
	}
	lf, d, ok := r.placeLarge(s)
	res.SetupSecs = d.Seconds()
	return lf, ok
}

func (r *runner) mkcolDelete(s *scenario, res *result) {
	dir, ok := r.scenarioFolder(s)
	if !ok {
		return
	}
	defer r.remove(s, dir)
	r.runTimed(s, res, func(w int, b *budget, lat *[]time.Duration) {
		for i := 0; b.take(); i++ {
			u := child(dir, fmt.Sprintf("w%03d-%07d", w, i), true)
			if s.timed(lat, func() error { return r.send(s.ctx, mkcolCall(u)) }) {
				s.timed(lat, func() error { return r.send(s.ctx, deleteCall(u)) })
			}
		}
	})
}

// deleteFolders times the DELETE of a whole folder: each repetition seeds
// a folder with -files small files (untimed, with -concurrency workers)
// and sends one DELETE of it. It repeats while the budget lasts (-count
// deletes or -duration, at least one), so that the seeding, which takes
// far longer than the DELETE, is not what the budget bounds alone.
func (r *runner) deleteFolders(s *scenario, res *result) {
	dir, ok := r.scenarioFolder(s)
	if !ok {
		return
	}
	defer r.remove(s, dir)
	content := bytes.Repeat([]byte("davload\n"), seedFileSize/8)
	var lat []time.Duration
	var seeding time.Duration
	b := r.newBudget(s)
	start := time.Now()
	for i := 0; b.take(); i++ {
		folder := child(dir, fmt.Sprintf("tree%03d", i), true)
		if !r.mkcol(s, folder) {
			break
		}
		seeded, _, took := r.seed(s, folder, r.cfg.files, content, func(i int64) string { return fmt.Sprintf("f%07d.txt", i) })
		seeding += took
		if seeded < int64(r.cfg.files) || !s.ok() {
			break // a partial folder would time a smaller DELETE
		}
		s.timed(&lat, func() error { return r.send(s.ctx, deleteCall(folder)) })
	}
	res.finish(start, lat)
	res.OpsPerSec = 0 // one DELETE at a time: its latency is the figure
	res.SetupSecs = seeding.Seconds()
	r.logf("delete: %d folders of %d files, seeded in %.2fs", res.N, r.cfg.files, res.SetupSecs)
}
