//go:build !race

package sim

import goruntime "runtime"

// The short run of plain go test: 30 seeds of 250 steps, a few seconds.
const (
	defaultSeeds = 30
	defaultSteps = 250
)

// defaultWorkers: most of a run's time is spent waiting for the disk, so
// more seeds run side by side than there are CPUs.
var defaultWorkers = 3*goruntime.GOMAXPROCS(0) + 2
