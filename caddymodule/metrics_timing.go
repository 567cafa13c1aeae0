package caddymodule

import (
	"context"
	"time"

	"github.com/davspaces/davspaces/storage"
	"github.com/davspaces/davspaces/storage/observed"
)

// observe returns store observed as the module serves it: under Caddy's
// tracing directive every store call a request makes is a span of its
// own (without it the tracing hook adds none), and the latency of the
// calls requests wait for goes to the store's metrics.
func observe(store storage.Backend, m *storeMetrics) storage.Backend {
	return observed.Wrap(store, observed.Hooks{observed.Tracing{}, m})
}

// Begin is the latency hook's: it starts nothing, the call's start is
// in c. Latency is measured at the store rather than at the davhandler
// boundary: the boundary would measure WebDAV methods, which Caddy's own
// http_request_duration_seconds does already, while a slow store shows
// here as the operation that is slow.
func (m *storeMetrics) Begin(ctx context.Context, _ observed.Call) context.Context { return ctx }

// End records the latency of a measured operation (observed.Metrics),
// and remembers the personal spaces handed out for the usage gauge.
func (m *storeMetrics) End(_ context.Context, c observed.Call, err error) {
	if o, ok := m.operations[c.Op]; ok {
		o.Observe(time.Since(c.Start).Seconds())
	}
	if c.Op == observed.OpPersonalSpace && err == nil {
		m.sawSpace(storage.Space{ID: c.SpaceID, Type: storage.SpacePersonal})
	}
}
