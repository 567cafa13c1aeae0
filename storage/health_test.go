package storage

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stubChecker counts its probes, each of which waits for release.
type stubChecker struct {
	probes  atomic.Int32
	release chan struct{}
	err     error
}

func (c *stubChecker) Health(ctx context.Context) error {
	c.probes.Add(1)
	select {
	case <-c.release:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestHealthProbeOneAtATime: callers that come while a probe runs share
// its answer; the answer is reused for HealthTTL and probed again after.
func TestHealthProbeOneAtATime(t *testing.T) {
	down := errors.New("database down")
	c := &stubChecker{release: make(chan struct{}), err: down}
	p := NewHealthProbe(c)
	var clock atomic.Int64
	p.now = func() time.Time { return time.Unix(0, clock.Load()) }
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() { errs <- p.Check(t.Context()) })
	}
	for c.probes.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(c.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, down) {
			t.Fatalf("Check = %v, want %v", err, down)
		}
	}
	if n := c.probes.Load(); n != 1 {
		t.Fatalf("%d probes for 20 concurrent checks, want 1", n)
	}
	clock.Add(int64(HealthTTL / 2))
	if err := p.Check(t.Context()); !errors.Is(err, down) || c.probes.Load() != 1 {
		t.Fatalf("Check within the TTL = %v after %d probes, want the cached answer", err, c.probes.Load())
	}
	clock.Add(int64(HealthTTL))
	c.err = nil
	if err := p.Check(t.Context()); err != nil || c.probes.Load() != 2 {
		t.Fatalf("Check after the TTL = %v after %d probes, want a new probe's answer", err, c.probes.Load())
	}
}

// TestHealthProbeBounded: a backend that does not answer is unhealthy
// after HealthTimeout, and a caller gives up with its own context.
func TestHealthProbeBounded(t *testing.T) {
	c := &stubChecker{release: make(chan struct{})} // never released
	p := NewHealthProbe(c)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := p.Check(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Check with a short context = %v, want its end", err)
	}
	if err := p.Check(t.Context()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Check of a stalled backend = %v, want the probe's timeout", err)
	}
	if n := c.probes.Load(); n != 1 {
		t.Fatalf("%d probes, want 1", n)
	}
}

// TestHealthProbeWithoutChecker: a store that cannot stall is healthy.
func TestHealthProbeWithoutChecker(t *testing.T) {
	if err := NewHealthProbe(struct{}{}).Check(t.Context()); err != nil {
		t.Fatalf("Check = %v", err)
	}
}
