//go:build !unix

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// Without process groups, only the command's own process is stopped,
// whatever the signal.

type signal int

const (
	sigTerm signal = iota
	sigKill
)

func setGroup(*exec.Cmd) {}

func (g *Group) signal(signal) error { return killProcess(g.cmd.Process) }

// KillGroup kills the process pgid (there are no groups here).
func KillGroup(pgid int) error {
	p, err := os.FindProcess(pgid)
	if err != nil {
		return err
	}
	return killProcess(p)
}

func killProcess(p *os.Process) error {
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func exitOf(ps *os.ProcessState) Exit { return Exit{Code: ps.ExitCode()} }

// GroupGone is true: no group is known to outlive its command here.
func GroupGone(int) bool { return true }

// Environ is unsupported here: another process's environment is not read.
func Environ(pid int) ([]string, error) {
	return nil, fmt.Errorf("proc: environment of process %d: %w", pid, errors.ErrUnsupported)
}
