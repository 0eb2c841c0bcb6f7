package blackbox

// buildFlags are go build's flags for the wilco binary (see race_test.go).
var buildFlags []string
