//go:build unix

package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setGroup makes the command the leader of a process group of its own
// (keeping the rest of its SysProcAttr).
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func (g *Group) signal(sig syscall.Signal) error { return signalGroup(g.pgid, sig) }

// KillGroup sends SIGKILL to every process of the group pgid. A group with
// no process left is not an error.
func KillGroup(pgid int) error { return signalGroup(pgid, sigKill) }

func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return syscall.EINVAL
	}
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// exitOf reads how a process ended: its exit status, or 128 plus the
// number of the signal that killed it, and that signal.
func exitOf(ps *os.ProcessState) Exit {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Exit{Code: 128 + int(ws.Signal()), Signal: ws.Signal()}
	}
	return Exit{Code: ps.ExitCode()}
}
