package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"wilco/client"
	"wilco/wire"
)

// submitFlags are the flags of submit and run.
type submitFlags struct {
	constraints, nonGoals, boundaries, criteria listFlag
	packages                                    listFlag
	dryRun, keepWorktree                        *bool
	agent, id, land                             *string
}

func addSubmitFlags(fs *flag.FlagSet) *submitFlags {
	s := &submitFlags{}
	fs.Var(&s.constraints, "constraint", "what must be preserved (repeatable)")
	fs.Var(&s.nonGoals, "non-goal", "what must not be changed (repeatable)")
	fs.Var(&s.boundaries, "boundary", "a file or module out of scope (repeatable)")
	fs.Var(&s.criteria, "criteria", "an acceptance criterion (repeatable)")
	s.dryRun = fs.Bool("dry-run", false, "work in a throw-away worktree and propose a diff instead")
	s.agent = fs.String("agent", "", "the agent to delegate to (default: the server chooses)")
	s.id = fs.String("id", "", "the task id (default T-<n>)")
	fs.Var(&s.packages, "package", "the monorepo package (a folder) the task is scoped to (default: package in wilco.yaml)")
	s.land = fs.String("land", "", "how the verified change lands: commit (the task's own changes committed in the checkout) or none (left uncommitted); with parallel > 1, merge, rebase, squash or none (default: land.how in wilco.yaml)")
	s.keepWorktree = fs.Bool("keep-worktree", false, "with parallel > 1: keep the task's worktree and branch when it ends")
	return s
}

// check refuses what no server would take: a task scoped to two packages.
func (s *submitFlags) check() error {
	if len(s.packages) > 1 {
		return fmt.Errorf("--package is given %d times: a task is scoped to one package; a change that needs two packages must be split into tasks, one per package (a plan: wilco plan submit)", len(s.packages))
	}
	return nil
}

func (s *submitFlags) request(text string) wire.SubmitTask {
	r := wire.SubmitTask{Description: text, Constraints: s.constraints, NonGoals: s.nonGoals, Boundaries: s.boundaries,
		AcceptanceCriteria: s.criteria, DryRun: *s.dryRun, Agent: *s.agent, ID: *s.id, Land: wire.LandHow(*s.land), KeepWorktree: *s.keepWorktree}
	if len(s.packages) == 1 {
		r.Package = s.packages[0]
	}
	return r
}

func cmdSubmit(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	sf := addSubmitFlags(fs)
	asJSON := fs.Bool("json", false, "print the API JSON")
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
	if err != nil {
		return c.fail(err)
	}
	t, err := cl.Submit(ctx, sf.request(text))
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(t)
	}
	line := fmt.Sprintf("%s %s", t.ID, t.State)
	if t.Position != nil {
		line += fmt.Sprintf(" (position %d)", *t.Position)
	}
	fmt.Fprintln(c.stdout, line)
	return exitOK
}

func cmdQueue(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	asJSON := fs.Bool("json", false, "print the API JSON")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	q, err := cl.QueueView(ctx)
	if err != nil {
		return c.fail(err)
	}
	if !*asJSON && q.Slots > 1 {
		fmt.Fprintf(c.stdout, "slots: %d of %d held\n", len(q.Working), q.Slots)
		if len(q.Working) > 0 {
			tw := c.table()
			fmt.Fprintln(tw, "ID\tSTATE\tAGENT\tBRANCH\tWORKTREE")
			for _, s := range q.Working {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, stateWithPhase(s.State, phaseOf(s.Phase)), orDash(s.Agent), orDash(s.Branch), orDash(s.Worktree))
			}
			tw.Flush()
		}
		if len(q.Landing) > 0 {
			fmt.Fprintln(c.stdout, "\nlanding queue:")
			tw := c.table()
			fmt.Fprintln(tw, "POS\tID\tDESCRIPTION")
			for _, e := range q.Landing {
				fmt.Fprintf(tw, "%d\t%s\t%s\n", e.Position, e.ID, oneLine(e.Description, 70))
			}
			tw.Flush()
		}
		fmt.Fprintln(c.stdout)
	}
	if *asJSON && q.Slots > 1 {
		return c.printJSON(q)
	}
	return printList(c, *asJSON, "tasks", q.Tasks, "the queue is empty", "POS\tID\tDESCRIPTION", func(e wire.QueueEntry) string {
		return fmt.Sprintf("%d\t%s\t%s", e.Position, e.ID, oneLine(e.Description, 70))
	})
}

