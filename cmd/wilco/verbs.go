package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"wilco/client"
	"wilco/wire"
)

// verb is one `wilco <verb>`.
type verb struct {
	name string
	// args is the synopsis after the verb's name.
	args    string
	summary string
	group   string
	run     func(ctx context.Context, c *cli, v *verb, args []string) int
}

// Groups of verbs, in the order help lists them.
var groups = []string{"setup", "tasks", "look", "act", "plans", "agents and messages", "the agent's side", "logs", "other"}

// verbs is the verb table. It is filled in init to let the
// help verb refer to it.
var verbs []*verb

func init() {
	verbs = []*verb{
		{name: "init", args: "[--force] [--dir DIR]", group: "setup", summary: "write wilco.yaml (verify command and installed agents detected) and .wilco/ with the admin token", run: cmdInit},
		{name: "config", args: "check [--config FILE]", group: "setup", summary: "validate wilco.yaml and print the effective configuration, defaults filled in", run: cmdConfig},
		{name: "serve", args: "[--addr HOST:PORT] [--config FILE] [--dir DIR] [--allow-remote] [--store URL] [--lease-ttl D] [--advertise URL] [--transport nats://…]", group: "setup", summary: "run the server in the foreground", run: cmdServe},

		{name: "run", args: `"<text>" [submit flags] [--config FILE]`, group: "tasks", summary: "submit and follow to the end (starts an in-process server if none answers); exit 0 only on verified success, 3 when no check ran", run: cmdRun},
		{name: "submit", args: `"<text>" [--constraint S]… [--non-goal S]… [--boundary S]… [--criteria S]… [--dry-run] [--agent A] [--id ID] [--package P] [--json]`, group: "tasks", summary: "queue a task", run: cmdSubmit},

		{name: "queue", args: "[--json]", group: "look", summary: "list the queued tasks in order", run: cmdQueue},
		{name: "status", args: "[ID] [--detail] [--state S] [--cluster] [--json]", group: "look", summary: "list the tasks, or show one", run: cmdStatus},
		{name: "transcript", args: "ID [--attempt N] [--full] [--json]", group: "look", summary: "an attempt's conversation with its agent: prompt, text, tool calls and results", run: cmdTranscript},
		{name: "web", args: "[--json]", group: "look", summary: "print a one-time link that logs a browser in to the page (wilco serve prints the first)", run: cmdWeb},
		{name: "watch", args: "[ID] [--after SEQ] [--json]", group: "look", summary: "follow the live event stream (one task's, or all); Ctrl-C stops", run: cmdWatch},

		{name: "cancel", args: "ID [--json]", group: "act", summary: "cancel a task (a queued one leaves no trace, unless made from an issue)", run: cmdCancel},
		{name: "clarify", args: "ID --answer S [--answer S]… [--json]", group: "act", summary: "answer the agent's questions about a task", run: cmdClarify},
		{name: "respond", args: `ID retry|skip|abort|fix ["<instruction>"] [--json]`, group: "act", summary: "answer an escalated or blocked task", run: cmdRespond},
		{name: "diff", args: "ID", group: "act", summary: "print a dry run's unified diff", run: cmdDiff},
		{name: "apply", args: "ID [--json]", group: "act", summary: "apply a dry run's diff and verify it", run: cmdApply},
		{name: "discard", args: "ID [--json]", group: "act", summary: "discard a dry run", run: cmdDiscard},
		{name: "resume", args: "ID [--json]", group: "act", summary: "start a new task from a stuck task's report", run: cmdResume},

		{name: "plan", args: "submit FILE [--id ID] [--json] | show ID [--json]", group: "plans", summary: "submit a plan of tasks with dependencies, or show one and its retry summary", run: cmdPlan},

		{name: "agents", args: "[--json] | add NAME --adapter A [flags] | token NAME | remove NAME | check [NAME] | show NAME | probe NAME", group: "agents and messages", summary: "list the agents and where the next task goes; register one; give one a new token; remove one; check the exec agents' CLIs; show one's context; ask one for its context", run: cmdAgents},
		{name: "send", args: `AGENT "<text>" [--type T] [--subject S] [--task ID] [--wait D] [--json]`, group: "agents and messages", summary: "send a message (a task delegation is tracked until acknowledged)", run: cmdSend},
		{name: "instruct", args: `AGENT "<text>" [--max-retries N] [--ack-contains S] [--ack-regex R] [--wait D] [--json]`, group: "agents and messages", summary: "queue an instruction, resent each dispatch cycle until acknowledged", run: cmdInstruct},
		{name: "ack", args: "ID [--json]", group: "agents and messages", summary: "acknowledge an instruction", run: cmdAck},
		{name: "instructions", args: "[--state S] [--agent A] [--json]", group: "agents and messages", summary: "list the instructions", run: cmdInstructions},
		{name: "attach", args: "AGENT [--task ID] [--print]", group: "agents and messages", summary: "open a tmux agent's session in this terminal (detach with C-b d)", run: cmdAttach},
		{name: "op", args: "OPERATION [PATH] --agent A [--agent B]… [--message M] [--timeout D] [--reminders D,D…] [--extension D] [--quorum Q] [--abort-on-timeout] [--detach] [--json] [-- COMMAND…] | log [ID] [--state S] [--agent A] [--limit N] [--json]", group: "agents and messages", summary: `ask the agents for their "ok", then perform it (hibernate, wake, restart, install-skill PATH, install-plugin PATH, maintenance -- COMMAND, or run the command); op log: the operation log`, run: cmdOp},

		{name: "inbox", args: "[--wait D] [--follow] [--transport nats://…] [--agent NAME] [--repository NAME] [--json]", group: "the agent's side", summary: "fetch the agent's messages (one dispatch cycle; WILCO_AGENT_TOKEN)", run: cmdInbox},
		{name: "ask", args: `SCOUT "<question>"|- [--timeout D] [--json]`, group: "the agent's side", summary: "ask a scout from inside a task and print its answer (WILCO_AGENT_TOKEN)", run: cmdAsk},
		{name: "reply", args: `"<text>"|- [--to ID] [--type T] [--data JSON] [--transport nats://…] [--agent NAME] [--json]`, group: "the agent's side", summary: "answer as the agent (WILCO_AGENT_TOKEN)", run: cmdReply},
		{name: "mcp", args: "", group: "the agent's side", summary: "serve wilco's MCP tools on stdin/stdout to the agent that runs it (ack, clarify, checkpoint, complete; WILCO_AGENT_TOKEN, WILCO_TASK_ID)", run: cmdMCP},

		{name: "logs", args: "[--task ID] [--agent A] [--follow] [--json]", group: "logs", summary: "the retry log, in the retry.log (or, with --json, retry.jsonl) form", run: cmdLogs},
		{name: "notify", args: "log [--state S] [--hook H] [--task ID] [--limit N] [--json]", group: "logs", summary: "the notifications to webhooks and the desktop, with their attempts, last status and last error", run: cmdNotify},
		{name: "stats", args: "[--json]", group: "logs", summary: "retry summary: first-attempt success, retries, escalations, failure types", run: cmdStats},

		{name: "demo", args: "", group: "other", summary: "a self-contained run on a sample repository with a scripted agent", run: func(ctx context.Context, c *cli, _ *verb, args []string) int {
			return runDemo(ctx, args, c.stdout, c.stderr)
		}},
		{name: "bench", args: "", group: "other", summary: "the delivery benchmark", run: func(ctx context.Context, c *cli, _ *verb, args []string) int {
			return runBench(ctx, args, c.stdout, c.stderr)
		}},
		{name: "version", args: "", group: "other", summary: "print the version (also: wilco --version)", run: cmdVersion},
		{name: "completion", args: "bash|zsh|fish", group: "other", summary: "print a shell completion script", run: cmdCompletion},
		{name: "help", args: "[VERB]", group: "other", summary: "this help, or a verb's", run: cmdHelp},
		// Not listed (no group): the demo's scripted agent.
		{name: "demo-agent", args: "", summary: "the demo's scripted agent (reads its prompt on stdin)", run: func(_ context.Context, c *cli, _ *verb, args []string) int {
			return runDemoAgent(args, c.stdin, c.stdout)
		}},
	}
}

