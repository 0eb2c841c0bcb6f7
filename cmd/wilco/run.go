package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"wilco/client"
	"wilco/wire"
)

// healthWait bounds the check that a server answers before run starts one.
const healthWait = 2 * time.Second

func cmdRun(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	sf := addSubmitFlags(fs)
	cfg := fs.String("config", "", "the configuration for an in-process server (default $WILCO_CONFIG, else wilco.yaml)")
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	text, err := c.readText(pos[0])
	if err != nil {
		return c.fail(err)
	}
	if strings.TrimSpace(text) == "" {
		return c.usageError(v, fs, "the task's description is empty")
	}
	if err := sf.check(); err != nil {
		return c.usageError(v, fs, "%s", err)
	}
	cl, err := c.admin()
	switch {
	case errors.Is(err, client.ErrNoToken):
		// Without a token, only a server started here can be used.
		if answers(ctx, client.New(client.ResolveAddr(c.getenv, c.wd), "")) {
			return c.fail(err)
		}
	case err != nil:
		return c.fail(err)
	}
	if cl == nil || !answers(ctx, cl) {
		// No server answers: start one in this process (it makes the token
		// if there is none).
		var stop func()
		cl, stop, err = c.startInProcess(ctx, *cfg)
		if err != nil {
			return c.fail(fmt.Errorf("no server answers and none could be started here: %w", err))
		}
		defer stop()
		fmt.Fprintf(c.stderr, "wilco: no server answered; serving in this process at %s until the task ends\n", cl.Addr())
	}
	t, err := cl.Submit(ctx, sf.request(text))
	if err != nil {
		return c.fail(err)
	}
	line := fmt.Sprintf("%s %s", t.ID, t.State)
	if t.Position != nil && *t.Position > 1 {
		line += fmt.Sprintf(" (position %d)", *t.Position)
	}
	fmt.Fprintln(c.stdout, line)

	w := newWatcher(c, t.ID)
	w.untilUser = true
	view, err := c.follow(ctx, cl, w, 0, true)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(c.stderr, "wilco: stopped following %s; it goes on where a server runs (wilco watch %s)\n", t.ID, t.ID)
			return exitFailure
		}
		return c.fail(err)
	}
	final, err := cl.Task(ctx, t.ID)
	if err != nil {
		final = nil
	}
	var state wire.TaskState
	switch {
	case final != nil:
		state = final.State
		c.printOutcome(final)
	case view != nil:
		state = view.State
	}
	if state == wire.TaskUnverified {
		return exitUnverified
	}
	if state != wire.TaskSuccess {
		return exitFailure
	}
	return exitOK
}

// answers reports whether a server answers at the client's address.
func answers(ctx context.Context, cl *client.Client) bool {
	ctx, cancel := context.WithTimeout(ctx, healthWait)
	defer cancel()
	_, err := cl.Health(ctx)
	var te *client.TransportError
	return !errors.As(err, &te) && !errors.Is(err, context.DeadlineExceeded)
}

// printOutcome says how a task ended and what to do next.
func (c *cli) printOutcome(t *wire.Task) {
	switch t.State {
	case wire.TaskSuccess:
		if s := summaryText(t.Summary); s != "" {
			fmt.Fprintf(c.stdout, "\n%s\n", s)
		}
	case wire.TaskUnverified:
		if s := summaryText(t.Summary); s != "" {
			fmt.Fprintf(c.stdout, "\n%s\n", s)
		}
		fmt.Fprintf(c.stdout, "\n%s is UNVERIFIED: the agent finished, but no verify step is configured, so nothing checked its work.\n"+
			"Add your tests to wilco.yaml, for example:\n\n  verify:\n    steps:\n      - {name: test, run: \"go test ./...\"}\n\nthen check the change yourself (git diff).\n", t.ID)
	case wire.TaskProposed:
		fmt.Fprintf(c.stdout, "\n%s proposes a diff: wilco diff %s, then wilco apply %s or wilco discard %s\n", t.ID, t.ID, t.ID, t.ID)
	case wire.TaskStuck:
		if s := reportText(t.StuckReport); s != "" {
			fmt.Fprintf(c.stdout, "\nstuck report:\n%s\n", indent(s))
		}
		fmt.Fprintf(c.stdout, "\n%s is stuck: wilco resume %s starts again from the report\n", t.ID, t.ID)
	case wire.TaskEscalated, wire.TaskBlocked:
		if s := escalationText(t.Escalation); s != "" && t.State == wire.TaskEscalated {
			fmt.Fprintf(c.stdout, "\n%s\n", indent(s))
		}
		if t.State == wire.TaskBlocked {
			fmt.Fprintf(c.stdout, "\n%s is blocked: %s\n", t.ID, orDash(t.BlockedBy))
		}
		fmt.Fprintf(c.stdout, "\n%s needs you: wilco respond %s retry|skip|abort|fix \"<instruction>\" (with wilco serve running)\n", t.ID, t.ID)
	case wire.TaskClarifying:
		fmt.Fprintf(c.stdout, "\n%s has questions: wilco clarify %s --answer …\n", t.ID, t.ID)
	}
}
