package davhandler

import (
	"sync"
	"time"
)

// The limit on wrong link passwords (design: 10 per 5 minutes per link and
// client address), and how many (link, address) pairs are tracked at
// most, which bounds the limiter's memory to about a megabyte.
const (
	linkFailureLimit    = 10
	linkFailureWindow   = 5 * time.Minute
	maxLinkFailurePairs = 10_000
)

// failureLimiter counts failures per key within a sliding window: a key
// with limit failures in the last window is blocked until the oldest
// leaves it. It lives in memory, per node. When it tracks maxKeys keys a
// new one first drops the keys with no failure in the window, then the one
// whose last failure is oldest.
type failureLimiter struct {
	mu      sync.Mutex
	limit   int
	window  time.Duration
	maxKeys int
	// failures holds each key's failure times, oldest first, at most
	// limit of them.
	failures map[string][]time.Time
}

func newFailureLimiter(limit int, window time.Duration, maxKeys int) *failureLimiter {
	return &failureLimiter{limit: limit, window: window, maxKeys: maxKeys, failures: map[string][]time.Time{}}
}

// blocked returns how long key stays blocked at now; 0 when it is not.
func (l *failureLimiter) blocked(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	times := l.recent(key, now)
	if len(times) < l.limit {
		return 0
	}
	return times[0].Add(l.window).Sub(now)
}

// fail counts a failure of key at now.
func (l *failureLimiter) fail(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	times := l.recent(key, now)
	if times == nil && len(l.failures) >= l.maxKeys {
		l.evict(now)
	}
	if len(times) == l.limit {
		times = times[1:]
	}
	l.failures[key] = append(times, now)
}

// recent returns key's failures within the window at now, forgetting the
// older ones.
func (l *failureLimiter) recent(key string, now time.Time) []time.Time {
	times := l.failures[key]
	i := 0
	for i < len(times) && !times[i].After(now.Add(-l.window)) {
		i++
	}
	switch {
	case i == len(times):
		delete(l.failures, key)
		return nil
	case i > 0:
		times = append([]time.Time(nil), times[i:]...)
		l.failures[key] = times
	}
	return times
}

// evict makes room for one more key.
func (l *failureLimiter) evict(now time.Time) {
	oldestKey, oldest := "", now
	for key, times := range l.failures {
		last := times[len(times)-1]
		if !last.After(now.Add(-l.window)) {
			delete(l.failures, key)
			continue
		}
		if last.Before(oldest) || oldestKey == "" {
			oldestKey, oldest = key, last
		}
	}
	if len(l.failures) >= l.maxKeys {
		delete(l.failures, oldestKey)
	}
}

// size is how many keys are tracked.
func (l *failureLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.failures)
}
