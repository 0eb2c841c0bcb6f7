package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	execadapter "wilco/adapter/exec"
	"wilco/client"
	"wilco/config"
	"wilco/wire"
)

func cmdAgents(ctx context.Context, c *cli, v *verb, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "add":
			return cmdAgentsAdd(ctx, c, v, args[1:])
		case "token":
			return cmdAgentsToken(ctx, c, v, args[1:])
		case "remove":
			return cmdAgentsRemove(ctx, c, v, args[1:])
		case "check":
			return cmdAgentsCheck(ctx, c, v, args[1:])
		case "show":
			return cmdAgentsShow(ctx, c, v, args[1:])
		case "probe":
			return cmdAgentsProbe(ctx, c, v, args[1:])
		}
	}
	fs := c.flags(v)
	asJSON := fs.Bool("json", false, "print the API JSON")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	agents, next, err := cl.AgentsAndNext(ctx)
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(map[string]any{"agents": nonNil(agents), "next": next})
	}
	code := printList(c, false, "agents", agents, "no agents", "NAME\tADAPTER\tSTATUS\tCAPABILITIES\tWAITING\tUNACKED", func(a wire.Agent) string {
		status := string(a.Status)
		if a.Removed {
			status = "removed"
		}
		if a.Pane != nil {
			status += ", pane " + string(a.Pane.State)
			for _, i := range a.Pane.Instances {
				status += ", " + i.Task + "'s pane " + string(i.State)
			}
		}
		return fmt.Sprintf("%s\t%s\t%s\t%s\t%d\t%d", a.Name, a.Adapter, status, orDash(strings.Join(a.Capabilities, ",")), a.Waiting, a.Unacknowledged)
	})
	if next.Why != "" {
		if next.Agent != "" {
			fmt.Fprintf(c.stdout, "\nnext task (naming no agent) → %s: %s\n", next.Agent, next.Why)
		} else {
			fmt.Fprintf(c.stdout, "\nnext task: %s\n", next.Why)
		}
	}
	return code
}

// agentCheck is what `wilco agents check` found of one agent.
type agentCheck struct {
	Agent   string `json:"agent"`
	Adapter string `json:"adapter"`
	Preset  string `json:"preset,omitempty"`
	execadapter.ProbeResult
	Skipped string `json:"skipped,omitempty"`
}

// printAgentCheck says how an agent's probe turn went, and what to do
// when it failed.
func (c *cli) printAgentCheck(r agentCheck) {
	head := r.Agent
	if r.Preset != "" {
		head += " (" + r.Preset + ")"
	}
	if r.Skipped != "" {
		fmt.Fprintf(c.stdout, "%s: not checked: %s\n", head, r.Skipped)
		return
	}
	prog := orDash(r.Program)
	if r.Version != "" {
		prog += " " + r.Version
	}
	if r.Newer {
		prog += fmt.Sprintf(" (newer than %s, the version its preset is known to work with)", execadapter.PresetVersions[r.Preset])
	}
	if r.OK {
		fmt.Fprintf(c.stdout, "%s: ok — %s answered the probe with its ACK in %s\n", head, prog, r.Duration.Round(time.Millisecond))
		return
	}
	fmt.Fprintf(c.stdout, "%s: FAILED — %s\n  %s\n", head, prog, r.Problem)
	if r.Fix != "" {
		fmt.Fprintf(c.stdout, "  to fix: %s\n", r.Fix)
	}
	if strings.TrimSpace(r.Output) != "" {
		fmt.Fprintf(c.stdout, "  its output (exit status %d):\n%s\n", r.ExitCode, indent(indent(r.Output)))
	}
}

