//go:build !unix

package daemon

import "os/exec"

// processGroup: on systems without process groups the command alone is
// killed when its context ends.
func processGroup(*exec.Cmd) {}
