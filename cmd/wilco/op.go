package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"wilco/client"
	"wilco/wire"
)

// opFlags are the flags of wilco op.
type opFlags struct {
	agents                       listFlag
	message, reminders, quorum   *string
	timeout, extension           *time.Duration
	abortOnTimeout, detach, json *bool
}

func addOpFlags(fs *flag.FlagSet) *opFlags {
	o := &opFlags{}
	fs.Var(&o.agents, "agent", "an agent that must answer \"ok\" (repeatable)")
	o.message = fs.String("message", "", "what the agents are told (default: the server's, naming the operation and the time allowed)")
	o.timeout = fs.Duration("timeout", 0, "how long to wait for the answers (default: the policy's, 120s)")
	o.reminders = fs.String("reminders", "", "comma-separated reminder offsets, such as 30s,60s,90s (default: the policy's)")
	o.extension = fs.Duration("extension", 0, "the one extension an agent gets by answering \"wait\" (default: the policy's, 60s)")
	o.quorum = fs.String("quorum", "", "how many must answer \"ok\": all, majority or a number (default: the policy's, all)")
	o.abortOnTimeout = fs.Bool("abort-on-timeout", false, "abort when the time runs out instead of proceeding")
	o.detach = fs.Bool("detach", false, "start the operation and return at once")
	o.json = fs.Bool("json", false, "print the API JSON of the final operation")
	return o
}

// request is the operation the arguments (the operation, and the PATH of
// what an install installs, relative to wd) and the flags ask for; its
// error says what is wrong with them.
func (o *opFlags) request(wd string, pos, command []string) (wire.StartOperation, error) {
	if len(o.agents) == 0 {
		return wire.StartOperation{}, errors.New("name at least one --agent")
	}
	install := pos[0] == "install-skill" || pos[0] == "install-plugin"
	switch {
	case install && len(pos) < 2:
		return wire.StartOperation{}, fmt.Errorf("%s needs the PATH of what it installs", pos[0])
	case !install && len(pos) > 1:
		return wire.StartOperation{}, fmt.Errorf("too many arguments: %s (only install-skill and install-plugin take a PATH)", pos[1])
	case pos[0] == "maintenance" && len(command) == 0:
		return wire.StartOperation{}, errors.New("maintenance needs a command: wilco op maintenance --agent A -- COMMAND…")
	}
	req := wire.StartOperation{Operation: pos[0], Agents: o.agents, Message: *o.message, Quorum: *o.quorum, Command: command,
		Timeout: wire.Duration(*o.timeout), Extension: wire.Duration(*o.extension)}
	if install {
		req.Target = filepath.Clean(pos[1])
		if !filepath.IsAbs(pos[1]) {
			req.Target = filepath.Join(wd, pos[1])
		}
	}
	if *o.reminders != "" {
		for _, s := range strings.Split(*o.reminders, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil {
				return wire.StartOperation{}, fmt.Errorf("--reminders: %v", err)
			}
			req.Reminders = append(req.Reminders, wire.Duration(d))
		}
	}
	if *o.abortOnTimeout {
		no := false
		req.ProceedOnTimeout = &no
	}
	return req, nil
}

func cmdOp(ctx context.Context, c *cli, v *verb, args []string) int {
	if len(args) > 0 && args[0] == "log" {
		return cmdOpLog(ctx, c, args[1:])
	}
	fs := c.flags(v)
	o := addOpFlags(fs)
	pos, command, code, ok := c.parse(v, fs, args, 1, 2)
	if !ok {
		return code
	}
	req, err := o.request(c.wd, pos, command)
	if err != nil {
		return c.usageError(v, fs, "%v", err)
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	op, err := cl.StartOperation(ctx, req)
	if err != nil {
		return c.fail(err)
	}
	if !*o.json {
		fmt.Fprintf(c.stdout, "%s %s: waiting for \"ok\" from %s\n", op.ID, op.Operation, strings.Join(o.agents, ", "))
	}
	if *o.detach {
		if *o.json {
			return c.printJSON(op)
		}
		return exitOK
	}
	op, err = c.followOperation(ctx, cl, op, !*o.json)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(c.stderr, "wilco: stopped watching %s; it goes on (wilco op does not cancel it)\n", op.ID)
			return exitFailure
		}
		return c.fail(err)
	}
	if *o.json {
		if code := c.printJSON(op); code != exitOK {
			return code
		}
	} else {
		c.printOperationOutcome(op)
	}
	if op.State != wire.OperationDone || (op.ExitCode != nil && *op.ExitCode != 0) {
		return exitFailure
	}
	return exitOK
}

