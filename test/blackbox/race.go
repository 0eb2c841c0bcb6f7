//go:build race

package blackbox

// buildFlags are go build's flags for the wilco binary: a test run with
// the race detector runs a wilco built with it, whose races end it with
// exit status 66 (a failure of the test that stops it).
var buildFlags = []string{"-race"}
