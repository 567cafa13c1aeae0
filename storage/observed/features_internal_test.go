package observed

import (
	"testing"

	"github.com/davspaces/davspaces/storage"
)

// TestEveryFeatureSet: for every set of optional interfaces, the wrapper
// offers exactly those.
func TestEveryFeatureSet(t *testing.T) {
	b := &Backend{hook: Hooks(nil)}
	for f := features(0); f <= allFeatures; f++ {
		wrapped := b.offering(f)
		for _, c := range []struct {
			name string
			want features
			has  func(storage.Backend) bool
		}{
			{"Walker", walks, func(s storage.Backend) bool { _, ok := s.(Walker); return ok }},
			{"Checker", checks, func(s storage.Backend) bool { _, ok := s.(storage.Checker); return ok }},
			{"OpenUploadCounter", countsUploads, func(s storage.Backend) bool { _, ok := s.(storage.OpenUploadCounter); return ok }},
			{"SweepObservable", reportsSweeps, func(s storage.Backend) bool { _, ok := s.(storage.SweepObservable); return ok }},
		} {
			if got, want := c.has(wrapped), f&c.want != 0; got != want {
				t.Errorf("features %04b: offers %s %v, want %v", f, c.name, got, want)
			}
		}
	}
}
