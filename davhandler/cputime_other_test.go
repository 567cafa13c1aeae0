//go:build !unix

package davhandler

import "time"

// processCPUTime is not measured here: benchmarks report wall time only.
func processCPUTime() (time.Duration, bool) { return 0, false }
