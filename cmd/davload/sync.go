package main

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

const (
	// syncFiles is the size of the folder the sync scenario lists: a
	// folder of a synced tree, not a huge one (propfind measures those).
	syncFiles = 200
	// syncFileSize is the size of the files it seeds and uploads.
	syncFileSize = 4 << 10
)

// syncMix plays what sync clients do once they are connected: each lists
// the shared folder (PROPFIND Depth 1), downloads a file that changed
// (GET), uploads a new one under a temporary name (PUT) and renames it
// (MOVE). Every request is one operation. Uploads go to a subfolder per
// worker, so the listed folder does not change while it is listed: nginx
// answers 500 to a PROPFIND that races with a MOVE out of the folder.
func (r *runner) syncMix(s *scenario, res *result) {
	dir, ok := r.scenarioFolder(s)
	if !ok {
		return
	}
	defer r.remove(s, dir)
	uploads := make([]string, r.cfg.concurrency)
	for w := range uploads {
		uploads[w] = child(dir, fmt.Sprintf("w%03d", w), true)
		if !r.mkcol(s, uploads[w]) {
			return
		}
	}
	content := patternBytes(syncFileSize, 3)
	seeded, _, took := r.seed(s, dir, syncFiles, content, seedName)
	res.SetupSecs = took.Seconds()
	if seeded < syncFiles || !s.ok() {
		return
	}
	r.runTimed(s, res, func(w int, b *budget, lat *[]time.Duration) {
		for i := 0; ; i++ {
			for _, op := range syncCycle(dir, uploads[w], w, i, content) {
				if !b.take() {
					return
				}
				s.timed(lat, func() error { return op(r, s.ctx) })
			}
		}
	})
}

// seedName names the sync scenario's seeded files.
func seedName(i int64) string { return fmt.Sprintf("s%05d.bin", i) }

// syncOp is one request of a sync cycle.
type syncOp func(r *runner, ctx context.Context) error

// syncCycle returns worker w's i-th round of requests: list dir, GET one
// seeded file (each worker walks the folder from its own place), PUT a new
// file into the worker's folder under a temporary name and MOVE it to its
// final name there.
func syncCycle(dir, upload string, w, i int, content []byte) []syncOp {
	name := fmt.Sprintf("%07d.bin", i)
	get := child(dir, seedName(int64((w*37+i)%syncFiles)), false)
	src, dst := child(upload, name+".part", false), child(upload, name, false)
	return []syncOp{
		func(r *runner, ctx context.Context) error { return r.send(ctx, propfindCall(dir, "1", nil)) },
		func(r *runner, ctx context.Context) error { return r.fetch(ctx, getCall(get), syncFileSize) },
		func(r *runner, ctx context.Context) error { return r.put(ctx, src, content) },
		func(r *runner, ctx context.Context) error {
			return r.send(ctx, call{method: "MOVE", url: src,
				header: map[string]string{"Destination": dst, "Overwrite": "F"},
				want:   []int{http.StatusCreated, http.StatusNoContent}})
		},
	}
}