var taskStates = wire.TaskState("").Values()

func cmdStatus(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	detail := fs.Bool("detail", false, "with ID: every failure in full, and the questions asked of scouts with their answers")
	state := fs.String("state", "", "without ID: only tasks in this state")
	asJSON := fs.Bool("json", false, "print the API JSON")
	cluster := fs.Bool("cluster", false, "the nodes of a PostgreSQL store and the repositories' leases")
	pos, _, code, ok := c.parse(v, fs, args, 0, 1)
	if !ok {
		return code
	}
	if *cluster {
		return c.printCluster(ctx, *asJSON)
	}
	if *state != "" && !slices.Contains(taskStates, *state) {
		return c.usageError(v, fs, "--state: one of %s, got %q", strings.Join(taskStates, ", "), *state)
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	if len(pos) == 1 {
		t, err := cl.Task(ctx, pos[0])
		if err != nil {
			return c.fail(err)
		}
		if *asJSON {
			return c.printJSON(t)
		}
		c.printTask(t, *detail)
		return exitOK
	}
	tasks, err := cl.Tasks(ctx, *state)
	if err != nil {
		return c.fail(err)
	}
	return printList(c, *asJSON, "tasks", tasks, "no tasks", "ID\tSTATE\tAGENT\tATTEMPT\tMILESTONE\tDESCRIPTION", func(t wire.Task) string {
		return fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%s", t.ID, stateWithPhase(t.State, phaseOf(t.Phase)), orDash(t.Agent), t.Attempt, orDash(oneLine(t.Milestone, 40)), oneLine(t.Description, 50))
	})
}

func stateWithPhase(state wire.TaskState, phase wire.Phase) string {
	if phase != "" && state == wire.TaskRunning {
		return string(state) + "/" + string(phase)
	}
	return string(state)
}

// phaseOf is a task's phase, "" when it has none.
func phaseOf(p *wire.Phase) wire.Phase {
	if p == nil {
		return ""
	}
	return *p
}

// printFailures prints a task's failures, a line each; detail adds what
// each record holds.
func (c *cli) printFailures(failures []wire.FailureRecord, detail bool) {
	w := c.stdout
	for _, f := range failures {
		line := fmt.Sprintf("attempt %d: %s", f.Attempt, f.FailureType)
		if f.RunID != "" {
			line += " (run " + f.RunID + ")"
		}
		if msg := failureMessage(f); msg != "" && !detail {
			line += ": " + oneLine(msg, 80)
		}
		fmt.Fprintf(w, "  failure  %s\n", line)
		if !detail {
			continue
		}
		ind := func(k, val string) {
			if val != "" {
				fmt.Fprintf(w, "    %-17s %s\n", k+":", val)
			}
		}
		ind("time", fmtTime(&f.Timestamp, c.loc))
		if vr := f.ExecutorOutput.Verification; vr != nil {
			ind("command", fmt.Sprintf("%s (exit %d)", vr.Command, vr.ExitCode))
			ind("output", vr.OutputSummary)
		}
		ind("error", f.ExecutorOutput.Error)
		ind("files modified", strings.Join(f.ExecutorOutput.FilesModified, ", "))
		ind("root cause guess", f.RootCauseGuess)
		ind("suggested fix", f.SuggestedFix)
	}
}

// printLanding prints how a task lands: the way, its branch and
// worktree, its pull request, its place in the landing queue, its commit.
func printLanding(t *wire.Task, kv func(k, val string)) {
	switch t.Land {
	case wire.LandCommit:
		kv("land", "commit: once verified, its own changes are committed")
	case wire.LandMerge, wire.LandRebase, wire.LandSquash:
		kv("land", string(t.Land)+": once verified, committed on its branch, then landed on the target")
	case wire.LandPR:
		kv("land", "pr: once verified, committed on its branch, pushed, and a pull request opened")
	}
	if pr := t.PullRequest; pr != nil {
		kv("pull request", strings.TrimSpace(fmt.Sprintf("#%d %s", pr.Number, pr.URL)))
		kv("checks", fmt.Sprintf("%d of %d ended", pr.ChecksDone, pr.Checks))
	}
	kv("branch", t.Branch)
	kv("worktree", t.Worktree)
	if t.LandPosition > 0 {
		kv("landing position", fmt.Sprint(t.LandPosition))
	}
	kv("landed commit", t.LandedCommit)
}

// printTask prints one task for a human; detail adds each failure in full
// and each question asked of a scout.
func (c *cli) printTask(t *wire.Task, detail bool) {
	w := c.stdout
	fmt.Fprintf(w, "%s  %s", t.ID, stateWithPhase(t.State, phaseOf(t.Phase)))
	if t.DryRun {
		fmt.Fprint(w, "  (dry run)")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %s\n", oneLine(t.Description, 0))
	kv := func(k, val string) {
		if val != "" {
			fmt.Fprintf(w, "  %-21s %s\n", k+":", val)
		}
	}
	list := func(k string, items []string) {
		if len(items) > 0 {
			kv(k, strings.Join(items, "; "))
		}
	}
	list("constraints", t.Constraints)
	list("non-goals", t.NonGoals)
	list("boundaries", t.Boundaries)
	list("acceptance criteria", t.AcceptanceCriteria)
	kv("package", t.Package)
	printLanding(t, kv)
	kv("agent", t.Agent)
	if t.Position != nil {
		kv("queue position", fmt.Sprint(*t.Position))
	}
	kv("milestone", t.Milestone)
	kv("blocked", t.BlockedBy)
	if t.Attempt > 0 {
		if t.MaxAttempts > 0 {
			kv("attempt", fmt.Sprintf("%d of at most %d verify loops", t.Attempt, t.MaxAttempts))
		} else {
			kv("attempt", fmt.Sprint(t.Attempt))
		}
		kv("verify loops", fmt.Sprintf("%d (consecutive failures %d, replans %d)", t.TotalVerifyLoops, t.ConsecutiveFailures, t.Replans))
	}
	for i, q := range t.Questions {
		kv(fmt.Sprintf("question %d", i+1), q)
	}
	if t.Usage.InputTokens+t.Usage.OutputTokens > 0 || t.Usage.CostUSD > 0 {
		kv("usage", t.Usage.String())
		if len(t.Usages) > 1 {
			for _, u := range t.Usages {
				kv(fmt.Sprintf("  attempt %d", u.Attempt), u.Agent+": "+u.Usage.String())
			}
		}
	}
	kv("escalation", escalationReason(t.Escalation))
	kv("created", fmtTime(&t.CreatedAt, c.loc))
	kv("started", fmtTime(t.StartedAt, c.loc))
	kv("finished", fmtTime(t.FinishedAt, c.loc))
	c.printFailures(t.Failures, detail)
	if detail {
		c.printConsultations(t.Consultations)
	} else if n := len(t.Consultations); n > 0 {
		kv("scouts", fmt.Sprintf("%d question(s) asked (--detail shows them)", n))
	}
	if s := summaryText(t.Summary); s != "" {
		fmt.Fprintf(w, "\nsummary:\n%s\n", indent(s))
	}
	if s := escalationText(t.Escalation); s != "" && t.State == wire.TaskEscalated {
		fmt.Fprintf(w, "\nescalation:\n%s\n", indent(s))
	}
	if s := reportText(t.StuckReport); s != "" {
		fmt.Fprintf(w, "\nstuck report:\n%s\n", indent(s))
	}
}

// printConsultations prints the questions the task's agents asked
// scouts: who asked whom, when, the question, and the answer or why there
// is none.
func (c *cli) printConsultations(cs []wire.Consultation) {
	w := c.stdout
	for _, q := range cs {
		fmt.Fprintf(w, "  scout    %s asked %s (attempt %d, %s): %s\n", q.From, q.Scout, q.Attempt, q.ID, q.State)
		ind := func(k, val string) {
			if val != "" {
				fmt.Fprintf(w, "    %-17s %s\n", k+":", indentRest(val, 22))
			}
		}
		ind("asked", fmtTime(&q.AskedAt, c.loc))
		ind("question", q.Question)
		switch q.State {
		case wire.ConsultAnswered:
			ind("answered", fmtTime(&q.EndedAt, c.loc))
			ind("answer", q.Answer)
		case wire.ConsultFailed:
			ind("failed", fmtTime(&q.EndedAt, c.loc))
			ind("error", q.Error)
		default:
			ind("answer", "none yet: the scout is working on it")
		}
	}
}

// indentRest indents every line of s after the first by n spaces, so a
// text of several lines stays in its column.
func indentRest(s string, n int) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+strings.Repeat(" ", n))
}

