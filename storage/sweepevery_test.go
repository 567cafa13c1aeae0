package storage

import (
	"testing"
	"time"
)

// SweepEvery makes passes until stop closes, then returns.
func TestSweepEvery(t *testing.T) {
	stop := make(chan struct{})
	passes := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		SweepEvery(stop, time.Millisecond, func() { passes <- struct{}{} })
	}()
	for range 3 {
		select {
		case <-passes:
		case <-time.After(10 * time.Second):
			t.Fatal("no pass within 10s")
		}
	}
	close(stop)
	for {
		select {
		case <-passes: // a pass that began before stop closed
		case <-done:
			return
		case <-time.After(10 * time.Second):
			t.Fatal("SweepEvery did not return after stop closed")
		}
	}
}
