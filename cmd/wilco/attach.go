package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"wilco/wire"
)

// cmdAttach opens a tmux agent's session in this terminal: the user sees
// the agent's pane, answers a permission question, types to it.
func cmdAttach(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	printOnly := fs.Bool("print", false, "print the tmux command that attaches instead of running it")
	task := fs.String("task", "", "the session the agent works this task worked in parallel in")
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	a, err := cl.Agent(ctx, pos[0])
	if err != nil {
		return c.fail(err)
	}
	if a.Pane == nil || len(a.Pane.Attach) == 0 {
		return c.fail(fmt.Errorf("%s is a %s agent: only a tmux agent has a session to attach to", a.Name, a.Adapter))
	}
	if *task != "" {
		i := slices.IndexFunc(a.Pane.Instances, func(p wire.PaneOf) bool { return p.Task == *task })
		if i < 0 {
			return c.fail(fmt.Errorf("%s works on task %s in no session of its own: wilco makes it with the task's first prompt (a task worked in parallel), and ends it with the task", a.Name, *task))
		}
		p := a.Pane.Instances[i]
		a.Pane = &wire.Pane{State: p.State, Session: p.Session, Attach: p.Attach, Working: p.Working}
	}
	if *printOnly {
		fmt.Fprintln(c.stdout, shellJoin(a.Pane.Attach))
		return exitOK
	}
	switch a.Pane.State {
	case "not started":
		return c.fail(fmt.Errorf("%s's session %s is not started yet: wilco starts it with the agent's first prompt", a.Name, a.Pane.Session))
	case "hibernating":
		fmt.Fprintf(c.stderr, "wilco: %s is hibernating: its pane shows no agent until an operation wakes it (wilco op wake --agent %s)\n", a.Name, a.Name)
	}
	fmt.Fprintf(c.stderr, "wilco: attaching to %s (session %s, pane %s); detach with C-b d\n", a.Name, a.Pane.Session, a.Pane.State)
	cmd := exec.CommandContext(ctx, a.Pane.Attach[0], a.Pane.Attach[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Inside tmux already, attach all the same (a nested client).
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMUX=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return c.fail(fmt.Errorf("attach: %w", err))
	}
	return exitOK
}

// shellJoin quotes a command line for a POSIX shell.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@,+%") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
