package main

import (
	"io"
	"testing"
	"time"
)

func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		name     string
		count    int
		duration time.Duration
		want     int
	}{
		{"count", 5, time.Hour, 5},
		{"deadline passed", 5, -time.Second, 0},
		{"no count", 0, time.Hour, 20}, // stopped by the test's cap
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{cfg: &config{count: tc.count, duration: tc.duration}}
			s := &scenario{r: r, ctx: t.Context()}
			b := r.newBudget(s)
			n := 0
			for n < 20 && b.take() {
				n++
			}
			if n != tc.want {
				t.Errorf("took %d, want %d", n, tc.want)
			}
		})
	}
}

func TestBudgetStopsAfterErrors(t *testing.T) {
	r := &runner{cfg: &config{duration: time.Hour}, stderr: io.Discard}
	s := &scenario{r: r, ctx: t.Context()}
	b := r.newBudget(s)
	s.errors.Store(maxErrors)
	if b.take() {
		t.Error("budget handed out a request after maxErrors failures")
	}
}