// escalationReason is the one line that says why a task was escalated.
func escalationReason(e *wire.Escalation) string {
	if e == nil {
		return ""
	}
	if e.Reason != "" {
		return oneLine(e.Reason, 0)
	}
	return oneLine(e.Message, 0)
}

// failureMessage is the one thing to say about a failure.
func failureMessage(f wire.FailureRecord) string {
	if f.ExecutorOutput.Error != "" {
		return f.ExecutorOutput.Error
	}
	if v := f.ExecutorOutput.Verification; v != nil {
		return v.OutputSummary
	}
	return ""
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}

// The texts a task's summary, stuck report and escalation, and a plan's
// retry summary, carry for people ("" for none).
func summaryText(s *wire.TaskSummary) string {
	if s == nil {
		return ""
	}
	return strings.TrimRight(s.Text, "\n")
}

func reportText(r *wire.StuckReport) string {
	if r == nil {
		return ""
	}
	return strings.TrimRight(r.Markdown, "\n")
}

func escalationText(e *wire.Escalation) string {
	if e == nil {
		return ""
	}
	return strings.TrimRight(e.Message, "\n")
}

func retrySummaryText(s *wire.RetrySummary) string {
	if s == nil {
		return ""
	}
	return strings.TrimRight(s.Text, "\n")
}

