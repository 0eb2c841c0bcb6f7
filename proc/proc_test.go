//go:build unix

package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// guard bounds every wait of a test: a failure, never a pause.
const guard = 10 * time.Second

// leaveEnv makes the test binary, run as a command, leave its process
// group (a group of its own), say "left <pid>" and sleep: a process that
// keeps the output pipe though it is no longer in the group.
const leaveEnv = "PROC_TEST_LEAVE_THE_GROUP"

func TestMain(m *testing.M) {
	if os.Getenv(leaveEnv) != "" {
		if err := syscall.Setpgid(0, 0); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("left " + strconv.Itoa(os.Getpid()) + "\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// sh returns a command running script with sh -c.
func sh(script string) *exec.Cmd {
	return exec.Command("sh", "-c", script)
}

// start starts cmd with Start and makes sure its group is gone after the
// test.
func start(t *testing.T, ctx context.Context, cmd *exec.Cmd, out io.Writer) *Group {
	t.Helper()
	g, err := Start(ctx, cmd, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = g.Kill()
		g.Close()
	})
	return g
}

// readUntil reads lines of r until one starts with prefix, and returns it.
func readUntil(t *testing.T, r *bufio.Reader, prefix string) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line)
		}
		if err != nil {
			t.Fatalf("no line %q: %v", prefix, err)
		}
	}
}

// wait waits for the command's process, at most guard.
func wait(t *testing.T, g *Group) Exit {
	t.Helper()
	type result struct {
		exit Exit
		err  error
	}
	done := make(chan result, 1)
	go func() {
		e, err := g.Wait()
		done <- result{e, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.exit
	case <-time.After(guard):
		t.Fatal("the command did not end")
		return Exit{}
	}
}

// buffer is a bytes.Buffer safe for the copy's goroutine and the test's.
type buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestAGroupWhoseGrandchildIgnoresTermIsKilledWhole(t *testing.T) {
	t.Parallel()
	// The grandchild ignores SIGTERM (ignored signals stay ignored across
	// exec) and says so once it does.
	g := start(t, context.Background(), sh(`sh -c 'trap "" TERM; echo ready; exec sleep 60' & wait`), nil)
	out := bufio.NewReader(g.Output())
	readUntil(t, out, "ready")
	const grace = 2 * time.Second
	stopped := time.Now()
	g.Stop(grace)
	if e := wait(t, g); e.Signal != syscall.SIGTERM {
		t.Fatalf("the leader ended with %+v, want SIGTERM", e)
	}
	if time.Since(stopped) < grace && GroupGone(g.Pgid()) {
		t.Fatal("the grandchild that ignores SIGTERM was gone before the grace ended")
	}
	if !g.WaitGone(guard) {
		t.Fatal("the grandchild that ignores SIGTERM outlived SIGKILL")
	}
	if time.Since(stopped) < grace {
		t.Fatalf("the group was killed after %s, before its grace of %s", time.Since(stopped), grace)
	}
}

func TestKillKillsTheWholeGroupAtOnce(t *testing.T) {
	t.Parallel()
	g := start(t, context.Background(), sh(`sleep 60 & echo ready; wait`), nil)
	readUntil(t, bufio.NewReader(g.Output()), "ready")
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	if e := wait(t, g); e.Signal != syscall.SIGKILL || e.Code != 128+9 {
		t.Fatalf("exit %+v, want SIGKILL (137)", e)
	}
	if !g.WaitGone(guard) {
		t.Fatal("the group's sleep outlived SIGKILL")
	}
}

func TestTheEndOfTheContextKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := start(t, ctx, sh(`sleep 60 & echo ready; wait`), nil)
	readUntil(t, bufio.NewReader(g.Output()), "ready")
	cancel()
	if e := wait(t, g); e.Signal != syscall.SIGKILL {
		t.Fatalf("exit %+v, want SIGKILL", e)
	}
	if !g.WaitGone(guard) {
		t.Fatal("the group's sleep outlived the context")
	}
}

func TestAContextAlreadyEndedStartsNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	cmd := sh(`touch ran`)
	cmd.Dir = dir
	if _, err := Start(ctx, cmd, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start: %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("the command ran")
	}
}

func TestAGrandchildHoldingTheOutputDoesNotHoldUpTheEndPastTheBound(t *testing.T) {
	t.Parallel()
	var out buffer
	g := start(t, context.Background(), sh(`sleep 60 & echo started`), &out)
	if e := wait(t, g); e.Code != 0 || e.Signal != nil {
		t.Fatalf("exit %+v, want 0", e)
	}
	const bound = 300 * time.Millisecond
	begin := time.Now()
	if g.Drain(bound) {
		t.Fatal("Drain says the output ended, though the sleep holds it")
	}
	if d := time.Since(begin); d < bound || d > bound+2*time.Second {
		t.Fatalf("Drain returned after %s, bound %s", d, bound)
	}
	if out.String() != "started\n" {
		t.Fatalf("output %q", out.String())
	}
	if GroupGone(g.Pgid()) {
		t.Fatal("Drain stopped the sleep: it only closes the pipe")
	}
}

