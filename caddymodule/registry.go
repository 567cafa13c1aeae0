package caddymodule

import (
	"slices"
	"sync"
)

// registry lists values per key (a configuration, an issuer in one), so
// that the modules of one configuration find what another provisioned.
// Each module takes its own off again when it is cleaned up. It is safe
// for concurrent use; the zero registry is empty.
type registry[K comparable, V any] struct {
	mu      sync.Mutex
	entries map[K][]*V
}

// put lists v under key and returns the function that takes it off again.
func (d *registry[K, V]) put(key K, v *V) (remove func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.entries == nil {
		d.entries = map[K][]*V{}
	}
	d.entries[key] = append(d.entries[key], v)
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		// A copy: a list listed returned stays as it was.
		left := slices.DeleteFunc(slices.Clone(d.entries[key]), func(x *V) bool { return x == v })
		if len(left) == 0 {
			delete(d.entries, key)
		} else {
			d.entries[key] = left
		}
	}
}

// listed returns what is listed under key, oldest first. The caller must
// not change the list.
func (d *registry[K, V]) listed(key K) []*V {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.entries[key]
}