func fmtTime(t *time.Time, loc *time.Location) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.In(loc).Format("2006-01-02 15:04:05")
}

// taskVerb is a verb that takes one task id and posts an action.
func taskVerb(ctx context.Context, c *cli, v *verb, args []string, act func(*client.Client, context.Context, string) (*wire.Task, error), done string) int {
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
	t, err := act(cl, ctx, pos[0])
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(t)
	}
	if t == nil {
		fmt.Fprintf(c.stdout, "%s %s\n", pos[0], done)
		return exitOK
	}
	fmt.Fprintf(c.stdout, "%s %s\n", t.ID, stateWithPhase(t.State, phaseOf(t.Phase)))
	return exitOK
}

func cmdCancel(ctx context.Context, c *cli, v *verb, args []string) int {
	return taskVerb(ctx, c, v, args, (*client.Client).Cancel, "removed from the queue")
}

func cmdApply(ctx context.Context, c *cli, v *verb, args []string) int {
	return taskVerb(ctx, c, v, args, (*client.Client).Apply, "applied")
}

func cmdDiscard(ctx context.Context, c *cli, v *verb, args []string) int {
	return taskVerb(ctx, c, v, args, (*client.Client).Discard, "discarded")
}

func cmdResume(ctx context.Context, c *cli, v *verb, args []string) int {
	return taskVerb(ctx, c, v, args, (*client.Client).Resume, "resumed")
}

