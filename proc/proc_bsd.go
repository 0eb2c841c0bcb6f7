//go:build unix && !linux

package proc

import (
	"errors"
	"fmt"
	"syscall"
)

// GroupGone reports whether the process group pgid has no process left
// (zombies count until they are reaped).
func GroupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// Environ is unsupported here: another process's environment is not read.
func Environ(pid int) ([]string, error) {
	return nil, fmt.Errorf("proc: environment of process %d: %w", pid, errors.ErrUnsupported)
}
