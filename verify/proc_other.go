//go:build !unix

package verify

import (
	"os"
	"os/exec"
)

// processGroup: without process groups, the end of the context kills the
// shell only.
func processGroup(cmd *exec.Cmd) {}

func killGroup(pgid int) error { return nil }

func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }
