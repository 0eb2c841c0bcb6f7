package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

var (
	// ErrPipe is the error of a Start that could not make the output pipe:
	// the command was not tried (unlike a program that is not found).
	ErrPipe = errors.New("proc: cannot make the output pipe")
	// ErrOutputSet is the error of a Start given a command whose standard
	// output or error is already set: Start sets them.
	ErrOutputSet = errors.New("proc: the command's output is already set")
)

// Group is a command started by Start, leading a process group of its own.
type Group struct {
	cmd  *exec.Cmd
	pgid int
	out  *os.File // the read end of the output pipe
	// ended is closed once the output reached its end: copied to the
	// writer given to Start, or read by the caller to an error.
	ended     chan struct{}
	endOnce   sync.Once
	copying   bool // a goroutine copies the output to Start's writer
	closeOnce sync.Once
	stopCtx   func() bool // stops the kill at the end of Start's context

	mu       sync.Mutex
	stopping bool
	closed   bool
	timers   []*time.Timer
}

// Exit is how a command's process ended.
type Exit struct {
	// Code is the exit status, or 128+n for a process killed by signal n
	// (as a shell says it); -1 when it could not be waited for.
	Code int
	// Signal is the signal that killed the process; nil when it exited.
	Signal os.Signal
}

// Start starts cmd in a process group of its own, with its standard output
// and standard error together in one pipe (cmd.Stdout and cmd.Stderr must
// be nil). When out is not nil the output is copied to it; otherwise the
// caller reads it from Output to its end. The end of ctx kills the whole
// group; a context already ended starts nothing and Start returns its
// error. A command that cannot start returns os/exec's error, which says
// why and names the program (errors.Is exec.ErrNotFound for a program not
// found, fs.ErrPermission for one that cannot be executed).
func Start(ctx context.Context, cmd *exec.Cmd, out io.Writer) (*Group, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, ErrOutputSet
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPipe, err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	setGroup(cmd)
	err = cmd.Start()
	// The pipe's write end is the command's now: the output ends when
	// it and every process that inherited it closed it.
	w.Close()
	if err != nil {
		r.Close()
		cmd.Stdout, cmd.Stderr = nil, nil
		return nil, err
	}
	g := &Group{cmd: cmd, pgid: cmd.Process.Pid, out: r, ended: make(chan struct{})}
	if out != nil {
		g.copying = true
		go func() {
			_, _ = io.Copy(out, r)
			close(g.ended)
		}()
	}
	if ctx.Done() != nil {
		g.stopCtx = context.AfterFunc(ctx, func() { _ = g.Kill() })
	}
	return g, nil
}

// Pgid is the id of the group: the command's process id.
func (g *Group) Pgid() int { return g.pgid }

// Output is what the command writes, to read to its end, for a group
// started without a writer (nil otherwise). Its reads fail once the pipe
// is closed (by Stop, Drain or Close).
func (g *Group) Output() io.Reader {
	if g.copying {
		return nil
	}
	return outputReader{g}
}

type outputReader struct{ g *Group }

func (r outputReader) Read(p []byte) (int, error) {
	n, err := r.g.out.Read(p)
	if err != nil {
		r.g.endOnce.Do(func() { close(r.g.ended) })
	}
	return n, err
}

// Wait waits for the command's own process to end and says how it ended.
// The end of Start's context no longer kills the group once it returns.
// Its error is only that of waiting (a command that fails is an Exit).
func (g *Group) Wait() (Exit, error) {
	err := g.cmd.Wait()
	if g.stopCtx != nil {
		g.stopCtx()
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return Exit{Code: -1}, fmt.Errorf("proc: wait for %s: %w", g.cmd.Path, err)
	}
	return exitOf(g.cmd.ProcessState), nil
}

// Kill sends SIGKILL to every process of the group.
func (g *Group) Kill() error { return g.signal(sigKill) }

// Stop stops the group gently: SIGTERM now, SIGKILL after grace, and after
// one grace more the output pipe is closed, whoever still holds it (a
// process that left the group). Only the first call does anything; Close
// cancels what has not happened yet.
func (g *Group) Stop(grace time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopping || g.closed {
		return
	}
	g.stopping = true
	_ = g.signal(sigTerm)
	g.later(grace, func() { _ = g.Kill() })
	g.later(2*grace, g.closeOutput)
}

// later runs f after d unless the group is closed by then. Called with
// g.mu held.
func (g *Group) later(d time.Duration, f func()) {
	g.timers = append(g.timers, time.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if !g.closed {
			f()
		}
	}))
}

// Drain waits, at most bound, for the output to reach its end, then closes
// the pipe: a process the command left running must not hold up its end
// for longer. When the output is copied to Start's writer, Drain returns
// once nothing more is written to it. It reports whether the output ended
// by itself.
func (g *Group) Drain(bound time.Duration) bool {
	t := time.NewTimer(bound)
	defer t.Stop()
	ended := true
	select {
	case <-g.ended:
	case <-t.C:
		ended = false
	}
	g.closeOutput()
	if g.copying {
		<-g.ended
	}
	return ended
}

// WaitGone waits, at most max, until no live process is left in the group,
// and reports whether none is.
func (g *Group) WaitGone(max time.Duration) bool {
	deadline := time.Now().Add(max)
	for !GroupGone(g.pgid) {
		if !time.Now().Before(deadline) {
			return false
		}
		<-time.After(5 * time.Millisecond)
	}
	return true
}

// Close cancels what Stop has not done yet and closes the output pipe (a
// copy to Start's writer ends before Close returns). Call it once done
// with the group.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	for _, t := range g.timers {
		t.Stop()
	}
	g.timers = nil
	g.mu.Unlock()
	g.closeOutput()
	if g.copying {
		<-g.ended
	}
}

func (g *Group) closeOutput() {
	g.closeOnce.Do(func() { _ = g.out.Close() })
}