func cmdAgentsCheck(ctx context.Context, c *cli, parent *verb, args []string) int {
	v := &verb{name: "agents check", args: "[NAME] [--timeout D] [--config FILE] [--json]", summary: "run one probe turn of each exec agent (or NAME): the ACK on a trivial prompt; say what is wrong"}
	fs := c.flags(v)
	timeout := fs.Duration("timeout", 60*time.Second, "how long one probe may take")
	cfgFlag := fs.String("config", "", "the configuration (default $WILCO_CONFIG, else wilco.yaml)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	pos, _, code, ok := c.parse(v, fs, args, 0, 1)
	if !ok {
		return code
	}
	cfg, err := config.Load(c.configPath(*cfgFlag))
	if err != nil {
		return c.fail(err)
	}
	var results []agentCheck
	failed := false
	for _, a := range cfg.Agents {
		if len(pos) == 1 && a.Name != pos[0] {
			continue
		}
		r := agentCheck{Agent: a.Name, Adapter: a.Adapter, Preset: a.Preset}
		if a.Adapter != "exec" {
			r.Skipped = "a " + a.Adapter + " agent runs on its own: wilco status and wilco agents say when it was last seen"
			results = append(results, r)
			continue
		}
		if !*asJSON {
			fmt.Fprintf(c.stderr, "checking %s…\n", a.Name)
		}
		r.ProbeResult = execadapter.Probe(ctx, execadapter.AgentConfig{Name: a.Name, Preset: a.Preset, Command: a.Command, Prompt: a.Prompt,
			Handshake: a.Handshake, Env: a.Env}, c.wd, *timeout)
		failed = failed || !r.OK
		results = append(results, r)
	}
	if len(pos) == 1 && len(results) == 0 {
		return c.fail(fmt.Errorf("no agent %q in %s", pos[0], c.configPath(*cfgFlag)))
	}
	if *asJSON {
		if code := c.printJSON(map[string]any{"agents": results}); code != exitOK {
			return code
		}
	} else {
		for _, r := range results {
			c.printAgentCheck(r)
		}
	}
	if failed {
		return exitFailure
	}
	return exitOK
}

func cmdAgentsRemove(ctx context.Context, c *cli, parent *verb, args []string) int {
	v := &verb{name: "agents remove", args: "NAME [--json]", summary: "take an agent out of service: no more work, its token refused, its task retried by another agent"}
	return oneNamed(ctx, c, v, args, (*client.Client).RemoveAgent, func(a *wire.Agent, _ string) int {
		fmt.Fprintf(c.stdout, "removed %s: it gets no more work and its token is refused\n", a.Name)
		if a.FromConfig {
			fmt.Fprintf(c.stderr, "wilco: %s is still in wilco.yaml: remove it there too, or it comes back at the next start\n", a.Name)
		}
		return exitOK
	})
}

func cmdAgentsAdd(ctx context.Context, c *cli, parent *verb, args []string) int {
	v := &verb{name: "agents add", args: "NAME --adapter exec|mailbox|tmux [--capability C]… [--preset P] [--json] [-- COMMAND…]", summary: "register an agent and print its token (shown once)"}
	fs := c.flags(v)
	adapter := fs.String("adapter", "mailbox", "exec, mailbox or tmux")
	preset := fs.String("preset", "", "exec only: claude-code, codex, gemini, aider or opencode")
	var caps listFlag
	fs.Var(&caps, "capability", "a capability of the agent (repeatable)")
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, command, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	out, err := cl.CreateAgent(ctx, wire.CreateAgent{Name: pos[0], Adapter: wire.Adapter(*adapter), Preset: wire.Preset(*preset), Capabilities: caps, Command: command})
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(out)
	}
	fmt.Fprintf(c.stdout, "registered %s (%s)\n", out.Agent.Name, out.Agent.Adapter)
	fmt.Fprintf(c.stdout, "token: %s\n", out.Token)
	fmt.Fprintln(c.stderr, "the token is shown once: give it to the agent as WILCO_AGENT_TOKEN")
	return exitOK
}

func cmdAgentsToken(ctx context.Context, c *cli, parent *verb, args []string) int {
	v := &verb{name: "agents token", args: "NAME [--json]", summary: "give an agent a new token; the old one stops working"}
	fs := c.flags(v)
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	tok, err := cl.RotateAgentToken(ctx, pos[0])
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(map[string]string{"token": tok})
	}
	fmt.Fprintln(c.stdout, tok)
	return exitOK
}

