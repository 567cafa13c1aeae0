package boltstore

import (
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage/storetest"
)

// TestConformance runs the store contract with small files kept inline, as
// by default, and with every file in a content file.
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name        string
		inlineLimit int64
	}{
		{"inline", 0},
		{"content files", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) storetest.Store {
				clk := &offsetClock{}
				// The conformance tests are about behaviour, not durability.
				s, err := Open(t.TempDir(), Options{NoSync: true, Now: clk.Now, InlineLimit: tc.inlineLimit})
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				t.Cleanup(func() { s.Close() })
				return clockedStore{s, clk}
			})
		})
	}
}

// clockedStore is a Store whose clock the conformance tests can move on
// (storetest.Clock), so that lock expiry needs no waiting.
type clockedStore struct {
	*Store
	clk *offsetClock
}

func (s clockedStore) Advance(d time.Duration) { s.clk.Advance(d) }

// offsetClock is the real time plus an offset the tests can grow: it keeps
// moving on its own, as the tests that compare times expect.
type offsetClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *offsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *offsetClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}
