package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/davspaces/davspaces/davhandler"
	"github.com/davspaces/davspaces/storage"
)

// spaceScrapeTimeout bounds what one scrape spends reading the spaces'
// usage and locks: a store that is down must not hold the scrape.
const spaceScrapeTimeout = 10 * time.Second

// spaceCollector reads, at each scrape, what every served space of one
// store uses, the locks held in them, and the store's unfinished uploads. A series per space, not per user
// or path: the personal spaces and the configured project spaces bound
// it. Each read is a short transaction of its own (one bolt read, one
// pooled PostgreSQL query), so a scrape holds no lock or connection long.
type spaceCollector struct {
	store   Store
	metrics *storeMetrics
	used    *prometheus.Desc
	locks   *prometheus.Desc
	uploads *prometheus.Desc

	mu       sync.Mutex
	projects map[string]bool // the project spaces the configuration serves
}

func newSpaceCollector(store Store, m *storeMetrics, storeKey string) *spaceCollector {
	labels := prometheus.Labels{"store": storeKey}
	return &spaceCollector{
		store:   store,
		metrics: m,
		used: prometheus.NewDesc("davspaces_space_used_bytes",
			"What a space holds against its quota: its files, dead properties, trash and versions.",
			[]string{"space", "type"}, labels),
		locks: prometheus.NewDesc("davspaces_locks_held",
			"WebDAV locks live in the served spaces.", nil, labels),
		uploads: prometheus.NewDesc("davspaces_upload_sessions_open",
			"Unfinished uploads the store keeps, by kind: tus, chunking-ng, chunking-v1; expired ones until the sweep ends them.",
			[]string{"kind"}, labels),
		projects: map[string]bool{},
	}
}

func (c *spaceCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.used
	ch <- c.locks
	ch <- c.uploads
}

// addProjects adds project spaces another handler of the configuration
// serves.
func (c *spaceCollector) addProjects(ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		c.projects[id] = true
	}
}

func (c *spaceCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), spaceScrapeTimeout)
	defer cancel()
	var locks int
	for _, sp := range c.spaces(ctx) {
		u, err := c.store.Usage(ctx, sp.ID)
		if err != nil {
			continue // gone meanwhile, or the store is unavailable
		}
		ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, float64(u.Used()), sp.ID, string(sp.Type))
		if held, err := c.store.SpaceLocks(ctx, sp.ID); err == nil {
			locks += len(held)
		}
	}
	ch <- prometheus.MustNewConstMetric(c.locks, prometheus.GaugeValue, float64(locks))
	c.collectUploads(ctx, ch)
}

// collectUploads counts the store's unfinished uploads by kind, when it
// can count them.
func (c *spaceCollector) collectUploads(ctx context.Context, ch chan<- prometheus.Metric) {
	counter, ok := c.store.(storage.OpenUploadCounter)
	if !ok {
		return
	}
	open, err := counter.CountOpenUploads(ctx, davhandler.ChunkedUploadKind)
	if err != nil {
		return // the store is unavailable: no figure rather than a wrong one
	}
	for kind, n := range map[string]int{
		uploadTUS: open.Sessions, uploadNG: open.Chunked[uploadNG], uploadV1: open.Chunked[uploadV1],
	} {
		ch <- prometheus.MustNewConstMetric(c.uploads, prometheus.GaugeValue, float64(n), kind)
	}
}

// spaces returns the served spaces: from the store's list (every
// personal space, the configured project spaces), or, while the store
// cannot answer, the configured project spaces and the personal spaces
// handed out since the store was opened.
func (c *spaceCollector) spaces(ctx context.Context) []storage.Space {
	c.mu.Lock()
	projects := make([]string, 0, len(c.projects))
	for id := range c.projects {
		projects = append(projects, id)
	}
	c.mu.Unlock()
	if all, err := c.store.Spaces(ctx); err == nil {
		// Every configuration's project spaces on this store, by the rule
		// the front-ends serve them by.
		policy := storage.NewSpacePolicy(projects)
		served := all[:0]
		for _, sp := range all {
			if policy.Serves(sp) {
				served = append(served, sp)
			}
		}
		return served
	}
	var spaces []storage.Space
	for _, id := range projects {
		spaces = append(spaces, storage.Space{ID: id, Type: storage.SpaceProject})
	}
	for _, id := range c.metrics.personalSpaces() {
		spaces = append(spaces, storage.Space{ID: id, Type: storage.SpacePersonal})
	}
	sort.Slice(spaces, func(i, j int) bool { return spaces[i].ID < spaces[j].ID })
	return spaces
}

// registerStoreMetrics registers the metrics of store in registry, with
// the project spaces a handler serves: the store's collectors, shared by
// every configuration, once per registry; a space collector per registry,
// to which each handler on the store adds its project spaces.
func registerStoreMetrics(registry prometheus.Registerer, store *pooledStore, storeKey string, projects []string) error {
	for _, c := range store.metrics.collectors() {
		if err := registerOnce(registry, c); err != nil {
			return err
		}
	}
	sc := newSpaceCollector(store.Store, store.metrics, storeKey)
	sc.addProjects(projects)
	err := registry.Register(sc)
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		existing, ok := are.ExistingCollector.(*spaceCollector)
		if !ok {
			return fmt.Errorf("metrics of davspaces store %s registered by another collector", storeKey)
		}
		existing.addProjects(projects)
		return nil
	}
	return err
}

// registerOnce registers c unless registry has it already.
func registerOnce(registry prometheus.Registerer, c prometheus.Collector) error {
	err := registry.Register(c)
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) && are.ExistingCollector == c {
		return nil
	}
	return err
}
