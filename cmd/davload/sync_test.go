package main

import "testing"

func TestSyncCycle(t *testing.T) {
	ops := syncCycle("http://127.0.0.1/d/", "http://127.0.0.1/d/w001/", 1, 5, nil)
	if len(ops) != 4 {
		t.Fatalf("%d requests per cycle, want 4 (PROPFIND, GET, PUT, MOVE)", len(ops))
	}
	if seedName(199) != "s00199.bin" {
		t.Errorf("seedName(199) = %q", seedName(199))
	}
}
