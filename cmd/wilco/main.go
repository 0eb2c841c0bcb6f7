// Command wilco delegates tasks to coding agents and proves every step:
// the agent acknowledged, worked, passed verification. See docs/CLI.md.
package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitUnverified: `wilco run`'s task ended unverified — the agent
	// finished, and no verify step is configured to check its work.
	exitUnverified = 3
)

// run is the whole command: the verb in args[0] with its arguments. It
// returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return newCLI(stdout, stderr).main(ctx, args)
}

// cli is what the verbs share: where to print, and the world they read
// (environment, working directory, PATH, terminal, clock), replaceable in
// tests.
type cli struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	getenv         func(string) string
	wd             string
	lookPath       func(string) (string, error)
	// tty is true when stdout is a terminal: watch redraws a status line.
	tty bool
	now func() time.Time
	loc *time.Location
	// pollEvery is how often op and --wait poll the server.
	pollEvery time.Duration
	// reconnectDelay is the first wait before an event stream reconnects
	// (0: the client's default).
	reconnectDelay time.Duration
	// onFlags, when set, is given every flag set a verb makes (shell
	// completion reads the verbs' flags this way).
	onFlags func(*flag.FlagSet)
}

func newCLI(stdout, stderr io.Writer) *cli {
	wd, err := os.Getwd()
	if err != nil {
		wd = "."
	}
	return &cli{
		stdout: stdout, stderr: stderr, stdin: os.Stdin,
		getenv: os.Getenv, wd: wd, lookPath: lookPath,
		tty: isTerminal(stdout), now: time.Now, loc: time.Local,
		pollEvery: 500 * time.Millisecond,
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
