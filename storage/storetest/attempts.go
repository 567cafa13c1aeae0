package storetest

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// attemptTests are the conformance tests of storage.AttemptBudgets. Their
// times are whole microseconds, the precision every store keeps.
var attemptTests = []conformanceTest{
	{"AttemptsTakenUpToTheLimit", testAttemptsUpToLimit},
	{"AttemptsWindowSlides", testAttemptsWindowSlides},
	{"AttemptReturnedIsFree", testAttemptReturned},
	{"AttemptsConcurrentNeverExceedTheLimit", testAttemptsConcurrent},
	{"AttemptsRefuseInvalidKeysAndBudgets", testAttemptsInvalid},
}

var attemptBudget = storage.AttemptBudget{Limit: 3, Window: time.Minute}

// attemptStart is a time of the attempts: the store keeps whole
// microseconds.
func attemptStart() time.Time { return time.Now().Truncate(time.Microsecond) }

// take takes an attempt of key at now and fails the test on an error.
func (f *fixture) take(t *testing.T, key string, b storage.AttemptBudget, now time.Time) (bool, time.Duration) {
	t.Helper()
	taken, wait, err := f.s.TakeAttempt(f.ctx, key, b, now)
	if err != nil {
		t.Fatalf("TakeAttempt %q: %v", key, err)
	}
	if taken != (wait == 0) {
		t.Fatalf("TakeAttempt %q: taken %v with wait %s", key, taken, wait)
	}
	return taken, wait
}

func (f *fixture) attemptWait(t *testing.T, key string, b storage.AttemptBudget, now time.Time) time.Duration {
	t.Helper()
	wait, err := f.s.AttemptWait(f.ctx, key, b, now)
	if err != nil {
		t.Fatalf("AttemptWait %q: %v", key, err)
	}
	return wait
}

func testAttemptsUpToLimit(t *testing.T, f *fixture) {
	now := attemptStart()
	if w := f.attemptWait(t, "link a 192.0.2.1", attemptBudget, now); w != 0 {
		t.Fatalf("a fresh key waits %s", w)
	}
	for i := range attemptBudget.Limit {
		if taken, _ := f.take(t, "link a 192.0.2.1", attemptBudget, now.Add(time.Duration(i)*time.Second)); !taken {
			t.Fatalf("attempt %d of %d refused", i+1, attemptBudget.Limit)
		}
	}
	later := now.Add(10 * time.Second)
	taken, wait := f.take(t, "link a 192.0.2.1", attemptBudget, later)
	// The first attempt, at now, leaves the window a minute after it.
	if want := now.Add(time.Minute).Sub(later); taken || wait != want {
		t.Fatalf("attempt past the limit: taken %v, wait %s, want refused for %s", taken, wait, want)
	}
	if w := f.attemptWait(t, "link a 192.0.2.1", attemptBudget, later); w != wait {
		t.Fatalf("AttemptWait %s, want %s", w, wait)
	}
	for _, other := range []string{"link a 192.0.2.2", "link b 192.0.2.1"} {
		if taken, _ := f.take(t, other, attemptBudget, later); !taken {
			t.Fatalf("key %q refused: a budget is per key", other)
		}
	}
}

func testAttemptsWindowSlides(t *testing.T, f *fixture) {
	const key = "link a 2001:db8::/64"
	now := attemptStart()
	for _, at := range []time.Duration{0, 20 * time.Second, 40 * time.Second} {
		f.take(t, key, attemptBudget, now.Add(at))
	}
	// At 61 s the attempt at 0 has left the window: one is free, then
	// none until the one at 20 s leaves.
	at := now.Add(61 * time.Second)
	if taken, _ := f.take(t, key, attemptBudget, at); !taken {
		t.Fatal("refused once the oldest attempt left the window")
	}
	if taken, wait := f.take(t, key, attemptBudget, at); taken || wait != 19*time.Second {
		t.Fatalf("taken %v, wait %s; want refused for 19s", taken, wait)
	}
	if w := f.attemptWait(t, key, attemptBudget, now.Add(3*time.Minute)); w != 0 {
		t.Fatalf("after every attempt left the window: wait %s", w)
	}
	for i := range attemptBudget.Limit {
		if taken, _ := f.take(t, key, attemptBudget, now.Add(3*time.Minute+time.Duration(i))); !taken {
			t.Fatalf("attempt %d of a new window refused", i+1)
		}
	}
}

func testAttemptReturned(t *testing.T, f *fixture) {
	const key = "user einstein app passwords"
	now := attemptStart()
	times := make([]time.Time, attemptBudget.Limit)
	for i := range times {
		times[i] = now.Add(time.Duration(i) * time.Millisecond)
		f.take(t, key, attemptBudget, times[i])
	}
	if err := f.s.ReturnAttempt(f.ctx, key, times[1]); err != nil {
		t.Fatalf("ReturnAttempt: %v", err)
	}
	// Giving back what the store does not hold changes nothing.
	for _, k := range []string{key, "never taken"} {
		if err := f.s.ReturnAttempt(f.ctx, k, now.Add(time.Hour)); err != nil {
			t.Fatalf("ReturnAttempt of nothing: %v", err)
		}
	}
	at := now.Add(time.Second)
	if taken, _ := f.take(t, key, attemptBudget, at); !taken {
		t.Fatal("the attempt given back is not free")
	}
	if taken, wait := f.take(t, key, attemptBudget, at); taken || wait != time.Minute-time.Second {
		t.Fatalf("taken %v, wait %s; want refused until the first leaves (59s)", taken, wait)
	}
}

func testAttemptsConcurrent(t *testing.T, f *fixture) {
	const (
		key     = "link c 198.51.100.7"
		callers = 60
	)
	b := storage.AttemptBudget{Limit: 10, Window: 5 * time.Minute}
	now := attemptStart()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		taken int
	)
	for i := range callers {
		wg.Go(func() {
			ok, _, err := f.s.TakeAttempt(f.ctx, key, b, now.Add(time.Duration(i)*time.Microsecond))
			if err != nil {
				t.Errorf("TakeAttempt: %v", err)
			}
			if ok {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if taken != b.Limit {
		t.Fatalf("%d concurrent takes took %d attempts, want the limit %d", callers, taken, b.Limit)
	}
}

func testAttemptsInvalid(t *testing.T, f *fixture) {
	now := attemptStart()
	for _, tc := range []struct {
		name string
		key  string
		b    storage.AttemptBudget
	}{
		{"empty key", "", attemptBudget},
		{"long key", strings.Repeat("k", storage.MaxAttemptKeyBytes+1), attemptBudget},
		{"no limit", "k", storage.AttemptBudget{Window: time.Minute}},
		{"limit too high", "k", storage.AttemptBudget{Limit: storage.MaxAttemptLimit + 1, Window: time.Minute}},
		{"no window", "k", storage.AttemptBudget{Limit: 1}},
	} {
		_, _, err := f.s.TakeAttempt(f.ctx, tc.key, tc.b, now)
		wantErr(t, "TakeAttempt with "+tc.name, err, storage.ErrInvalid)
		_, err = f.s.AttemptWait(f.ctx, tc.key, tc.b, now)
		wantErr(t, "AttemptWait with "+tc.name, err, storage.ErrInvalid)
	}
	wantErr(t, "ReturnAttempt with an empty key", f.s.ReturnAttempt(f.ctx, "", now), storage.ErrInvalid)
}
