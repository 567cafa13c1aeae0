package observed

import (
	"context"

	"github.com/davspaces/davspaces/storage"
)

// Walker is a store that resolves the segments of a path in one snapshot
// (boltstore's and pgstore's Walk), which davhandler uses instead of a
// lookup per segment when the store offers it.
type Walker interface {
	Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error)
}

// features are the optional interfaces a store may have beyond
// storage.Backend, which the wrapper offers exactly when the store has
// them: a caller's `_, ok := store.(X)` answers for the wrapper as for
// the store, so that a fast path stays and no caller is promised what
// the store cannot do. They are found once, when the store is wrapped.
type features uint8

const (
	walks         features = 1 << iota // Walker
	checks                             // storage.Checker
	countsUploads                      // storage.OpenUploadCounter
	reportsSweeps                      // storage.SweepObservable
	allFeatures   = walks | checks | countsUploads | reportsSweeps
)

// featuresOf returns the optional interfaces b has.
func featuresOf(b storage.Backend) features {
	var f features
	if _, ok := b.(Walker); ok {
		f |= walks
	}
	if _, ok := b.(storage.Checker); ok {
		f |= checks
	}
	if _, ok := b.(storage.OpenUploadCounter); ok {
		f |= countsUploads
	}
	if _, ok := b.(storage.SweepObservable); ok {
		f |= reportsSweeps
	}
	return f
}

// offering returns b with the methods of f besides its own: one
// combination of embedded features for each set, since Go has no other
// way to give a value a method set chosen at run time.
func (b *Backend) offering(f features) storage.Backend {
	w, c, u, s := walker{b}, checker{b}, uploadCounter{b}, sweeps{b}
	type (
		W = walker
		C = checker
		U = uploadCounter
		S = sweeps
	)
	switch f & allFeatures {
	case walks:
		return struct {
			*Backend
			W
		}{b, w}
	case checks:
		return struct {
			*Backend
			C
		}{b, c}
	case walks | checks:
		return struct {
			*Backend
			W
			C
		}{b, w, c}
	case countsUploads:
		return struct {
			*Backend
			U
		}{b, u}
	case walks | countsUploads:
		return struct {
			*Backend
			W
			U
		}{b, w, u}
	case checks | countsUploads:
		return struct {
			*Backend
			C
			U
		}{b, c, u}
	case walks | checks | countsUploads:
		return struct {
			*Backend
			W
			C
			U
		}{b, w, c, u}
	case reportsSweeps:
		return struct {
			*Backend
			S
		}{b, s}
	case walks | reportsSweeps:
		return struct {
			*Backend
			W
			S
		}{b, w, s}
	case checks | reportsSweeps:
		return struct {
			*Backend
			C
			S
		}{b, c, s}
	case walks | checks | reportsSweeps:
		return struct {
			*Backend
			W
			C
			S
		}{b, w, c, s}
	case countsUploads | reportsSweeps:
		return struct {
			*Backend
			U
			S
		}{b, u, s}
	case walks | countsUploads | reportsSweeps:
		return struct {
			*Backend
			W
			U
			S
		}{b, w, u, s}
	case checks | countsUploads | reportsSweeps:
		return struct {
			*Backend
			C
			U
			S
		}{b, c, u, s}
	case allFeatures:
		return struct {
			*Backend
			W
			C
			U
			S
		}{b, w, c, u, s}
	}
	return b
}

// walker offers Walker.
type walker struct{ b *Backend }

func (w walker) Walk(ctx context.Context, spaceID, nodeID string, names []string) ([]storage.Node, error) {
	ctx, obs := w.b.observe(ctx, OpWalk, spaceID)
	nodes, err := w.b.next.(Walker).Walk(ctx, spaceID, nodeID, names)
	return nodes, obs.end(err)
}

// checker offers storage.Checker.
type checker struct{ b *Backend }

func (c checker) Check(ctx context.Context, opts storage.CheckOptions, report func(storage.Problem)) (storage.CheckSummary, error) {
	ctx, obs := c.b.observe(ctx, OpCheck, "")
	sum, err := c.b.next.(storage.Checker).Check(ctx, opts, report)
	return sum, obs.end(err)
}

// uploadCounter offers storage.OpenUploadCounter.
type uploadCounter struct{ b *Backend }

func (u uploadCounter) CountOpenUploads(ctx context.Context, kindOf func(string) string) (storage.OpenUploads, error) {
	ctx, obs := u.b.observe(ctx, OpCountOpenUploads, "")
	open, err := u.b.next.(storage.OpenUploadCounter).CountOpenUploads(ctx, kindOf)
	return open, obs.end(err)
}

// sweeps offers storage.SweepObservable; the setting passes through.
type sweeps struct{ b *Backend }

func (s sweeps) ObserveSweeps(o storage.SweepObserver) {
	s.b.next.(storage.SweepObservable).ObserveSweeps(o)
}