func cmdSend(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	typ := fs.String("type", "", "the message type (task_delegation, conversation…); default: classified by the server")
	subject := fs.String("subject", "", "the subject")
	task := fs.String("task", "", "the task id the message is about")
	wait := fs.Duration("wait", 0, "wait up to this long for the acknowledgment; exit 1 unless acknowledged")
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 2, 2)
	if !ok {
		return code
	}
	text, err := c.readText(pos[1])
	if err != nil {
		return c.fail(err)
	}
	if strings.TrimSpace(text) == "" {
		return c.usageError(v, fs, "the message is empty")
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	m, err := cl.Send(ctx, wire.SendMessage{To: pos[0], Type: wire.MessageType(*typ), Subject: *subject, Body: text, TaskID: *task})
	if err != nil {
		return c.fail(err)
	}
	if *wait > 0 {
		m, err = waitEnded(ctx, c, *wait, m, func(m *wire.Message) bool { return m.State.Terminal() },
			func(ctx context.Context) (*wire.Message, error) { return cl.Message(ctx, m.ID) })
		if err != nil {
			return c.fail(err)
		}
	}
	if *asJSON {
		if code := c.printJSON(m); code != exitOK {
			return code
		}
	} else {
		fmt.Fprintf(c.stdout, "%s to %s: %s, %s (attempt %d)\n", m.ID, m.To, m.Type, m.State, m.Attempts)
	}
	if *wait > 0 && m.State != wire.DeliveryAcknowledged {
		fmt.Fprintf(c.stderr, "wilco: %s was not acknowledged: %s%s\n", m.ID, m.State, reasonSuffix(m.Reason))
		return exitFailure
	}
	return exitOK
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

// waitEnded polls get every c.pollEvery until ended(v) or wait passes, and
// returns the last state seen (a failed poll after wait passed is not an
// error: the caller reports what it had).
func waitEnded[T any](ctx context.Context, c *cli, wait time.Duration, v T, ended func(T) bool, get func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	t := time.NewTicker(c.pollEvery)
	defer t.Stop()
	for !ended(v) {
		select {
		case <-ctx.Done():
			return v, nil
		case <-t.C:
		}
		next, err := get(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return v, nil
			}
			var zero T
			return zero, err
		}
		v = next
	}
	return v, nil
}

func cmdInstruct(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	var maxRetries intFlag
	fs.Var(&maxRetries, "max-retries", "resend at most this many times (default: the policy's, 3)")
	contains := fs.String("ack-contains", "", "acknowledge when the agent's reply contains this text")
	regex := fs.String("ack-regex", "", "acknowledge when the agent's reply matches this regular expression")
	wait := fs.Duration("wait", 0, "wait up to this long for the acknowledgment; exit 1 unless acknowledged")
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 2, 2)
	if !ok {
		return code
	}
	text, err := c.readText(pos[1])
	if err != nil {
		return c.fail(err)
	}
	if strings.TrimSpace(text) == "" {
		return c.usageError(v, fs, "the instruction is empty")
	}
	req := wire.CreateInstruction{Agent: pos[0], Content: text}
	if maxRetries.set {
		req.MaxRetries = &maxRetries.n
	}
	if *contains != "" || *regex != "" {
		req.AckWhen = &wire.Matcher{Contains: *contains, Regex: *regex}
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	in, err := cl.Instruct(ctx, req)
	if err != nil {
		return c.fail(err)
	}
	if *wait > 0 {
		in, err = waitEnded(ctx, c, *wait, in, func(in *wire.Instruction) bool { return in.State.Terminal() },
			func(ctx context.Context) (*wire.Instruction, error) { return cl.Instruction(ctx, in.ID) })
		if err != nil {
			return c.fail(err)
		}
	}
	if *asJSON {
		if code := c.printJSON(in); code != exitOK {
			return code
		}
	} else {
		fmt.Fprintf(c.stdout, "%s to %s: %s (retries %d/%d)\n", in.ID, in.Agent, in.State, in.RetryCount, in.MaxRetries)
	}
	if *wait > 0 && in.State != wire.DeliveryAcknowledged {
		fmt.Fprintf(c.stderr, "wilco: %s was not acknowledged: %s%s\n", in.ID, in.State, reasonSuffix(in.Reason))
		return exitFailure
	}
	return exitOK
}

