package caddymodule

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/boltstore"
	"github.com/davspaces/davspaces/storage/observed"
)

// metricValue returns the value of the series of family name whose labels
// include want, and whether there is one. A histogram's value is its
// sample count.
func metricValue(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatalf("gathering: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m, want) {
				return value(m), true
			}
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			found++
		}
	}
	return found == len(want)
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return 0
}

const metricsLockBody = `<?xml version="1.0" encoding="utf-8"?>
<d:lockinfo xmlns:d="DAV:"><d:lockscope><d:exclusive/></d:lockscope><d:locktype><d:write/></d:locktype></d:lockinfo>`

// TestStoreMetrics: after a PUT, a GET and a LOCK through the handler, the
// configuration's registry shows the bytes, the commit's latency, the
// space's use and the lock.
func TestStoreMetrics(t *testing.T) {
	ctx := newContext(t)
	root := t.TempDir()
	d := &DAVSpaces{Root: root, Spaces: []ProjectSpace{{Name: "physics", Managers: []string{"einstein"}}}}
	if err := provisionIn(t, ctx, d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanup(t, d) })
	reg := ctx.GetMetricsRegistry()
	personal, err := pooledOf(t, root).PersonalSpace(t.Context(), storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	personalID := personal.ID

	steps := []struct {
		req  request
		want int
	}{
		{request{method: http.MethodPut, target: "/webdav/hello.txt", body: "hello", user: "einstein"}, http.StatusCreated},
		{request{method: http.MethodGet, target: "/webdav/hello.txt", user: "einstein"}, http.StatusOK},
		{request{method: "LOCK", target: "/webdav/hello.txt", body: metricsLockBody, user: "einstein"}, http.StatusOK},
		{request{method: http.MethodPost, target: "/remote.php/dav/spaces/" + personalID + "/", user: "einstein", header: map[string]string{
			"Tus-Resumable": "1.0.0", "Upload-Length": "10", "Upload-Metadata": "filename dHVzLnR4dA=="}}, http.StatusCreated},
		{request{method: "MKCOL", target: "/remote.php/dav/uploads/einstein/transfer-1", user: "einstein"}, http.StatusCreated},
	}
	for _, s := range steps {
		if rec := serve(t, d, s.req); rec.Code != s.want {
			t.Fatalf("%s %s: %d %s", s.req.method, s.req.target, rec.Code, rec.Body)
		}
	}
	projectID := d.Spaces[0].space().ID

	for _, c := range []struct {
		name   string
		labels map[string]string
		check  func(float64) bool
		want   string
	}{
		{"davspaces_http_bytes_total", map[string]string{"direction": "in", "method": "PUT"}, eq(5), "5"},
		{"davspaces_http_bytes_total", map[string]string{"direction": "out", "method": "GET"}, eq(5), "5"},
		{"davspaces_http_bytes_total", map[string]string{"direction": "in", "method": "LOCK"}, eq(float64(len(metricsLockBody))), "the LOCK body"},
		{"davspaces_http_bytes_total", map[string]string{"direction": "out", "method": "LOCK"}, gt(0), "> 0"},
		{"davspaces_uploads_in_flight", map[string]string{"kind": "put"}, eq(0), "0 once the PUT is done"},
		{"davspaces_store_operation_duration_seconds", map[string]string{"operation": "commit"}, eq(1), "1 commit"},
		{"davspaces_store_operation_duration_seconds", map[string]string{"operation": "open"}, eq(1), "1 open"},
		{"davspaces_store_operation_duration_seconds", map[string]string{"operation": "create_lock"}, eq(1), "1 lock"},
		{"davspaces_space_used_bytes", map[string]string{"space": personal.ID, "type": "personal"}, eq(5), "5"},
		{"davspaces_space_used_bytes", map[string]string{"space": projectID, "type": "project"}, eq(0), "0"},
		{"davspaces_locks_held", map[string]string{"store": root}, eq(1), "1"},
		{"davspaces_sweep_runs_total", map[string]string{"result": "failed"}, eq(0), "0"},
		{"davspaces_upload_sessions_open", map[string]string{"kind": "tus"}, eq(1), "1"},
		{"davspaces_upload_sessions_open", map[string]string{"kind": "chunking-ng"}, eq(1), "1"},
		{"davspaces_upload_sessions_open", map[string]string{"kind": "chunking-v1"}, eq(0), "0"},
		{"davspaces_sweep_removed_total", map[string]string{"what": "upload_sessions"}, eq(0), "0"},
		{"davspaces_mass_delete_events_total", map[string]string{"store": root}, eq(0), "0: nobody deleted much"},
	} {
		got, ok := metricValue(t, reg, c.name, c.labels)
		if !ok || !c.check(got) {
			t.Errorf("%s%v = %v (present: %v), want %s", c.name, c.labels, got, ok, c.want)
		}
	}
}

