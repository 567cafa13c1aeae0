package caddymodule

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/observed"
)

// storeMetrics is what one open store's traffic and sweeps did since it
// was opened. It lives with the pooled store, not with a configuration:
// Caddy gives each configuration a registry of its own, and the counters
// must not restart at a reload. Every configuration using the store
// registers the same collectors (registerStoreMetrics).
type storeMetrics struct {
	bytes        *prometheus.CounterVec
	inFlight     *prometheus.GaugeVec
	latency      *prometheus.HistogramVec
	sweepRuns    *prometheus.CounterVec
	sweepRemoved *prometheus.CounterVec
	// massDeletes counts the mass-delete events opened (davhandler's
	// brake), for an alert.
	massDeletes prometheus.Counter
	// operations are the latency's observers of the measured
	// operations, looked up without the vector's lock on every store call.
	operations map[observed.Op]prometheus.Observer

	mu sync.Mutex
	// personal are the personal spaces the store has handed out since it
	// was opened: the usage gauge reads them when the store cannot list
	// its spaces. Bounded by the spaces, not the requests.
	personal map[string]bool
}

// The label values of the metrics: fixed sets, so that no client can make
// a series per request.
var (
	directions  = []string{"in", "out"}
	methodNames = []string{
		"GET", "HEAD", "PUT", "POST", "PATCH", "DELETE", "OPTIONS", "PROPFIND", "PROPPATCH",
		"MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "REPORT", "other",
	}
	uploadKinds  = []string{uploadPlain, uploadTUS, uploadNG, uploadV1, uploadBulk}
	sweepResults = []string{"ok", "failed"}
	sweepWhat    = []string{"upload_sessions", "chunked_uploads", "trash_and_versions", "content"}
)

// The kinds of upload requests.
const (
	uploadPlain = "put"
	uploadTUS   = "tus"
	uploadNG    = "chunking-ng"
	uploadV1    = "chunking-v1"
	uploadBulk  = "bulk"
)

// newStoreMetrics returns the metrics of the store named storeKey, every
// series of every fixed label set at zero, so that a scrape shows them
// before anything happened.
func newStoreMetrics(storeKey string) *storeMetrics {
	labels := prometheus.Labels{"store": storeKey}
	opts := func(subsystem, name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "davspaces", Subsystem: subsystem, Name: name, Help: help, ConstLabels: labels}
	}
	m := &storeMetrics{
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts(opts("http", "bytes_total",
			"Bytes of WebDAV, OCS and Graph request bodies received (direction=in) and response bodies sent (direction=out), by method.")),
			[]string{"direction", "method"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("", "uploads_in_flight",
			"Upload requests whose body is being received, by kind: put (a whole file), tus (PATCH), chunking-ng and chunking-v1 (a part).")),
			[]string{"kind"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "davspaces", Subsystem: "store", Name: "operation_duration_seconds",
			Help:        "Latency of the store operations requests wait for, by operation.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9), // 0.5 ms … 33 s
		}, []string{"operation"}),
		sweepRuns: prometheus.NewCounterVec(prometheus.CounterOpts(opts("sweep", "runs_total",
			"Passes of the store's background sweep, by result.")),
			[]string{"result"}),
		sweepRemoved: prometheus.NewCounterVec(prometheus.CounterOpts(opts("sweep", "removed_total",
			"What the background sweep removed: expired upload sessions and chunked uploads, trash items and versions past their retention, unreferenced content files or objects.")),
			[]string{"what"}),
		massDeletes: prometheus.NewCounter(prometheus.CounterOpts(opts("", "mass_delete_events_total",
			"Mass-delete events: bursts of one client deleting more of a space than mass_delete allows (docs/undo.md).")),
		),
		personal: map[string]bool{},
	}
	for _, d := range directions {
		for _, method := range methodNames {
			m.bytes.WithLabelValues(d, method)
		}
	}
	for _, k := range uploadKinds {
		m.inFlight.WithLabelValues(k)
	}
	m.operations = map[observed.Op]prometheus.Observer{}
	for op, label := range observed.Metrics() {
		m.operations[op] = m.latency.WithLabelValues(label)
	}
	for _, r := range sweepResults {
		m.sweepRuns.WithLabelValues(r)
	}
	for _, w := range sweepWhat {
		m.sweepRemoved.WithLabelValues(w)
	}
	return m
}

// collectors are the metrics to register in a configuration's registry.
func (m *storeMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.bytes, m.inFlight, m.latency, m.sweepRuns, m.sweepRemoved, m.massDeletes}
}

// observeSweep counts one pass of the store's sweep.
func (m *storeMetrics) observeSweep(r storage.SweepReport) {
	result := "ok"
	if r.Failed {
		result = "failed"
	}
	m.sweepRuns.WithLabelValues(result).Inc()
	for what, n := range map[string]int{
		"upload_sessions": r.UploadSessions, "chunked_uploads": r.ChunkedUploads,
		"trash_and_versions": r.Undo, "content": r.Content,
	} {
		m.sweepRemoved.WithLabelValues(what).Add(float64(n))
	}
}

// sawSpace remembers a personal space for the usage gauge.
func (m *storeMetrics) sawSpace(sp storage.Space) {
	if sp.Type != storage.SpacePersonal {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.personal[sp.ID] = true
}

// personalSpaces returns the personal spaces seen.
func (m *storeMetrics) personalSpaces() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.personal))
	for id := range m.personal {
		ids = append(ids, id)
	}
	return ids
}

// methodLabel is the method label of an HTTP method: itself when it is
// one of the fixed set, "other" otherwise.
func methodLabel(method string) string {
	for _, m := range methodNames {
		if m == method {
			return m
		}
	}
	return "other"
}