func cmdAck(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	in, err := cl.Acknowledge(ctx, pos[0])
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(in)
	}
	fmt.Fprintf(c.stdout, "%s: %s\n", in.ID, in.State)
	return exitOK
}

var instructionStates = []string{string(wire.DeliveryPending), string(wire.DeliverySent), string(wire.DeliveryAcknowledged),
	string(wire.DeliveryFailed), string(wire.DeliveryCancelled)}

func cmdInstructions(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	state := fs.String("state", "", "only this state: "+strings.Join(instructionStates, ", "))
	agent := fs.String("agent", "", "only this agent's")
	asJSON := fs.Bool("json", false, "print the API JSON")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	if *state != "" && !slices.Contains(instructionStates, *state) {
		return c.usageError(v, fs, "--state: one of %s, got %q", strings.Join(instructionStates, ", "), *state)
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	list, err := cl.Instructions(ctx, client.InstructionFilter{State: *state, Agent: *agent})
	if err != nil {
		return c.fail(err)
	}
	return printList(c, *asJSON, "instructions", list, "no instructions", "ID\tAGENT\tSTATE\tRETRIES\tCONTENT", func(in wire.Instruction) string {
		return fmt.Sprintf("%s\t%s\t%s\t%d/%d\t%s", in.ID, in.Agent, in.State, in.RetryCount, in.MaxRetries, oneLine(in.Content, 60))
	})
}

// nonNil makes a nil list print as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func cmdAgentsShow(ctx context.Context, c *cli, parent *verb, args []string) int {
	v := &verb{name: "agents show", args: "NAME [--json]", summary: "one agent: its adapter, status, role, and what its context probe learned"}
	return oneNamed(ctx, c, v, args, (*client.Client).Agent, func(a *wire.Agent, _ string) int {
		fmt.Fprintf(c.stdout, "%s: %s, %s", a.Name, a.Adapter, a.Status)
		if a.Role != "" {
			fmt.Fprintf(c.stdout, ", role %s", a.Role)
		}
		fmt.Fprintf(c.stdout, "\ncapabilities: %s\n", orDash(strings.Join(a.Capabilities, ", ")))
		if a.Context == nil {
			fmt.Fprintf(c.stdout, "context: not probed yet (wilco agents probe %s)\n", a.Name)
			return exitOK
		}
		fmt.Fprintf(c.stdout, "context (probed %s):\n  os: %s\n  cli: %s\n", a.Context.At.Local().Format(time.RFC3339), orDash(a.Context.OS), orDash(a.Context.CLI))
		for _, t := range slices.Sorted(maps.Keys(a.Context.Tools)) {
			fmt.Fprintf(c.stdout, "  tool %s: %s\n", t, a.Context.Tools[t])
		}
		return exitOK
	})
}

func cmdAgentsProbe(ctx context.Context, c *cli, parent *verb, args []string) int {
	v := &verb{name: "agents probe", args: "NAME [--json]", summary: "ask an agent for its context (OS, CLI version, tools); wilco agents show prints the answer"}
	return oneNamed(ctx, c, v, args, (*client.Client).ProbeAgent, func(m *wire.Message, name string) int {
		fmt.Fprintf(c.stdout, "asked %s for its context (%s); wilco agents show %s prints the answer\n", name, m.ID, name)
		return exitOK
	})
}

// oneNamed runs a verb whose one argument names what it reads or acts on,
// with --json as its only flag: get does it with the admin client, and the
// result is printed as the API's JSON with --json, else by text (given
// the name too).
func oneNamed[T any](ctx context.Context, c *cli, v *verb, args []string,
	get func(*client.Client, context.Context, string) (T, error), text func(T, string) int) int {
	fs := c.flags(v)
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	x, err := get(cl, ctx, pos[0])
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(x)
	}
	return text(x, pos[0])
}