func TestDrainReturnsAtTheEndOfTheOutput(t *testing.T) {
	t.Parallel()
	var out buffer
	g := start(t, context.Background(), sh(`echo one; echo two >&2`), &out)
	wait(t, g)
	begin := time.Now()
	if !g.Drain(guard) {
		t.Fatal("Drain says the output did not end")
	}
	if d := time.Since(begin); d > guard/2 {
		t.Fatalf("Drain took %s", d)
	}
	if out.String() != "one\ntwo\n" {
		t.Fatalf("output %q: stdout and stderr go together", out.String())
	}
}

func TestStopClosesTheOutputThatAProcessOutsideTheGroupHolds(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := sh(`"$0" & wait`)
	cmd.Args = append(cmd.Args, self)
	cmd.Env = append(os.Environ(), leaveEnv+"=1")
	g := start(t, context.Background(), cmd, nil)
	out := bufio.NewReader(g.Output())
	line := readUntil(t, out, "left ")
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "left "))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	const grace = 200 * time.Millisecond
	stopped := time.Now()
	g.Stop(grace)
	wait(t, g)
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, out)
		if err == nil {
			err = io.EOF
		}
		ended <- err
	}()
	select {
	case err := <-ended:
		if !errors.Is(err, fs.ErrClosed) {
			t.Fatalf("the output ended with %v, want it closed", err)
		}
		if d := time.Since(stopped); d < 2*grace {
			t.Fatalf("the output was closed after %s, before SIGKILL's grace", d)
		}
	case <-time.After(guard):
		t.Fatal("the output is still open")
	}
	if syscall.Kill(pid, 0) != nil {
		t.Fatal("the process outside the group was stopped")
	}
}

func TestCloseCancelsWhatStopHasNotDoneYet(t *testing.T) {
	t.Parallel()
	// The leader ignores SIGTERM: only SIGKILL, after the grace, ends it.
	g := start(t, context.Background(), sh(`trap "" TERM; echo ready; while :; do sleep 1; done`), nil)
	readUntil(t, bufio.NewReader(g.Output()), "ready")
	g.Stop(200 * time.Millisecond)
	g.Close()
	exited := make(chan struct{})
	go func() {
		_, _ = g.Wait()
		close(exited)
	}()
	select {
	case <-exited:
		t.Fatal("SIGKILL was sent after Close")
	case <-time.After(time.Second):
	}
	_ = g.Kill()
	<-exited
}

func TestTheExitCodeAndTheSignalAreReported(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		script string
		code   int
		signal os.Signal
	}{
		{"exit 0", 0, nil},
		{"exit 3", 3, nil},
		{"kill -TERM $$", 128 + 15, syscall.SIGTERM},
		{"kill -KILL $$", 128 + 9, syscall.SIGKILL},
	} {
		g := start(t, context.Background(), sh(c.script), io.Discard)
		e := wait(t, g)
		if e.Code != c.code || e.Signal != c.signal {
			t.Errorf("%s: exit %+v, want code %d signal %v", c.script, e, c.code, c.signal)
		}
		g.Drain(guard)
	}
}

func TestACommandThatCannotStartSaysWhy(t *testing.T) {
	t.Parallel()
	_, err := Start(context.Background(), exec.Command("wilco-no-such-program"), nil)
	if !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "wilco-no-such-program") {
		t.Fatalf("a program not found: %v", err)
	}
	script := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Start(context.Background(), exec.Command(script), nil)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), script) {
		t.Fatalf("a file that is not executable: %v", err)
	}
	cmd := sh("true")
	cmd.Stdout = io.Discard
	if _, err := Start(context.Background(), cmd, nil); !errors.Is(err, ErrOutputSet) {
		t.Fatalf("a command whose output is set: %v", err)
	}
}

func TestKillGroupRefusesTheGroupsOfEveryone(t *testing.T) {
	t.Parallel()
	for _, pgid := range []int{0, 1, -1} {
		if err := KillGroup(pgid); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("KillGroup(%d): %v", pgid, err)
		}
	}
}

func TestKillGroupKillsAGroupStartedByAnother(t *testing.T) {
	t.Parallel()
	// A group started without Start: as a wilco that died left it.
	cmd := sh(`sleep 60 & wait`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	if err := KillGroup(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(guard)
	for !GroupGone(cmd.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatal("the group outlived KillGroup")
		}
		<-time.After(10 * time.Millisecond)
	}
}
