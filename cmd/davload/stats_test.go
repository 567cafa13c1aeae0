package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if got := percentile(d, 50); got != 50*time.Millisecond {
		t.Errorf("p50 = %v", got)
	}
	if got := percentile(d, 95); got != 95*time.Millisecond {
		t.Errorf("p95 = %v", got)
	}
	if got := percentile(d[:1], 95); got != time.Millisecond {
		t.Errorf("p95 of one = %v", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of none = %v", got)
	}
	s := summarize([]time.Duration{3, 1, 2})
	if s.mean != 2 || s.p50 != 2 || s.max != 3 {
		t.Errorf("summarize = %+v", s)
	}
}
