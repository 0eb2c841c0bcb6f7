// Package proc runs a command in a process group of its own, so that
// whatever the command starts can be stopped with it: verify steps, the
// commands of operations, and agent processes.
//
// Start starts the command as the leader of a new group; what it writes to
// standard output and standard error goes, together, into one pipe, copied
// to a writer or read by the caller (Output). The end of Start's context
// kills the whole group. Kill kills the group at once; Stop stops it
// gently: SIGTERM, SIGKILL after a grace period, and after one more the
// pipe is closed, whoever still holds it.
//
// Wait waits for the command's own process and says how it ended (Exit:
// the exit status, or 128+n and the signal n that killed it, as a shell
// says it). A process the command left running — a grandchild — may keep
// the pipe open long after that: Drain waits for the end of the output at
// most a given time, then closes the pipe. WaitGone waits until no live
// process is left in the group (a zombie is not alive).
//
// A group outlives a wilco killed with SIGKILL. KillGroup and Environ are
// for what such a wilco left behind: a group id read back from a file, and
// the environment that shows the process with that id is still the one
// wilco started (ids are reused).
//
// On systems without process groups (!unix), only the command's process is
// stopped, with Process.Kill whatever the signal; Exit has no signal,
// GroupGone is always true and Environ is unsupported. On Linux, GroupGone
// and Environ read /proc; on the BSDs and macOS, GroupGone asks kill(2)
// and counts zombies as alive, and Environ is unsupported.
package proc
