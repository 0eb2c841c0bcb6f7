//go:build unix

package exec

import (
	"errors"
	osexec "os/exec"
	"syscall"
	"time"
)

var (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setGroup starts the command in a process group of its own, so that
// stopping the turn reaches every process it started.
func setGroup(cmd *osexec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) {
	_ = syscall.Kill(-pgid, sig)
}

// exitStatus reads how a process ended: its exit status, or 128 plus the
// number of the signal that killed it (as shells say it) and its name.
func exitStatus(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ee *osexec.ExitError
	if !errors.As(err, &ee) {
		return -1, ""
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal().String()
	}
	return ee.ExitCode(), ""
}

// waitGroupGone waits, at most max, until no live process is left in the
// group pgid (a zombie waiting to be reaped by init is not alive).
func waitGroupGone(pgid int, max time.Duration) {
	deadline := time.Now().Add(max)
	for !groupGone(pgid) && time.Now().Before(deadline) {
		<-time.After(5 * time.Millisecond)
	}
}
