package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// GroupGone reports whether the process group pgid has no live process:
// kill(-pgid, 0) finds none, or /proc shows only zombies in it (a zombie
// waiting to be reaped by init is not alive).
func GroupGone(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(string(f[2])); g == pgid && f[0][0] != 'Z' && f[0][0] != 'X' {
			return false
		}
	}
	return true
}

// Environ is the environment the process pid was started with, as
// /proc/<pid>/environ holds it.
func Environ(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil, fmt.Errorf("proc: environment of process %d: %w", pid, err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}
