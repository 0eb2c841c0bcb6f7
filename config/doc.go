// Package config loads wilco.yaml: the agents wilco delegates
// to, the verify steps, the delivery policies, the listen address and the
// compatibility switches.
//
// Every key is optional except agents; a missing key takes its
// default (the core.Default* constants and functions; Default returns them
// all). Durations are Go duration strings ("250ms", "5m").
//
// Load is strict: an unknown key, a value of the wrong kind or a bad value
// is an error that names the file, the line and the key, for example
//
//	wilco.yaml:12: policy.ack.timeouts[1]: must be positive, got "0s"
//
// and Load reports every such error it finds, not only the first (each one
// is a *Error; the returned error joins them). The file is read through
// yaml.Node so that every value keeps its line.
//
// Path says which file to read: the --config flag, else $WILCO_CONFIG, else
// wilco.yaml in the working directory. Config.Encode writes a Config back as
// YAML that Load reads to the same Config (what `wilco init` writes).
package config