func eq(want float64) func(float64) bool { return func(v float64) bool { return v == want } }
func gt(min float64) func(float64) bool  { return func(v float64) bool { return v > min } }

// TestStoreMetricsOutliveAReload: the counters belong to the store, so a
// new configuration's registry goes on from what the old one counted.
func TestStoreMetricsOutliveAReload(t *testing.T) {
	root := t.TempDir()
	oldCtx := newContext(t)
	oldCfg := &DAVSpaces{Root: root}
	if err := provisionIn(t, oldCtx, oldCfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanup(t, oldCfg) })
	put := request{method: http.MethodPut, target: "/webdav/a.txt", body: "abc", user: "einstein"}
	if rec := serve(t, oldCfg, put); rec.Code != http.StatusCreated {
		t.Fatalf("PUT: %d", rec.Code)
	}
	newCtx := newContext(t)
	newCfg := &DAVSpaces{Root: root}
	if err := provisionIn(t, newCtx, newCfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanup(t, newCfg) })
	cleanup(t, oldCfg)
	if rec := serve(t, newCfg, put); rec.Code != http.StatusNoContent {
		t.Fatalf("PUT after the reload: %d", rec.Code)
	}
	in := map[string]string{"direction": "in", "method": "PUT"}
	if got, _ := metricValue(t, newCtx.GetMetricsRegistry(), "davspaces_http_bytes_total", in); got != 6 {
		t.Errorf("bytes in after the reload = %v, want 6 (3 before it, 3 after)", got)
	}
}

// TestSweepMetrics: what the store's sweep reports is counted.
func TestSweepMetrics(t *testing.T) {
	ctx := newContext(t)
	root := t.TempDir()
	d := &DAVSpaces{Root: root}
	if err := provisionIn(t, ctx, d); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanup(t, d) })
	reg := ctx.GetMetricsRegistry()
	runs := func() float64 {
		v, _ := metricValue(t, reg, "davspaces_sweep_runs_total", map[string]string{"result": "ok"})
		return v
	}
	// The content sweep at opening reports once, before or after this
	// test's reports: it removes no uploads, trash or versions.
	before := runs()
	store := pooledOf(t, root).Store.(*boltstore.Store)
	store.Report(storage.SweepReport{UploadSessions: 2, ChunkedUploads: 1, Undo: 3, Content: 4})
	store.Report(storage.SweepReport{Failed: true})
	if got := runs(); got < before+1 || got > 2 {
		t.Errorf("ok runs = %v, want %v or the opening sweep's too", got, before+1)
	}
	if got, _ := metricValue(t, reg, "davspaces_sweep_runs_total", map[string]string{"result": "failed"}); got != 1 {
		t.Errorf("failed runs = %v, want 1", got)
	}
	for what, want := range map[string]float64{"upload_sessions": 2, "chunked_uploads": 1, "trash_and_versions": 3} {
		if got, _ := metricValue(t, reg, "davspaces_sweep_removed_total", map[string]string{"what": what}); got != want {
			t.Errorf("removed %s = %v, want %v", what, got, want)
		}
	}
}