func findVerb(name string) *verb {
	for _, v := range verbs {
		if v.name == name {
			return v
		}
	}
	return nil
}

func (c *cli) main(ctx context.Context, args []string) int {
	if len(args) == 0 {
		c.printUsage(c.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		c.printUsage(c.stdout)
		return exitOK
	case "-version", "--version":
		return cmdVersion(ctx, c, findVerb("version"), args[1:])
	}
	v := findVerb(name)
	if v == nil {
		fmt.Fprintf(c.stderr, "wilco: unknown verb %q\n", name)
		fmt.Fprintln(c.stderr, `usage: wilco <verb> [arguments]; "wilco help" lists the verbs`)
		return exitUsage
	}
	return v.run(ctx, c, v, args[1:])
}

func (c *cli) printUsage(w io.Writer) {
	fmt.Fprintln(w, "wilco delegates tasks to coding agents and proves every step.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: wilco <verb> [arguments]")
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, v := range verbs {
			if v.group == g {
				fmt.Fprintf(tw, "  %s\t%s\n", v.name, v.summary)
			}
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `"wilco <verb> --help" shows a verb's flags. Environment: WILCO_ADDR (default `+client.DefaultAddr+`),`)
	fmt.Fprintln(w, "WILCO_TOKEN (default: .wilco/token), WILCO_AGENT_TOKEN (the agent's side), WILCO_CONFIG.")
	fmt.Fprintln(w, "Exit codes: 0 success, 1 failure, 2 bad usage.")
}

func cmdHelp(_ context.Context, c *cli, v *verb, args []string) int {
	switch len(args) {
	case 0:
		c.printUsage(c.stdout)
		return exitOK
	case 1:
		if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			printVerbUsage(c.stdout, v, nil)
			return exitOK
		}
		target := findVerb(args[0])
		if target == nil {
			fmt.Fprintf(c.stderr, "wilco help: unknown verb %q\n", args[0])
			return exitUsage
		}
		// Every verb answers --help with its usage and flags.
		return target.run(context.Background(), c, target, []string{"--help"})
	}
	return c.usageError(v, nil, "too many arguments")
}

