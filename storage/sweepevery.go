package storage

import "time"

// SweepEvery runs pass every interval until stop is closed: the loop of a
// store's background sweep. The first pass comes one interval after the
// start; a pass under way when stop closes runs to its end.
func SweepEvery(stop <-chan struct{}, interval time.Duration, pass func()) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			pass()
		}
	}
}
