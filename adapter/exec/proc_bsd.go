//go:build unix && !linux

package exec

import (
	"errors"
	"syscall"
)

// groupGone reports whether the process group pgid has no process left
// (zombies count until they are reaped).
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}
