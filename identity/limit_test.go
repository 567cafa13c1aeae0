package identity

import (
	"testing"
	"time"
)

func TestClientLimiter(t *testing.T) {
	clock := time.Now()
	l := NewClientLimiter(2, 3, 2, func() time.Time { return clock })
	steps := []struct {
		name    string
		client  string
		advance time.Duration
		ok      bool
		wait    time.Duration
	}{
		{"burst 1", "a", 0, true, 0},
		{"burst 2", "a", 0, true, 0},
		{"burst 3", "a", 0, true, 0},
		{"over the burst", "a", 0, false, 500 * time.Millisecond},
		{"refused checks take nothing", "a", 0, false, 500 * time.Millisecond},
		{"another client has its own bucket", "b", 0, true, 0},
		{"refilled at the rate", "a", 500 * time.Millisecond, true, 0},
		{"empty again", "a", 0, false, 500 * time.Millisecond},
	}
	for _, s := range steps {
		clock = clock.Add(s.advance)
		ok, wait := l.Allow(s.client)
		if ok != s.ok || wait.Round(time.Millisecond) != s.wait {
			t.Fatalf("%s: Allow(%s) = %v, %v; want %v, %v", s.name, s.client, ok, wait, s.ok, s.wait)
		}
	}
}

func TestClientLimiterIsBounded(t *testing.T) {
	clock := time.Now()
	l := NewClientLimiter(1, 1, 2, func() time.Time { return clock })
	l.Allow("a")
	l.Allow("b")
	l.Allow("a") // a is now the most recently seen
	l.Allow("c") // forgets b
	if n := l.len(); n != 2 {
		t.Fatalf("%d clients remembered, want 2", n)
	}
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("a recently seen client's empty bucket was forgotten")
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("the least recently seen client was kept")
	}
}

func TestClientLimiterDefaults(t *testing.T) {
	l := NewClientLimiter(0, 0, 0, nil)
	if float64(l.limit) != DefaultClientRate || l.burst != DefaultClientBurst || l.size != DefaultClientLimiters {
		t.Fatalf("limit %v, burst %d, size %d", l.limit, l.burst, l.size)
	}
}
