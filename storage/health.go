package storage

import (
	"context"
	"sync"
	"time"
)

// HealthChecker is a store whose backends can stall or go down (a
// database, a bucket): Health asks them a cheap question and fails, within
// ctx, when they do not answer. A store without it (an embedded one) is as
// healthy as its process.
type HealthChecker interface {
	Health(ctx context.Context) error
}

// Bounds of a HealthProbe.
const (
	// HealthTimeout bounds one probe: a backend slower than that is
	// stalled, as far as a load balancer is concerned.
	HealthTimeout = 2 * time.Second
	// HealthTTL is how long a probe's answer is reused, so that health
	// requests, however many, cost the backends one probe a second.
	HealthTTL = time.Second
)

// HealthProbe answers whether a store's backends are healthy from a probe
// it runs at most once per HealthTTL, never more than one at a time, each
// bounded by HealthTimeout whatever its caller's context: callers that come
// while a probe runs wait for its answer.
type HealthProbe struct {
	check func(context.Context) error
	now   func() time.Time

	mu      sync.Mutex
	err     error
	at      time.Time     // when err was found; zero before the first probe
	running chan struct{} // closed when the probe in flight ends; nil if none
}

// NewHealthProbe probes store when it is a HealthChecker; otherwise every
// answer is healthy.
func NewHealthProbe(store any) *HealthProbe {
	check := func(context.Context) error { return nil }
	if hc, ok := store.(HealthChecker); ok {
		check = hc.Health
	}
	return &HealthProbe{check: check, now: time.Now}
}

// Check returns the latest probe's answer, probing first when it is older
// than HealthTTL. ctx bounds only the wait of this caller.
func (p *HealthProbe) Check(ctx context.Context) error {
	p.mu.Lock()
	if !p.at.IsZero() && p.now().Sub(p.at) < HealthTTL {
		defer p.mu.Unlock()
		return p.err
	}
	if p.running == nil {
		p.running = make(chan struct{})
		go p.probe(p.running)
	}
	running := p.running
	p.mu.Unlock()
	select {
	case <-running:
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// probe runs one check and records its answer.
func (p *HealthProbe) probe(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), HealthTimeout)
	err := p.check(ctx)
	cancel()
	p.mu.Lock()
	p.err, p.at, p.running = err, p.now(), nil
	p.mu.Unlock()
	close(done)
}
