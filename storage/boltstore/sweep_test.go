package boltstore

import (
	"testing"
	"time"

	"github.com/davspaces/davspaces/storage"
)

// TestSweepReportsWhatItRemoved: the background pass tells the store's
// observer that it ended an expired session.
func TestSweepReportsWhatItRemoved(t *testing.T) {
	clk := newClock()
	s, err := Open(t.TempDir(), Options{Now: clk.Now, SessionSweep: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	reports := make(chan storage.SweepReport, 16)
	s.ObserveSweeps(func(r storage.SweepReport) {
		select {
		case reports <- r:
		default: // the test has what it needs
		}
	})
	sp, err := s.PersonalSpace(ctx, storage.User{ID: "einstein"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{s: s, clk: clk, space: sp}
	f.newSession(t, "f", 4, time.Minute)
	clk.Advance(2 * time.Minute)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-reports:
			if r.Failed {
				t.Fatalf("a pass failed: %+v", r)
			}
			if r.UploadSessions == 1 {
				return
			}
		case <-deadline:
			t.Fatal("no pass reported the expired session")
		}
	}
}
