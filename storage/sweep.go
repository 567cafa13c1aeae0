package storage

import "sync/atomic"

// SweepReport is what one pass of a store's background sweep removed.
type SweepReport struct {
	// UploadSessions and ChunkedUploads are the expired unfinished uploads
	// ended, with their parts.
	UploadSessions, ChunkedUploads int
	// Undo is the trash items and versions the retention no longer keeps.
	Undo int
	// Content is the content files or objects nothing references any more.
	Content int
	// Failed is set when a step of the pass failed; what the other steps
	// removed is counted all the same.
	Failed bool
}

// SweepObserver receives the report of every background sweep pass. It is
// called on the sweep's goroutine, so it must return quickly.
type SweepObserver func(SweepReport)

// SweepObservable is a store whose background sweep reports its passes,
// for metrics.
type SweepObservable interface {
	// ObserveSweeps makes o receive the report of every pass from now on;
	// nil stops the reports.
	ObserveSweeps(o SweepObserver)
}

// SweepHook is the observer of a store's sweep: a store embeds it to be a
// SweepObservable, and calls Report after each pass. The zero value
// reports to nobody.
type SweepHook struct {
	observer atomic.Pointer[SweepObserver]
}

// ObserveSweeps sets the observer that Report calls.
func (h *SweepHook) ObserveSweeps(o SweepObserver) {
	if o == nil {
		h.observer.Store(nil)
		return
	}
	h.observer.Store(&o)
}

// Report hands r to the observer, if there is one.
func (h *SweepHook) Report(r SweepReport) {
	if o := h.observer.Load(); o != nil {
		(*o)(r)
	}
}
