//go:build unix

package daemon

import (
	"os/exec"
	"syscall"
)

// processGroup runs the command in a process group of its own and kills the
// whole group when its context ends, so that no child outlives it.
func processGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