// followOperation polls an operation until it ends, printing (when
// progress is set) each reminder and answer as it comes.
func (c *cli) followOperation(ctx context.Context, cl *client.Client, op *wire.Operation, progress bool) (*wire.Operation, error) {
	seen := map[string]string{}
	reminders := 0
	report := func(op *wire.Operation) {
		if !progress {
			return
		}
		if op.RemindersSent > reminders {
			fmt.Fprintf(c.stdout, "  reminders sent: %d\n", op.RemindersSent)
			reminders = op.RemindersSent
		}
		for _, a := range op.Agents {
			r := ""
			if a.Response != nil {
				r = *a.Response
			}
			if r != "" && seen[a.Name] != r {
				fmt.Fprintf(c.stdout, "  %s: %s\n", a.Name, r)
				seen[a.Name] = r
			}
		}
	}
	report(op)
	t := time.NewTicker(c.pollEvery)
	defer t.Stop()
	for !op.State.Terminal() {
		select {
		case <-ctx.Done():
			return op, ctx.Err()
		case <-t.C:
		}
		next, err := cl.Operation(ctx, op.ID)
		if err != nil {
			return op, err
		}
		op = next
		report(op)
	}
	return op, nil
}

func (c *cli) printOperationOutcome(op *wire.Operation) {
	var notes []string
	if op.AcknowledgmentReceived {
		notes = append(notes, "every agent answered ok")
	}
	if op.TimeoutOccurred {
		notes = append(notes, "timed out")
	}
	if op.ProceededAnyway {
		notes = append(notes, "proceeded anyway")
	}
	if op.Reason != "" {
		notes = append(notes, op.Reason)
	}
	if op.ExitCode != nil && op.Reason == "" {
		notes = append(notes, fmt.Sprintf("command exit %d", *op.ExitCode))
	}
	line := fmt.Sprintf("%s %s: %s", op.ID, op.Operation, op.State)
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, "; ") + ")"
	}
	fmt.Fprintln(c.stdout, line)
	for _, r := range op.Results {
		if r.Done {
			fmt.Fprintf(c.stdout, "  %s: %s\n", r.Agent, r.Action)
		} else {
			fmt.Fprintf(c.stdout, "  %s: FAILED: %s\n", r.Agent, strings.Join(nonEmpty(r.Error, r.Action), "; "))
		}
	}
	if op.Output != "" {
		fmt.Fprint(c.stdout, op.Output)
		if !strings.HasSuffix(op.Output, "\n") {
			fmt.Fprintln(c.stdout)
		}
	}
}

// cmdOpLog prints the operation log: the operations, newest first, or one
// operation's round step by step.
func cmdOpLog(ctx context.Context, c *cli, args []string) int {
	v := &verb{name: "op log", args: "[ID] [--state S] [--agent A] [--limit N] [--json]", summary: "the operation log: operations newest first, or one operation's round step by step"}
	fs := c.flags(v)
	state := fs.String("state", "", "only operations in this state (waiting, proceeding, done, cancelled, aborted, failed)")
	agent := fs.String("agent", "", "only operations on this agent")
	limit := fs.Int("limit", 0, "only the newest N (default all)")
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 0, 1)
	if !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	if len(pos) == 1 {
		op, err := cl.Operation(ctx, pos[0])
		if err != nil {
			return c.fail(err)
		}
		if *asJSON {
			return c.printJSON(op)
		}
		what := op.Operation
		if op.Target != "" {
			what += " " + op.Target
		}
		if len(op.Command) > 0 {
			what += " -- " + strings.Join(op.Command, " ")
		}
		names := make([]string, 0, len(op.Agents))
		for _, a := range op.Agents {
			names = append(names, a.Name)
		}
		fmt.Fprintf(c.stdout, "%s %s on %s: %s\n", op.ID, what, strings.Join(names, ", "), op.State)
		for _, e := range op.Log {
			who := ""
			if e.Agent != "" {
				who = e.Agent + ": "
			}
			fmt.Fprintf(c.stdout, "  %s  %s%s\n", e.Time.Local().Format("15:04:05"), who, e.Text)
		}
		return exitOK
	}
	ops, err := cl.Operations(ctx, *state, *agent, *limit)
	if err != nil {
		return c.fail(err)
	}
	slices.Reverse(ops) // the server lists them oldest first
	return printList(c, *asJSON, "operations", ops, "no operations", "ID\tOPERATION\tAGENTS\tSTATE\tANSWERS\tCREATED\tRESULT", func(o wire.Operation) string {
		var names, answers []string
		for _, a := range o.Agents {
			names = append(names, a.Name)
			r := "-"
			if a.Response != nil {
				r = *a.Response
			}
			answers = append(answers, a.Name+"="+r)
		}
		result := o.Reason
		if result == "" {
			result = "-"
		}
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", o.ID, o.Operation, strings.Join(names, ","), o.State, strings.Join(answers, " "),
			o.CreatedAt.Local().Format("2006-01-02 15:04:05"), result)
	})
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