func cmdClarify(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	var answers listFlag
	fs.Var(&answers, "answer", "an answer, in the order of the questions (repeatable)")
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	if len(answers) == 0 {
		return c.usageError(v, fs, "give at least one --answer")
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	t, err := cl.Clarify(ctx, pos[0], answers)
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(t)
	}
	if t == nil {
		fmt.Fprintf(c.stdout, "%s: answers sent\n", pos[0])
		return exitOK
	}
	fmt.Fprintf(c.stdout, "%s %s: answers sent\n", t.ID, stateWithPhase(t.State, phaseOf(t.Phase)))
	return exitOK
}

var respondActions = []string{string(wire.ActionRetry), string(wire.ActionSkip), string(wire.ActionAbort), string(wire.ActionFix)}

func cmdRespond(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 2, 3)
	if !ok {
		return code
	}
	id, action, instruction := pos[0], pos[1], ""
	if len(pos) == 3 {
		instruction = pos[2]
	}
	switch {
	case !slices.Contains(respondActions, action):
		return c.usageError(v, fs, "the answer is one of %s, got %q", strings.Join(respondActions, ", "), action)
	case wire.Action(action) == wire.ActionFix && strings.TrimSpace(instruction) == "":
		return c.usageError(v, fs, `fix needs the instruction: wilco respond %s fix "<instruction>"`, id)
	case wire.Action(action) != wire.ActionFix && instruction != "":
		return c.usageError(v, fs, "only fix takes an instruction")
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	t, err := cl.Respond(ctx, id, wire.Action(action), instruction)
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(t)
	}
	if t == nil {
		fmt.Fprintf(c.stdout, "%s: %s\n", id, action)
		return exitOK
	}
	fmt.Fprintf(c.stdout, "%s %s\n", t.ID, stateWithPhase(t.State, phaseOf(t.Phase)))
	return exitOK
}

func cmdDiff(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	d, err := cl.Diff(ctx, pos[0])
	if err != nil {
		return c.fail(err)
	}
	fmt.Fprint(c.stdout, d)
	return exitOK
}

func cmdPlan(ctx context.Context, c *cli, v *verb, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "submit":
			return cmdPlanSubmit(ctx, c, args[1:])
		case "show":
			return cmdPlanShow(ctx, c, args[1:])
		}
	}
	fs := c.flags(v)
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	return c.usageError(v, fs, "say submit or show")
}

func cmdPlanSubmit(ctx context.Context, c *cli, args []string) int {
	v := &verb{name: "plan submit", args: "FILE [--id ID] [--json]", summary: "submit a plan from a YAML or JSON file: {id, tasks: [{description, depends_on: [n…], …}]}"}
	fs := c.flags(v)
	id := fs.String("id", "", "the plan id, such as 03-01 (default: the file's id)")
	asJSON := fs.Bool("json", false, "print the API JSON")
	pos, _, code, ok := c.parse(v, fs, args, 1, 1)
	if !ok {
		return code
	}
	path := pos[0]
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.wd, path)
	}
	req, err := readPlan(path)
	if err != nil {
		return c.fail(err)
	}
	if *id != "" {
		req.ID = *id
	}
	if req.ID == "" {
		return c.usageError(v, fs, "the plan has no id: set one in the file or with --id")
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	p, err := cl.SubmitPlan(ctx, req)
	if err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(p)
	}
	fmt.Fprintf(c.stdout, "plan %s %s: %d tasks\n", p.ID, p.State, len(p.Tasks))
	for _, t := range p.Tasks {
		fmt.Fprintf(c.stdout, "  %s %s\n", t.ID, t.State)
	}
	return exitOK
}

