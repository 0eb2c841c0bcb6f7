//go:build race

package sim

import goruntime "runtime"

// The short run is shorter under the race detector, which slows the SQLite
// store down ten times or more (a commit takes 0.5 ms, an open 36 ms): plain
// go test -race ./... stays quick. The simulation itself is the same.
const (
	defaultSeeds = 16
	defaultSteps = 80
)

// defaultWorkers: under the race detector a run is CPU-bound.
var defaultWorkers = goruntime.GOMAXPROCS(0)