// TestUploadKind: each kind of upload request is told apart; requests
// without a body are no upload.
func TestUploadKind(t *testing.T) {
	for _, c := range []struct {
		method, target string
		header         map[string]string
		want           string
	}{
		{http.MethodPut, "/remote.php/webdav/f.txt", nil, uploadPlain},
		{http.MethodPut, "/remote.php/dav/uploads/einstein/t1/00001", nil, uploadNG},
		{http.MethodPut, "/remote.php/webdav/f.txt-chunking-42-2-0", map[string]string{"OC-Chunked": "1"}, uploadV1},
		{http.MethodPatch, "/remote.php/dav/uploads/abc", nil, uploadTUS},
		{http.MethodPost, "/remote.php/dav/spaces/x", map[string]string{"Tus-Resumable": "1.0.0"}, uploadTUS},
		{http.MethodPost, "/remote.php/dav/bulk", nil, uploadBulk},
		{http.MethodPost, "/remote.php/dav/spaces/x", nil, ""},
		{"PROPFIND", "/remote.php/webdav/", nil, ""},
	} {
		r, _ := http.NewRequest(c.method, c.target, strings.NewReader("x"))
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		if got, ok := uploadKind(r); got != c.want || ok != (c.want != "") {
			t.Errorf("%s %s: %q %v, want %q", c.method, c.target, got, ok, c.want)
		}
	}
}

// TestTimedStoreKeepsTheFastPath: the store as served keeps the path
// walk davhandler looks for, over a store and over an observed store.
func TestTimedStoreKeepsTheFastPath(t *testing.T) {
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "s"), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, b := range map[string]storage.Backend{"store": s, "traced store": observed.Wrap(s, observed.Tracing{})} {
		timed := observe(b, newStoreMetrics("k"))
		if _, ok := timed.(observed.Walker); !ok {
			t.Errorf("the timed %s lost Walk", name)
		}
		if _, ok := timed.(storage.HealthChecker); !ok {
			t.Errorf("the timed %s lost Health", name)
		}
	}
}

// TestMetricsOfTwoStoresInOneConfiguration: handlers on two stores, and
// two handlers on one, register in one registry; each store's series
// carry its store label.
func TestMetricsOfTwoStoresInOneConfiguration(t *testing.T) {
	ctx := newContext(t)
	rootA, rootB := t.TempDir(), t.TempDir()
	handlers := []*DAVSpaces{
		{Root: rootA, Spaces: []ProjectSpace{{Name: "a", Managers: []string{"einstein"}}}},
		{Root: rootA, Spaces: []ProjectSpace{{Name: "b", Managers: []string{"einstein"}}}},
		{Root: rootB},
	}
	for _, d := range handlers {
		if err := provisionIn(t, ctx, d); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cleanup(t, d) })
	}
	put := request{method: http.MethodPut, target: "/webdav/f.txt", body: "abcd", user: "einstein"}
	if rec := serve(t, handlers[2], put); rec.Code != http.StatusCreated {
		t.Fatalf("PUT: %d", rec.Code)
	}
	reg := ctx.GetMetricsRegistry()
	for root, want := range map[string]float64{rootA: 0, rootB: 4} {
		if got, ok := metricValue(t, reg, "davspaces_http_bytes_total", map[string]string{"store": root, "direction": "in", "method": "PUT"}); !ok || got != want {
			t.Errorf("bytes in of store %s = %v (present: %v), want %v", root, got, ok, want)
		}
	}
	for _, ps := range []ProjectSpace{handlers[0].Spaces[0], handlers[1].Spaces[0]} {
		if _, ok := metricValue(t, reg, "davspaces_space_used_bytes", map[string]string{"store": rootA, "space": ps.space().ID}); !ok {
			t.Errorf("project space %s of the shared store not measured", ps.Name)
		}
	}
}

// TestTimingCostsNoAllocation: timing a store call allocates nothing
// beyond what the store's own call does.
func TestTimingCostsNoAllocation(t *testing.T) {
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "s"), boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp, err := s.PersonalSpace(t.Context(), storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	timed := observe(s, newStoreMetrics("k"))
	ctx := t.Context()
	// The fewest of a few rounds: the store's own goroutines (its sweeps)
	// may allocate during any one of them on a busy machine.
	fewest := func(f func()) float64 {
		least := testing.AllocsPerRun(100, f)
		for range 4 {
			least = min(least, testing.AllocsPerRun(100, f))
		}
		return least
	}
	raw := fewest(func() { s.Node(ctx, sp.ID, sp.ID) })
	withTimer := fewest(func() { timed.Node(ctx, sp.ID, sp.ID) })
	if withTimer > raw {
		t.Errorf("a timed Node allocates %v times, the store's %v", withTimer, raw)
	}
}
