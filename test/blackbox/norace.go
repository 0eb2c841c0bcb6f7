//go:build !race

package blackbox

// buildFlags are go build's flags for the wilco binary (see race.go).
var buildFlags []string
