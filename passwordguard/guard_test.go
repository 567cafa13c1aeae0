package passwordguard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

var tenPerFiveMinutes = storage.AttemptBudget{Limit: 10, Window: 5 * time.Minute}

func newGuard(t *testing.T, opts Options) *Guard {
	t.Helper()
	if opts.Budgets == nil {
		opts.Budgets = NewMemory(100)
	}
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestConcurrentChecksCompareAtMostTheBudget sends 250 wrong passwords
// at once: 10 are compared, the others refused without a compare.
func TestConcurrentChecksCompareAtMostTheBudget(t *testing.T) {
	g := newGuard(t, Options{MaxConcurrent: 2, MaxWait: time.Minute})
	var compares, refused atomic.Int64
	var wg sync.WaitGroup
	for range 250 {
		wg.Go(func() {
			right, err := g.Check(t.Context(), "link l 192.0.2.1", tenPerFiveMinutes, func() bool {
				compares.Add(1)
				time.Sleep(time.Millisecond)
				return false
			})
			var refusal *Refusal
			switch {
			case errors.As(err, &refusal) && !refusal.Busy && refusal.RetryAfter > 0:
				refused.Add(1)
			case err != nil || right:
				t.Errorf("Check: %v, %v", right, err)
			}
		})
	}
	wg.Wait()
	if compares.Load() != 10 || refused.Load() != 240 {
		t.Fatalf("%d compares, %d refused; want 10 and 240", compares.Load(), refused.Load())
	}
	if err := g.Blocked(t.Context(), "link l 192.0.2.1", tenPerFiveMinutes); err == nil {
		t.Fatal("the key is not blocked after 10 wrong passwords")
	}
}

// TestRightPasswordsCountNothing checks right passwords between wrong
// ones: only the wrong ones spend the budget.
func TestRightPasswordsCountNothing(t *testing.T) {
	g := newGuard(t, Options{})
	for i := range 27 {
		wrong := i%3 == 0
		right, err := g.Check(t.Context(), "k", tenPerFiveMinutes, func() bool { return !wrong })
		if err != nil || right == wrong {
			t.Fatalf("check %d: %v, %v", i, right, err)
		}
	}
	if err := g.Blocked(t.Context(), "k", tenPerFiveMinutes); err != nil {
		t.Fatalf("9 wrong passwords of 27 block: %v", err)
	}
	if _, err := g.Check(t.Context(), "k", tenPerFiveMinutes, func() bool { return false }); err != nil {
		t.Fatalf("the 10th wrong password: %v", err)
	}
	if err := g.Blocked(t.Context(), "k", tenPerFiveMinutes); err == nil {
		t.Fatal("not blocked after the 10th wrong password")
	}
}

// TestBusyRefusesAndCounts holds the only slot: another check waits
// MaxWait, is refused as busy, and its attempt counts.
func TestBusyRefusesAndCounts(t *testing.T) {
	mem := NewMemory(10)
	g := newGuard(t, Options{Budgets: mem, MaxConcurrent: 1, MaxWait: 20 * time.Millisecond})
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Check(context.Background(), "holder", tenPerFiveMinutes, func() bool {
			close(held)
			<-release
			return false
		})
	}()
	<-held
	start := time.Now()
	_, err := g.Check(t.Context(), "waiter", tenPerFiveMinutes, func() bool {
		t.Error("compared without a slot")
		return false
	})
	var refusal *Refusal
	if !errors.As(err, &refusal) || !refusal.Busy || refusal.RetryAfter != BusyRetryAfter {
		t.Fatalf("with every slot taken: %v, want a busy refusal", err)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond || waited > time.Second {
		t.Fatalf("refused after %s, want after MaxWait", waited)
	}
	close(release)
	<-done
	if n := mem.size(); n != 2 {
		t.Fatalf("%d keys kept, want the holder's and the busy check's", n)
	}
}

func TestAddressPrefix(t *testing.T) {
	for _, tc := range []struct{ client, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::ffff", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"not an address", "not an address"},
	} {
		if got := AddressPrefix(tc.client); got != tc.want {
			t.Errorf("AddressPrefix(%q) = %q, want %q", tc.client, got, tc.want)
		}
	}
}

// TestMemoryKeysBounded makes attempts under more keys than a Memory
// keeps: the oldest go, the newest still count.
func TestMemoryKeysBounded(t *testing.T) {
	m := NewMemory(3)
	b := storage.AttemptBudget{Limit: 1, Window: time.Hour}
	start := time.Now()
	for i := range 5 {
		if taken, _, err := m.TakeAttempt(t.Context(), fmt.Sprint(i), b, start.Add(time.Duration(i)*time.Second)); !taken || err != nil {
			t.Fatalf("key %d: %v, %v", i, taken, err)
		}
	}
	if m.size() != 3 {
		t.Fatalf("%d keys kept, want 3", m.size())
	}
	for key, blocked := range map[string]bool{"0": false, "1": false, "2": true, "4": true} {
		wait, _ := m.AttemptWait(t.Context(), key, b, start.Add(time.Minute))
		if (wait > 0) != blocked {
			t.Errorf("key %s: wait %s, want blocked %v", key, wait, blocked)
		}
	}
}

// TestCheckAllTakesEveryBudget checks under two budgets: a wrong
// password spends both, and a key without attempts refuses the check
// and gives back the attempt the other key had taken for it.
func TestCheckAllTakesEveryBudget(t *testing.T) {
	g := newGuard(t, Options{})
	one := storage.AttemptBudget{Limit: 1, Window: time.Minute}
	wrong := func() bool { return false }
	if right, err := g.CheckAll(t.Context(), []Budget{{"user", tenPerFiveMinutes}, {"address", one}}, wrong); right || err != nil {
		t.Fatalf("first check: %v, %v", right, err)
	}
	var refusal *Refusal
	for range 20 {
		if _, err := g.CheckAll(t.Context(), []Budget{{"user", tenPerFiveMinutes}, {"address", one}}, wrong); !errors.As(err, &refusal) {
			t.Fatalf("past the address budget: %v", err)
		}
	}
	// The user's budget paid for the first check alone: nine are left.
	for i := range 9 {
		if _, err := g.Check(t.Context(), "user", tenPerFiveMinutes, wrong); err != nil {
			t.Fatalf("user attempt %d: %v", i+2, err)
		}
	}
	if err := g.Blocked(t.Context(), "user", tenPerFiveMinutes); err == nil {
		t.Fatal("the user is not blocked after 10 wrong passwords")
	}
}
