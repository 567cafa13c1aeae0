package storage

import "testing"

func TestSweepHookReportsToTheObserverSet(t *testing.T) {
	var h SweepHook
	h.Report(SweepReport{Content: 1}) // nobody observes yet: no panic
	var got []SweepReport
	h.ObserveSweeps(func(r SweepReport) { got = append(got, r) })
	h.Report(SweepReport{UploadSessions: 2, Undo: 3})
	h.ObserveSweeps(nil)
	h.Report(SweepReport{Content: 4})
	if len(got) != 1 || got[0].UploadSessions != 2 || got[0].Undo != 3 {
		t.Fatalf("reports = %+v, want the one made while observed", got)
	}
}
