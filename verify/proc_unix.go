//go:build unix

package verify

import (
	"os"
	"os/exec"
	"syscall"
)

// processGroup starts the command in a process group of its own, and
// makes the end of its context kill the whole group: a step's children
// die with it.
func processGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return killGroup(cmd.Process.Pid)
	}
}

// killGroup kills every process of the group pgid still there.
func killGroup(pgid int) error {
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return nil
	}
	return err
}

// exitCode is the shell's convention: the exit status, or 128+n for a
// process killed by signal n.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