// readPlan reads a plan file: JSON, or YAML (which is converted to JSON
// first, so both read the same strict shape). A task's package written as
// a list (package: [a, b]) is sent as the one string a,b, which the server
// refuses with its own words when it names two packages.
func readPlan(path string) (wire.SubmitPlan, error) {
	var req wire.SubmitPlan
	b, err := os.ReadFile(path)
	if err != nil {
		return req, err
	}
	var v any
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".yaml" || ext == ".yml" {
		err = yaml.Unmarshal(b, &v)
	} else {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		return req, fmt.Errorf("plan %s: %w", path, err)
	}
	joinPackageLists(v)
	if b, err = json.Marshal(v); err != nil {
		return req, fmt.Errorf("plan %s: %w", path, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("plan %s: %w", path, err)
	}
	if len(req.Tasks) == 0 {
		return req, fmt.Errorf("plan %s: no tasks", path)
	}
	return req, nil
}

// joinPackageLists writes each plan task's package given as a list as
// the list's items joined with commas.
func joinPackageLists(plan any) {
	p, _ := plan.(map[string]any)
	tasks, _ := p["tasks"].([]any)
	for _, t := range tasks {
		task, _ := t.(map[string]any)
		if list, ok := task["package"].([]any); ok {
			names := make([]string, len(list))
			for i, n := range list {
				names[i] = fmt.Sprint(n)
			}
			task["package"] = strings.Join(names, ",")
		}
	}
}

func cmdPlanShow(ctx context.Context, c *cli, args []string) int {
	v := &verb{name: "plan show", args: "ID [--json]", summary: "show a plan, its tasks and its retry summary"}
	return oneNamed(ctx, c, v, args, (*client.Client).Plan, func(p *wire.Plan, _ string) int {
		return c.printPlan(p)
	})
}

// printPlan prints a plan, its tasks and its retry summary.
func (c *cli) printPlan(p *wire.Plan) int {
	fmt.Fprintf(c.stdout, "plan %s: %s\n", p.ID, p.State)
	if len(p.Tasks) > 0 {
		tw := c.table()
		fmt.Fprintln(tw, "ID\tSTATE\tATTEMPTS\tDESCRIPTION")
		for _, t := range p.Tasks {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", t.ID, stateWithPhase(t.State, phaseOf(t.Phase)), t.Attempt, oneLine(t.Description, 60))
		}
		tw.Flush()
	}
	if s := retrySummaryText(p.Summary); s != "" {
		fmt.Fprintf(c.stdout, "\nretry summary:\n%s\n", indent(s))
	}
	return exitOK
}

func cmdStats(ctx context.Context, c *cli, v *verb, args []string) int {
	fs := c.flags(v)
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	if _, _, code, ok := c.parse(v, fs, args, 0, 0); !ok {
		return code
	}
	cl, err := c.admin()
	if err != nil {
		return c.fail(err)
	}
	var st wire.Stats
	if err := cl.Stats(ctx, &st); err != nil {
		return c.fail(err)
	}
	if *asJSON {
		return c.printJSON(st)
	}
	fmt.Fprint(c.stdout, st.Summary.Text)
	fmt.Fprintf(c.stdout, "\nfailed instructions: %d, failed deliveries: %d\n", st.FailedInstructions, st.FailedDeliveries)
	if u := st.Usage.Total; u.InputTokens+u.OutputTokens > 0 || u.CostUSD > 0 {
		fmt.Fprintf(c.stdout, "\nusage: %s\n", u)
		for _, k := range slices.Sorted(maps.Keys(st.Usage.ByAgent)) {
			fmt.Fprintf(c.stdout, "  agent %s: %s\n", k, st.Usage.ByAgent[k])
		}
		for _, k := range slices.Sorted(maps.Keys(st.Usage.ByDay)) {
			fmt.Fprintf(c.stdout, "  day %s: %s\n", k, st.Usage.ByDay[k])
		}
	}
	return exitOK
}
