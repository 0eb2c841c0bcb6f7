//go:build !unix

package exec

import (
	"errors"
	"os"
	osexec "os/exec"
	"time"
)

// Without process groups, only the process itself is stopped.

type signal int

const (
	sigTerm signal = iota
	sigKill
)

func setGroup(*osexec.Cmd) {}

func signalGroup(pid int, _ signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func exitStatus(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ee *osexec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), ""
	}
	return -1, ""
}

func waitGroupGone(int, time.Duration) {}

// PidFileName holds, in a turn's run directory, the process group id of
// the agent process while it runs.
const PidFileName = "agent.pid"

// KillOrphans does nothing where process groups are not used.
func (a *Adapter) KillOrphans() int { return 0 }