// flags returns the flag set of a verb; its errors are printed by parse.
func (c *cli) flags(v *verb) *flag.FlagSet {
	fs := flag.NewFlagSet("wilco "+v.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if c.onFlags != nil {
		c.onFlags(fs)
	}
	return fs
}

// printVerbUsage prints a verb's synopsis and flags.
func printVerbUsage(w io.Writer, v *verb, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: wilco %s %s\n", v.name, v.args)
	fmt.Fprintf(w, "\n%s.\n", upperFirst(v.summary))
	if fs == nil {
		return
	}
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if has {
		fmt.Fprintln(w, "\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// usageError prints a bad-usage message and the verb's synopsis; it
// returns exitUsage.
func (c *cli) usageError(v *verb, fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(c.stderr, "wilco %s: %s\n", v.name, fmt.Sprintf(format, args...))
	fmt.Fprintf(c.stderr, "usage: wilco %s %s\n", v.name, v.args)
	return exitUsage
}

// parse parses a verb's arguments: flags may come before, between or after
// the positional arguments; "--" ends the flags, and what follows it is
// returned as tail. It checks that there are from min to max positional
// arguments (max < 0: no limit). When it returns ok false, the verb returns
// code: the usage was printed (exit 0 for --help, 2 for an error).
func (c *cli) parse(v *verb, fs *flag.FlagSet, args []string, min, max int) (pos, tail []string, code int, ok bool) {
	head := args
	for i, a := range args {
		if a == "--" {
			head, tail = args[:i], args[i+1:]
			break
		}
	}
	for {
		if err := fs.Parse(head); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printVerbUsage(c.stdout, v, fs)
				return nil, nil, exitOK, false
			}
			return nil, nil, c.usageError(v, fs, "%v", err), false
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		head = rest[1:]
	}
	switch {
	case len(pos) < min:
		return nil, nil, c.usageError(v, fs, "missing arguments"), false
	case max >= 0 && len(pos) > max:
		return nil, nil, c.usageError(v, fs, "too many arguments: %s", strings.Join(pos[max:], " ")), false
	}
	return pos, tail, 0, true
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// intFlag is an int flag that knows whether it was given.
type intFlag struct {
	n   int
	set bool
}

func (f *intFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.Itoa(f.n)
}

func (f *intFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("not a number")
	}
	if n < 0 {
		return errors.New("must not be negative")
	}
	f.n, f.set = n, true
	return nil
}

// admin returns the admin client (WILCO_ADDR, WILCO_TOKEN or .wilco/token).
func (c *cli) admin() (*client.Client, error) {
	return client.FromEnviron(c.getenv, c.wd)
}

// agentClient returns the agent's client (WILCO_URL or WILCO_ADDR,
// WILCO_AGENT_TOKEN).
func (c *cli) agentClient() (*client.Client, error) {
	return client.AgentFromEnviron(c.getenv)
}

// fail prints an error the way every verb does — "wilco: <code>:
// <message>" for the server's errors — and returns exitFailure.
func (c *cli) fail(err error) int {
	var ae *client.APIError
	var te *client.TransportError
	switch {
	case errors.As(err, &ae) && ae.NoRoute():
		fmt.Fprintf(c.stderr, "wilco: %s: this server does not serve %s %s (it is older than this command, or that part of wilco is not built yet)\n", ae.Code, ae.Method, ae.Path)
	case errors.As(err, &ae):
		fmt.Fprintf(c.stderr, "wilco: %s: %s\n", ae.Code, ae.Message)
	case errors.As(err, &te):
		fmt.Fprintf(c.stderr, "wilco: %s: cannot reach wilco at %s (is \"wilco serve\" running? WILCO_ADDR says where): %v\n", wire.CodeUnavailable, te.Addr, te.Err)
	default:
		fmt.Fprintf(c.stderr, "wilco: %s\n", strings.TrimPrefix(err.Error(), "client: "))
	}
	return exitFailure
}

// printJSON prints v as indented JSON.
func (c *cli) printJSON(v any) int {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return c.fail(err)
	}
	return exitOK
}

// printList prints what a listing verb got: the API JSON {key: items}, a
// line on stderr when there is nothing, or a table of header and one row
// per item.
func printList[T any](c *cli, asJSON bool, key string, items []T, empty, header string, row func(T) string) int {
	if asJSON {
		return c.printJSON(map[string]any{key: nonNil(items)})
	}
	if len(items) == 0 {
		fmt.Fprintln(c.stderr, empty)
		return exitOK
	}
	tw := c.table()
	fmt.Fprintln(tw, header)
	for _, it := range items {
		fmt.Fprintln(tw, row(it))
	}
	tw.Flush()
	return exitOK
}

// table starts a table on stdout.
func (c *cli) table() *tabwriter.Writer {
	return tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
}

// orDash returns s, or "-" for nothing.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine flattens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if n > 0 && len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// readText returns the text argument, or stdin's content for "-".
func (c *cli) readText(arg string) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	b, err := io.ReadAll(c.stdin)
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	return strings.TrimRight(string(b), "\n"), nil
}
