package core

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"wilco/ack"
	"wilco/prompt"
)

// TaskSpec is a task as the user submits it.
type TaskSpec struct {
	ID                 string
	Description        string
	Constraints        []string
	NonGoals           []string
	Boundaries         []string
	AcceptanceCriteria []string
	DryRun             bool
	Agent              string
	// Set by plans and resumes.
	PlanID    string
	DependsOn []string
	Context   string
	Resumed   string
	// Package is the monorepo package the task is scoped to (default: the
	// configuration's package).
	Package string
	// Land is how its verified change lands (default: the
	// configuration's land.how); Checkout is the branch checked out when
	// it was submitted ("" for a detached HEAD), as the shell read it, nil
	// when it did not: a task that lands as a commit is refused when the
	// checkout is not on the target branch.
	Land     string
	Checkout *string
	// KeepWorktree: a task worked in parallel keeps its worktree and
	// branch when it ends.
	KeepWorktree bool
	// Issue is the forge's issue the task was made from (intake): what
	// the task does is said in its thread. One task per issue.
	Issue int
}

// Task returns a copy of the task.
func (s *State) Task(id string) (Task, bool) {
	t, ok := s.tasks[id]
	if !ok {
		return Task{}, false
	}
	return t.copy(), true
}

// Tasks returns copies of the tasks keep accepts (nil: all), in the order
// they were submitted.
func (s *State) Tasks(keep func(*Task) bool) []Task {
	var out []Task
	for _, t := range s.tasks {
		if keep == nil || keep(t) {
			out = append(out, t.copy())
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return idLess(out[i].ID, out[j].ID)
	})
	return out
}

// Queue lists the queued tasks in order: position 1 first.
func (s *State) Queue() []Task {
	var q []Task
	for _, t := range s.tasks {
		if t.State == Queued {
			q = append(q, t.copy())
		}
	}
	sort.Slice(q, func(i, j int) bool { return q[i].QueuedSeq < q[j].QueuedSeq })
	return q
}

// Position is a queued task's place in the queue (1 first), 0 if it is not
// queued: one more than the queued tasks queued before it (each has the
// seq of the event that queued it).
func (s *State) Position(id string) int {
	t, ok := s.tasks[id]
	if !ok || t.State != Queued {
		return 0
	}
	n := 1
	for _, o := range s.tasks {
		if o.State == Queued && o.QueuedSeq < t.QueuedSeq {
			n++
		}
	}
	return n
}

// queueHead is the first queued task, nil for an empty queue.
func (s *State) queueHead() *Task {
	var head *Task
	for _, t := range s.tasks {
		if t.State == Queued && (head == nil || t.QueuedSeq < head.QueuedSeq) {
			head = t
		}
	}
	return head
}

// active is the task that holds the queue, nil for none.
func (s *State) active() *Task {
	for _, t := range s.tasks {
		if t.State.Holds() {
			return t
		}
	}
	return nil
}

// Active returns the task that holds the queue, if any.
func (s *State) Active() (Task, bool) {
	if t := s.active(); t != nil {
		return t.copy(), true
	}
	return Task{}, false
}

// Plan returns a copy of the plan.
func (s *State) Plan(id string) (Plan, bool) {
	p, ok := s.plans[id]
	if !ok {
		return Plan{}, false
	}
	c := *p
	c.Tasks = slices.Clone(p.Tasks)
	return c, true
}

func validItems(field string, items []string) error {
	for i, it := range items {
		if strings.TrimSpace(it) == "" {
			return invalidf("%s[%d] is empty", field, i)
		}
	}
	return nil
}

// SubmitTask queues a task (strict FIFO) and starts it if nothing holds the
// queue.
func (s *State) SubmitTask(now time.Time, spec TaskSpec) (Task, error) {
	now = norm(now)
	if strings.TrimSpace(spec.Description) == "" {
		return Task{}, invalidf("description is empty")
	}
	if spec.ID == "" {
		spec.ID = s.nextID("T")
	}
	if err := ack.ValidateTaskID(spec.ID); err != nil {
		return Task{}, invalidf("id %q: %v", spec.ID, err)
	}
	if _, ok := s.tasks[spec.ID]; ok {
		return Task{}, conflictf("task %s exists", spec.ID)
	}
	if spec.Issue < 0 {
		return Task{}, invalidf("issue %d: an issue's number is positive", spec.Issue)
	}
	if t := s.TaskOfIssue(spec.Issue); spec.Issue > 0 && t != nil {
		return Task{}, conflictf("issue #%d is task %s already", spec.Issue, t.ID)
	}
	for field, items := range map[string][]string{"constraints": spec.Constraints, "non_goals": spec.NonGoals, "boundaries": spec.Boundaries, "acceptance_criteria": spec.AcceptanceCriteria} {
		if err := validItems(field, items); err != nil {
			return Task{}, err
		}
	}
	adm, err := s.admit(spec)
	if err != nil {
		return Task{}, err
	}
	t := Task{
		ID: spec.ID, Description: spec.Description,
		Constraints: nonNil(spec.Constraints), NonGoals: nonNil(spec.NonGoals), Boundaries: nonNil(spec.Boundaries),
		AcceptanceCriteria: nonNil(spec.AcceptanceCriteria), DryRun: spec.DryRun, RequestedAgent: spec.Agent,
		PlanID: spec.PlanID, DependsOn: slices.Clone(spec.DependsOn), Context: spec.Context, ResumedFrom: spec.Resumed,
		State: Queued, Failures: []FailureRecord{}, Package: adm.pkg, Land: adm.land, KeepWorktree: spec.KeepWorktree,
		Issue: spec.Issue,
	}
	s.emit(now, t.ID, "", TaskQueued{Task: t})
	s.schedule(now)
	return s.tasks[t.ID].copy(), nil
}

// admitted is what a task keeps of its admission: its package and how it
// lands.
type admitted struct{ pkg, land string }

// admit is what a task must pass before it exists, submitted alone or in
// a plan: the agent it asks for exists (and works in wilco's worktree for
// a dry run), some agent is in service, an agent that may take it has the
// tools the verify steps need (as the probes say), it is scoped to at
// most one package, and it can land as it asks (landOf). It returns the
// package the task keeps (its own, else the configuration's) and how it
// lands.
func (s *State) admit(spec TaskSpec) (admitted, error) {
	if spec.Agent != "" {
		a, ok := s.agents[spec.Agent]
		if !ok || a.Removed {
			return admitted{}, notFoundf("no agent %q", spec.Agent)
		}
		if spec.DryRun && a.Pull {
			return admitted{}, invalidf("agent %s works in its own environment: a dry run needs an exec agent", a.Name)
		}
		if spec.DryRun && !makesDryRuns(a) {
			return admitted{}, invalidf("agent %s is a %s agent: a dry run needs an exec agent, which wilco starts in the dry run's throw-away worktree", a.Name, a.Adapter)
		}
	}
	if s.inService() == 0 {
		return admitted{}, conflictf("no agent is configured: add one to wilco.yaml or POST /v1/agents")
	}
	if why := s.noAgentHasTheTools(spec.Agent); why != "" {
		return admitted{}, conflictf("%s", why)
	}
	pkg := spec.Package
	if pkg == "" {
		pkg = s.policies.Package
	}
	if err := CheckPackage(pkg); err != nil {
		return admitted{}, invalidf("package: %v", err)
	}
	land, err := s.landOf(spec.Land, spec.Checkout)
	if err != nil {
		return admitted{}, err
	}
	return admitted{pkg: cleanPackage(pkg), land: land}, nil
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return slices.Clone(xs)
}

// schedule starts the first queued task when nothing holds the queue
// (strict FIFO); with tasks worked in parallel, up to parallel at once
// (scheduleParallel).
func (s *State) schedule(now time.Time) {
	if s.parallel() {
		s.scheduleParallel(now)
		return
	}
	if s.active() != nil {
		return
	}
	t := s.queueHead()
	if t == nil {
		return
	}
	s.warnDependencies(now, t)
	if t.Applying {
		s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Verifying, Milestone: MilestoneApplying})
		s.effect(ApplyProposal{TaskID: t.ID, RunID: t.Proposal.RunID})
		return
	}
	s.startAttempt(now, t, "first")
}

// pickTaskAgent chooses who works on a task: the agent asked for, else the
// one it had, else the first available agent by name (a dry run needs an
// agent wilco starts in its worktree: not a mailbox or tmux one).
func (s *State) pickTaskAgent(t *Task) string {
	if t.RequestedAgent != "" {
		if a := s.agents[t.RequestedAgent]; a == nil || a.Removed {
			return ""
		}
		return t.RequestedAgent
	}
	if t.Agent != "" {
		if a := s.agents[t.Agent]; a != nil && !a.Removed && a.Status != Offline && a.Status != Unresponsive {
			return t.Agent
		}
	}
	names := make([]string, 0, len(s.agents))
	for n := range s.agents {
		names = append(names, n)
	}
	slices.Sort(names)
	var fallback string
	for _, n := range names {
		a := s.agents[n]
		if !s.takesTasks(a) || t.DryRun && !makesDryRuns(a) || len(s.lacksFor(a)) > 0 {
			continue
		}
		if fallback == "" {
			fallback = n
		}
		if a.Status == Available {
			return n
		}
	}
	return fallback
}

// noAgentFor says why no agent can take the task (pickTaskAgent chose
// none): the agent it asks for was removed, no agent has the tools the
// verify steps need (as a submission is refused), or what keeps each
// agent from it.
func (s *State) noAgentFor(t *Task) string {
	if t.RequestedAgent != "" {
		return "the agent this task asks for, " + t.RequestedAgent + ", was removed: answer skip or abort, or add it back to wilco.yaml"
	}
	if why := s.noAgentHasTheTools(""); why != "" {
		return why
	}
	var why []string
	for _, n := range slices.Sorted(maps.Keys(s.agents)) {
		a := s.agents[n]
		switch {
		case a.Removed:
		case a.Role == RoleScout:
			why = append(why, n+" is a scout")
		case n == s.policies.Review.Agent:
			why = append(why, n+" is the reviewer")
		case len(s.lacksFor(a)) > 0:
			why = append(why, n+" lacks "+strings.Join(s.lacksFor(a), ", "))
		case t.DryRun && !makesDryRuns(a):
			why = append(why, n+" is a "+a.Adapter+" agent, and a dry run needs an exec agent")
		}
	}
	if len(why) == 0 {
		return "no agent can take this task: no agent is configured (add one to wilco.yaml or POST /v1/agents)"
	}
	return "no agent can take this task (" + strings.Join(why, "; ") + "): answer skip or abort, or add an agent that can to wilco.yaml"
}

// startAttempt gives the task's next attempt to an agent: a delegation
// that must be acknowledged (or, for an agent with handshake none, a
// recorded turn).
func (s *State) startAttempt(now time.Time, t *Task, kind string) {
	if why := s.overBudget(now, t); why != "" {
		s.escalateTask(now, t, "budget: "+why+budgetAdvice)
		return
	}
	if t.Released && !s.slotFor(t) && s.pickTaskAgent(t) != "" {
		s.waitForSlot(now, t, kind)
		return
	}
	agent := s.agentFor(t)
	if agent == "" {
		s.escalateTask(now, t, s.noAgentFor(t))
		return
	}
	a := s.agents[agent]
	attempt := t.Attempt + 1
	body := s.taskPrompt(t, kind, attempt)
	m := Message{
		ID: s.nextID("M"), From: Orchestrator, To: agent, Type: TypeDelegation, Policy: PolicyBackoff,
		Subject: fmt.Sprintf("Task %s (attempt %d)", t.ID, attempt), Body: body, TaskID: t.ID,
		TaskAttempt: attempt, DryRun: t.DryRun,
		Brief: &Brief{AcceptanceCriteria: slices.Clone(t.AcceptanceCriteria), Description: t.Description},
	}
	if a.Handshake == HandshakeNone {
		m.Type, m.Policy = TypeTaskTurn, PolicyNone
	}
	from := t.State
	phase, milestone := Executing, MilestoneWaitingAck
	to := AwaitingAck
	if m.Type == TypeTaskTurn {
		to, milestone = Running, MilestoneImplementing
	}
	if kind != "first" {
		milestone = fmt.Sprintf("Attempt %d/%d...", attempt, s.policies.Loop.HardStop)
	}
	reason := ""
	if to == AwaitingAck {
		milestone = s.waitMilestone(agent, milestone)
		if strings.HasSuffix(milestone, neverSeen) {
			reason = "waiting for agent " + agent + neverSeen
		}
	}
	s.emit(now, t.ID, agent, TaskAttempt{Attempt: attempt, Agent: agent, Delivery: m.ID, Kind: kind, MaxAttempts: s.policies.Loop.HardStop})
	s.emit(now, t.ID, agent, TaskStateChanged{From: from, To: to, Phase: phase, Milestone: milestone, Reason: reason})
	var timer time.Time
	if m.Policy == PolicyBackoff {
		timer = s.backoffTimer(now, 1)
	}
	s.emit(now, t.ID, agent, DeliverySent{Send{ID: m.ID, Attempt: 1, Kind: SendFirst, Round: 1, TimerAt: timer, Message: &m}})
}

// promptTask is the task as prompts render it.
func promptTask(t *Task) prompt.Task {
	return prompt.Task{ID: t.ID, Description: t.Description, Constraints: t.Constraints, NonGoals: t.NonGoals,
		Boundaries: t.Boundaries, AcceptanceCriteria: t.AcceptanceCriteria, Context: t.Context, Package: t.Package}
}

func promptFailures(t *Task) []prompt.Failure {
	out := make([]prompt.Failure, 0, len(t.Failures))
	for _, f := range t.Failures {
		pf := prompt.Failure{Attempt: f.Attempt, Timestamp: f.Timestamp, Type: f.FailureType, RunID: f.RunID,
			Error: f.ExecutorOutput.Error, Details: f.Details, FilesModified: f.ExecutorOutput.FilesModified,
			RootCauseGuess: f.RootCauseGuess, SuggestedFix: f.SuggestedFix}
		if v := f.ExecutorOutput.Verification; v != nil {
			pf.Command, pf.ExitCode, pf.OutputSummary = v.Command, v.ExitCode, v.OutputSummary
		}
		out = append(out, pf)
	}
	return out
}

// taskPrompt renders an attempt's prompt: the task, and before it on every
// retry the <retry_context> block; a REPLAN asks for a fresh
// plan with every failure so far.
func (s *State) taskPrompt(t *Task, kind string, attempt int) string {
	task := promptTask(t)
	task.Scouts = s.scoutNames()
	if kind == "first" || len(t.Failures) == 0 && t.Intervention == "" {
		return prompt.Render(task)
	}
	r := prompt.Retry{Attempt: attempt, MaxAttempts: s.policies.Loop.HardStop, Failures: promptFailures(t), Learnings: t.Learnings, Intervention: t.Intervention}
	if kind == "replan" {
		return prompt.Replan(task, r, t.Replans, s.policies.Loop.MaxReplans)
	}
	return prompt.RetryContext(r) + "\n" + prompt.Render(task)
}

// syncTask follows a task's delegation: acknowledged → running,
// clarification → clarifying, reassigned → the new agent, failed without
// another agent → escalated.
func (s *State) syncTask(now time.Time, taskID string) {
	t := s.tasks[taskID]
	if t == nil || !t.State.Holds() || t.Delivery == "" {
		return
	}
	d := s.find(t.Delivery)
	if d == nil {
		return
	}
	switch {
	case d.State == Acknowledged && (t.State == AwaitingAck || t.State == TaskClarifying):
		s.emit(now, t.ID, d.To, TaskStateChanged{From: t.State, To: Running, Phase: Executing, Milestone: MilestoneAnalyzing})
		s.emit(now, t.ID, d.To, TaskMilestone{Text: MilestoneImplementing})
	case d.State == Clarifying && t.State == AwaitingAck:
		s.emit(now, t.ID, d.To, TaskStateChanged{From: t.State, To: TaskClarifying, Reason: "the agent asked questions", Milestone: "Waiting for your answers..."})
	case d.State == Sent && t.State == TaskClarifying:
		s.emit(now, t.ID, d.To, TaskStateChanged{From: t.State, To: AwaitingAck, Phase: Executing, Milestone: MilestoneWaitingAck})
	case d.State == Failed || d.State == Cancelled && t.State != Running:
		// Reassigned: the newest delegation of the task goes on.
		ids := s.byTask.ids(t.ID)
		if n := ids[len(ids)-1]; n != d.ID {
			nd := s.find(n)
			if nd.Type == TypeDelegation && !nd.State.Terminal() {
				s.emit(now, t.ID, nd.To, TaskStateChanged{From: t.State, To: AwaitingAck, Phase: Executing, Agent: nd.To, Delivery: nd.ID,
					Reason: fmt.Sprintf("reassigned from %s", d.To) + s.neverSeenNote(nd.To), Milestone: s.waitMilestone(nd.To, MilestoneWaitingAck)})
				// The instance it held with the agent it leaves is free: a
				// task queued for that agent starts.
				s.schedule(now)
				return
			}
		}
		if t.State == AwaitingAck || t.State == TaskClarifying {
			s.escalateTask(now, t, fmt.Sprintf("the delegation to %s ended %s: %s%s", d.To, d.State, d.Reason, s.neverSeenNote(d.To)))
		}
	}
}

// TurnResult is how an agent's turn on a task ended.
type TurnResult struct {
	TaskID  string
	Attempt int
	// Delivery is the delegation the turn worked on; when set, a turn of a
	// delegation that is no longer the task's current one is refused.
	Delivery string
	ExitCode int
	// TimedOut: the turn exceeded timeout or idle_timeout.
	TimedOut bool
	// Status is the completion report's status (success, failure,
	// blocked, impossible); "" when it gives none (a claim of completion)
	// or there is none: the exit code says.
	Status  ack.CompleteStatus
	Summary string
	// Reason is why the agent is blocked, or says the task is impossible
	// or failed, in its own words.
	Reason string
	Error  string
	Output string
	Files  []string
	// Lost: the turn's process died with the server.
	Lost bool
	// Duration is how long the agent's turn ran.
	Duration time.Duration
	// Usage is what the turn cost, as the agent's CLI reported it.
	Usage Usage
}

// EndTurn records the end of the agent's turn on a task: a failure goes
// through the debug loop; a finished turn goes to verification (or, for a
// dry run, to its diff).
func (s *State) EndTurn(now time.Time, r TurnResult) (Task, error) {
	now = norm(now)
	t, ok := s.tasks[r.TaskID]
	if !ok {
		return Task{}, notFoundf("no task %q", r.TaskID)
	}
	if r.Attempt != t.Attempt {
		return Task{}, conflictf("task %s is at attempt %d, not %d", t.ID, t.Attempt, r.Attempt)
	}
	if r.Delivery != "" && r.Delivery != t.Delivery {
		return Task{}, conflictf("task %s is now delegated by %s, not %s", t.ID, t.Delivery, r.Delivery)
	}
	if r.Status != "" && !r.Status.Valid() {
		return Task{}, invalidf("status %q: must be success, failure, blocked or impossible", r.Status)
	}
	if t.State == AwaitingAck && !r.Lost {
		s.endTurnBeforeAck(now, t, r)
		return t.copy(), nil
	}
	if t.State != Running || t.Phase != Executing && !(r.Lost && t.Phase == Verifying) {
		return Task{}, conflictf("task %s is %s (%s), not executing", t.ID, t.State, t.Phase)
	}
	s.endWork(now, t, r)
	return t.copy(), nil
}

// endTurnBeforeAck ends a turn that ended before the agent acknowledged:
// the delivery has failed now, not after the ACK policy's timeouts. The
// agent could not start, crashed, hung, or exited without a word of the
// ACK protocol.
func (s *State) endTurnBeforeAck(now time.Time, t *Task, r TurnResult) {
	status := "failure"
	if r.ExitCode == 0 && !r.TimedOut {
		status = "unacknowledged"
	}
	s.emit(now, t.ID, t.Agent, TaskTurnEnded{Attempt: r.Attempt, ExitCode: r.ExitCode, Status: status, Summary: r.Summary,
		Usage: usagePtr(s.priced(r.Usage, t.Agent)), DurationMS: r.Duration.Milliseconds()})
	if d := s.find(t.Delivery); d != nil && d.State == Sent && !r.TimedOut && d.Sends <= MaxRateLimitedSends {
		if line, ok := RateLimited(r.Error + "\n" + r.Output); ok {
			// The model's API is rate limited or overloaded: the same
			// delegation goes again after a backoff; no attempt is
			// spent and no verify loop counted.
			wait := s.policies.Ack.Wait(d.Sends)
			s.emit(now, t.ID, d.To, DeliveryDeferred{ID: d.ID, Reason: "rate limited: " + line, TimerAt: now.Add(wait), Resend: true})
			s.emit(now, t.ID, t.Agent, TaskMilestone{Text: fmt.Sprintf("The model's API is rate limited or overloaded: trying again in %s", wait)})
			return
		}
	}
	if d := s.find(t.Delivery); d != nil && !d.State.Terminal() {
		s.emit(now, t.ID, d.To, DeliveryCancelled{ID: d.ID, Reason: "the agent's turn ended before it acknowledged"})
	}
	if s.reportedStuck(now, t, r) {
		return
	}
	typ, msg := ExecutionError, firstOf(r.Error, fmt.Sprintf("the agent's turn exited with status %d before it acknowledged", r.ExitCode))
	if status == "unacknowledged" {
		msg = "the agent's turn ended (exit status 0) without an ACK: it never said it received the task"
	}
	if r.TimedOut {
		typ = Timeout
	}
	s.failure(now, t, turnFailure(now, t, r, typ, msg, true))
}

// endWork ends a turn that worked on the task: a failure goes through
// the debug loop; a finished turn goes to verification (or, for a dry
// run, to its diff).
func (s *State) endWork(now time.Time, t *Task, r TurnResult) {
	status := string(r.Status)
	if status == "" {
		status = "success"
		if r.ExitCode != 0 || r.TimedOut || r.Lost {
			status = "failure"
		}
	}
	var blocker string
	if status == "success" {
		// An agent CLI in print mode that was refused a permission, or
		// could not log in to its model, often ends its turn with exit
		// status 0: what it did not do shows in its output only.
		if p, ok := ClassifyEnvironment(0, r.Error+"\n"+r.Reason+"\n"+r.Output); ok && (p.Kind == EnvAuthentication || p.Kind == EnvPermission) {
			blocker = p.Line
		}
	}
	s.emit(now, t.ID, t.Agent, TaskTurnEnded{Attempt: r.Attempt, ExitCode: r.ExitCode, Status: status, Summary: workSummary(r.Summary),
		Files: slices.Clone(r.Files), Blocker: blocker, Usage: usagePtr(s.priced(r.Usage, t.Agent)), DurationMS: r.Duration.Milliseconds()})
	if d := s.find(t.Delivery); d != nil && d.Type == TypeTaskTurn && !d.State.Terminal() {
		s.emit(now, t.ID, d.To, DeliveryAcknowledged{ID: d.ID, By: "turn"})
	}
	if why := s.overBudget(now, t); why != "" {
		s.escalateTask(now, t, "budget: "+why+budgetAdvice)
		return
	}
	if s.reportedStuck(now, t, r) {
		return
	}
	if status == "failure" {
		typ := ExecutionError
		if r.TimedOut {
			typ = Timeout
		}
		msg := firstOf(r.Error, r.Reason, fmt.Sprintf("the agent's turn exited with status %d", r.ExitCode))
		if r.Status == ack.CompleteFailure && r.ExitCode == 0 {
			msg = firstOf(r.Error, r.Reason, r.Summary, "the agent reports that its work failed")
		}
		if r.Lost {
			msg = "the agent's turn was lost: wilco stopped while it ran"
		}
		s.failure(now, t, turnFailure(now, t, r, typ, msg, false))
		return
	}
	if t.DryRun {
		s.emit(now, t.ID, t.Agent, TaskMilestone{Text: MilestoneProposing})
		s.effect(MakeProposal{TaskID: t.ID, Attempt: t.Attempt, RunID: runID(t.ID, t.Attempt)})
		return
	}
	s.verify(now, t)
}

// reportedStuck ends the attempt of an agent that reports it is blocked
// (the task waits for the user) or that the task is impossible
// (escalated), and says whether it did.
func (s *State) reportedStuck(now time.Time, t *Task, r TurnResult) bool {
	switch r.Status {
	case ack.CompleteBlocked:
		s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Blocked, Reason: firstOf(r.Reason, r.Error, r.Summary, "the agent reports it is blocked"), Milestone: "Blocked: waiting for you"})
		return true
	case ack.CompleteImpossible:
		s.escalateTask(now, t, "impossible: "+firstOf(r.Reason, r.Error, r.Summary, "the agent says the task is impossible"))
		return true
	}
	return false
}

// turnFailure is the failure record of a failed turn: an environment
// failure (a missing program, no login or API key, a permission nobody
// grants) escalates at once; anything else goes through the debug loop
// as typ.
func turnFailure(now time.Time, t *Task, r TurnResult, typ, msg string, beforeAck bool) FailureRecord {
	f := FailureRecord{Attempt: t.Attempt, Timestamp: now, FailureType: typ,
		ExecutorOutput: ExecutorOutput{Status: "failure", FilesModified: nonNil(r.Files), Error: msg},
		Details:        tail(r.Output, 2000)}
	if r.TimedOut || r.Lost {
		return f
	}
	classify := ClassifyEnvironment
	if beforeAck {
		classify = ClassifyStartup
	}
	p, ok := classify(r.ExitCode, r.Error+"\n"+r.Reason+"\n"+r.Output)
	if !ok {
		return f
	}
	f.FailureType, f.Escalate = Environment, Environment
	f.RootCauseGuess, f.SuggestedFix = p.Cause, p.Fix
	if _, path, ok := strings.Cut(r.Error, "(PATH searched: "); ok {
		f.RootCauseGuess += " (PATH searched: " + strings.TrimSuffix(strings.TrimSpace(path), ")") + ")"
	}
	if r.Error != "" && !strings.Contains(f.Details, r.Error) {
		f.Details = strings.TrimSpace(r.Error + "\n" + f.Details)
	}
	return f
}

// workSummary is what an agent said of its work, without its
// acknowledgment block.
func workSummary(text string) string {
	var keep []string
	var understanding string
	skip := false
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(strings.Trim(l, "*_ "))
		low := strings.ToLower(t)
		switch {
		case strings.Contains(t, "[ACK]"):
			skip = true
			continue
		case skip && strings.HasPrefix(low, "understanding:"):
			understanding = strings.TrimSpace(t[len("understanding:"):])
			continue
		case skip && (strings.HasPrefix(low, "questions:") || strings.HasPrefix(low, "note:")):
			continue
		case skip && t == "":
			skip = false
			continue
		}
		skip = false
		keep = append(keep, l)
	}
	if out := strings.TrimSpace(strings.Join(keep, "\n")); out != "" {
		return out
	}
	return understanding
}

// RunID is the run id of a task's attempt: its verification run, and the
// directory of its turn (prompt, agent log, transcript).
func RunID(task string, attempt int) string { return runID(task, attempt) }

func runID(task string, attempt int) string {
	return strings.NewReplacer(":", "_").Replace(task) + "-a" + strconv.Itoa(attempt)
}

func (s *State) verify(now time.Time, t *Task) {
	id := runID(t.ID, t.Attempt)
	s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Verifying, RunID: id, Milestone: MilestoneVerifying})
	s.effect(RunVerify{TaskID: t.ID, Attempt: t.Attempt, RunID: id, Boundaries: slices.Clone(t.Boundaries), Package: t.Package, Worktree: t.Worktree,
		Inspect: s.policies.Done.Tests != CheckOff || s.policies.Done.MaxFiles > 0 || s.policies.Done.MaxLines > 0 || s.policies.Review.Agent != "",
		Diff:    s.policies.Review.Agent != ""})
}

// NoteActivity makes what the agent of a running attempt is doing (a tool
// call its output reported, such as "Editing calc.go") the task's
// milestone. An activity of another attempt, or of a task no longer
// executing, changes nothing.
func (s *State) NoteActivity(now time.Time, taskID string, attempt int, text string) error {
	now = norm(now)
	t, ok := s.tasks[taskID]
	if !ok {
		return notFoundf("no task %q", taskID)
	}
	text = strings.TrimSpace(text)
	if text == "" || t.Attempt != attempt || t.State != Running || t.Phase != Executing || t.Milestone == text {
		return nil
	}
	if len(text) > 120 {
		text = text[:119] + "…"
	}
	s.emit(now, t.ID, t.Agent, TaskMilestone{Text: text})
	return nil
}

// EndVerify records a verification run: the core judges the facts the
// shell reported (Judge) with the task's scope; success ends the task with
// its summary; a failure goes through the debug loop. It returns the
// verdict, its failure record as recorded.
func (s *State) EndVerify(now time.Time, r VerifyResult) (Verdict, error) {
	now = norm(now)
	t, ok := s.tasks[r.TaskID]
	if !ok {
		return Verdict{}, notFoundf("no task %q", r.TaskID)
	}
	if i := t.Integration; t.State == Running && t.Phase == Landing && i != nil && i.RunID == r.RunID && !i.Passed && !i.Void {
		return s.endIntegration(now, t, r), nil
	}
	if t.State != Running || t.Phase != Verifying || t.RunID != r.RunID {
		return Verdict{}, conflictf("task %s is not verifying run %s", t.ID, r.RunID)
	}
	v := Judge(Scope{Boundaries: t.Boundaries, Package: t.Package}, r)
	switch {
	case !v.Passed:
		f := *v.Failure
		f.Attempt, f.Timestamp, f.RunID = t.Attempt, now, r.RunID
		f.DurationMS = r.Duration.Milliseconds()
		if p, ok := ClassifyEnvironment(0, t.TurnBlocker); ok && t.TurnBlocker != "" {
			// The check failed after a turn that showed the agent could
			// not act: no retry of the same agent can do better.
			f.FailureType, f.Escalate = Environment, Environment
			f.RootCauseGuess, f.SuggestedFix = p.Cause, p.Fix
		}
		v.Failure = &f
		s.failure(now, t, f)
	case v.Checks > 0:
		s.checkDone(now, t, r, v.Command)
	default:
		sum := TaskSummary{Files: nonNil(r.Files), Why: firstOf(t.LastSummary, t.Description), RunID: r.RunID}
		sum.Text = prompt.SummaryText(prompt.Summary{Files: sum.Files, Why: sum.Why, RunID: r.RunID, Command: v.Command, Attempts: t.Attempt, Unverified: true})
		s.emit(now, t.ID, t.Agent, TaskUnverifiedEnd{Summary: sum})
		s.emit(now, t.ID, t.Agent, TaskMilestone{Text: MilestoneUnverified})
		s.finish(now, t, Unverified, "no verify step is configured: nothing checked the agent's work")
	}
	return v, nil
}

// failure records a failed attempt and decides what comes next (the debug
// loop): an escalation condition → escalated; hard stop → stuck;
// escalate_after → escalated; replan_after consecutive failures → REPLAN;
// else a retry carrying the failure.
func (s *State) failure(now time.Time, t *Task, f FailureRecord) {
	s.emit(now, t.ID, t.Agent, TaskFailure{Record: f})
	if d := s.find(t.Delivery); d != nil && d.Holds {
		s.emit(now, t.ID, d.To, DeliveryReply{ID: d.ID, Kind: "attempt_failed", Released: true})
	}
	p := s.policies.Loop
	switch {
	case f.FailureType == Environment:
		s.escalateTask(now, t, Environment+": "+firstOf(f.RootCauseGuess, f.ExecutorOutput.Error)+". To fix: "+f.SuggestedFix)
	case f.Escalate != "":
		s.escalateTask(now, t, f.Escalate+": "+firstOf(f.RootCauseGuess, f.ExecutorOutput.Error))
	case sameRefusalRepeated(t.Failures):
		s.escalateTask(now, t, "the repository's git hooks refused the commit of the verified change twice in a row the same way: "+
			firstLine(firstOf(f.Details, f.ExecutorOutput.Error))+". Fix what they ask for (or the hooks), then answer retry; or skip to leave the change uncommitted")
	case sameFailureRepeated(t.Failures, identicalFailures):
		s.escalateTask(now, t, fmt.Sprintf("the agent failed the same way %d times in a row (%s): %s",
			identicalFailures, f.FailureType, firstLine(firstOf(f.ExecutorOutput.Error, f.Details))))
	case t.TotalVerifyLoops >= p.HardStop:
		s.stuck(now, t)
	case p.EscalateAfter > 0 && t.SinceEscalation >= p.EscalateAfter:
		s.escalateTask(now, t, fmt.Sprintf("escalate_after: %d failed attempts", t.SinceEscalation))
	case t.ConsecutiveFailures >= p.ReplanAfter && t.Replans < p.MaxReplans:
		s.emit(now, t.ID, t.Agent, TaskReplan{Number: t.Replans + 1, Failures: len(t.Failures)})
		s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Replanning, Milestone: MilestoneReplanning})
		s.startAttempt(now, t, "replan")
	default:
		s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Retrying, Milestone: retryMilestone(f.FailureType)})
		s.startAttempt(now, t, "retry")
	}
	// The next attempt may have gone to another agent, whose instance it
	// now holds, freeing one of the agent it leaves.
	s.schedule(now)
}

// identicalFailures is how many identical failures of the agent's turn in
// a row escalate: the same error again and again (a refused flag, a crash
// at start) is not fixed by more attempts.
const identicalFailures = 3

// sameFailureRepeated reports whether the last n failures are the same
// failure of the agent's turn (an execution error or a timeout, with the
// same error and output): the debug loop's verification failures are
// left to it.
func sameFailureRepeated(fs []FailureRecord, n int) bool {
	if len(fs) < n {
		return false
	}
	last := fs[len(fs)-1]
	if last.FailureType != ExecutionError && last.FailureType != Timeout {
		return false
	}
	for _, f := range fs[len(fs)-n:] {
		if f.FailureType != last.FailureType || f.ExecutorOutput.Error != last.ExecutorOutput.Error || strings.TrimSpace(f.Details) != strings.TrimSpace(last.Details) {
			return false
		}
	}
	return true
}

// retryMilestone is what the user reads when an attempt failed this way
// and the next one starts.
func retryMilestone(failureType string) string {
	switch failureType {
	case VerificationFailed, IntegrationFailed:
		return MilestoneDebugging
	case MergeConflict:
		return MilestoneConflict
	case CIFailed:
		return MilestoneCIFailed
	case ChangesRequested:
		return MilestoneChangesRequested
	case Timeout:
		return MilestoneTimedOut
	case ArchitectRejected:
		return MilestoneRejected
	}
	return MilestoneExecFailed
}

func (s *State) escalateTask(now time.Time, t *Task, reason string) {
	if d := s.find(t.Delivery); d != nil && !d.State.Terminal() {
		s.emit(now, t.ID, d.To, DeliveryCancelled{ID: d.ID, Reason: "the task is escalated"})
	}
	e := prompt.Escalation{TaskID: t.ID, TaskName: firstLine(t.Description), Plan: t.PlanID, Attempts: t.Attempt,
		MaxAttempts: s.policies.Loop.HardStop, Reason: reason, Failures: promptFailures(t)}
	if n := len(t.Failures); n > 0 {
		e.LastError = firstOf(t.Failures[n-1].Details, t.Failures[n-1].ExecutorOutput.Error)
		e.Files = t.Failures[n-1].ExecutorOutput.FilesModified
	}
	s.emit(now, t.ID, t.Agent, TaskEscalated{Reason: reason, Message: prompt.EscalationMessage(e)})
	s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Escalated, Reason: reason, Milestone: "Escalated: waiting for you"})
}

func (s *State) stuck(now time.Time, t *Task) {
	fs := promptFailures(t)
	var files []string
	if n := len(t.Failures); n > 0 {
		files = t.Failures[n-1].ExecutorOutput.FilesModified
	}
	r := StuckReport{Hypotheses: prompt.Hypotheses(fs), RunIDs: slices.Clone(t.RunIDs), Path: ".wilco/stuck/" + t.ID + ".md"}
	r.Markdown = prompt.StuckMarkdown(prompt.StuckReport{TaskID: t.ID, Description: t.Description, Loops: t.TotalVerifyLoops,
		Replans: t.Replans, Failures: fs, Hypotheses: r.Hypotheses, RunIDs: r.RunIDs, Files: files})
	s.emit(now, t.ID, t.Agent, TaskStuckReported{Report: r})
	s.emit(now, t.ID, t.Agent, TaskMilestone{Text: "Stuck: hard stop; report in " + r.Path})
	s.finish(now, t, Stuck, fmt.Sprintf("hard stop after %d verify loops", t.TotalVerifyLoops))
}

// finish ends a task, tells its plan, and starts the next queued task. A
// dry run's worktree goes with it.
func (s *State) finish(now time.Time, t *Task, to TaskState, reason string) {
	if t.DryRun {
		s.effect(DiscardProposal{TaskID: t.ID})
	}
	if t.Review != nil {
		if d := s.find(t.Review.Delivery); d != nil && !d.State.Terminal() {
			s.emit(now, t.ID, d.To, DeliveryCancelled{ID: d.ID, Reason: "the task ended " + string(to)})
		}
	}
	for _, c := range t.Consultations {
		if d := s.find(c.ID); c.State == ConsultPending && d != nil && !d.State.Terminal() {
			s.emit(now, t.ID, d.To, DeliveryCancelled{ID: d.ID, Reason: "the task ended " + string(to)})
			s.emit(now, t.ID, d.To, ScoutFailed{ID: d.ID, Reason: "the task ended " + string(to)})
		}
	}
	if d := s.find(t.Delivery); d != nil && !d.State.Terminal() {
		s.emit(now, t.ID, d.To, DeliveryCancelled{ID: d.ID, Reason: "the task ended " + string(to)})
	} else if d != nil && d.Holds {
		s.emit(now, t.ID, d.To, DeliveryReply{ID: d.ID, Kind: "task_ended", Released: true})
	}
	ended := TaskStateChanged{From: t.State, To: to, Reason: reason}
	if reason != "" && (to == TaskCancelled || to == Skipped || to == Aborted) {
		// No step before says this end (as success, stuck and unverified
		// do): the reason is the milestone, or the last live step's would
		// stay, as if it were still happening.
		ended.Milestone = strings.ToUpper(reason[:1]) + reason[1:]
	}
	s.emit(now, t.ID, t.Agent, ended)
	s.removeWorktree(t)
	if a := s.agents[t.Agent]; a != nil && a.Status == Busy && s.holdingWith(a.Name, "") == 0 {
		s.setStatus(now, a, Available, "task "+t.ID+" ended")
	}
	s.planProgress(now, t.PlanID)
	s.schedule(now)
	s.landNext(now)
}

// CancelTask cancels a task: a queued one leaves no trace (the rest shift
// up), unless it was made from an issue (it ends cancelled); a running one
// is stopped (the whole process group), the working tree is kept as it
// is, no artifact is made, and the next task starts.
func (s *State) CancelTask(now time.Time, id string) (Task, bool, error) {
	now = norm(now)
	t, ok := s.tasks[id]
	if !ok {
		return Task{}, false, notFoundf("no task %q", id)
	}
	switch {
	case t.State == Queued && t.Issue == 0:
		s.emit(now, t.ID, "", TaskRemoved{})
		// A task that waited for it (it depended on it) may start now.
		s.schedule(now)
		return Task{}, true, nil
	case t.State == Queued:
		// A task made from an issue is kept, ended: removed, it would be
		// made again from its issue, still open with the label.
		s.finish(now, t, TaskCancelled, "cancelled by the user before it started")
	case t.State.Holds():
		if d := s.find(t.Delivery); d != nil && !d.State.Terminal() {
			s.cancel(now, d, "the task was cancelled by the user")
		}
		s.effect(StopTurn{TaskID: t.ID, Reason: "cancelled"})
		s.finish(now, t, TaskCancelled, "cancelled by the user")
	case t.State == Proposed:
		s.finish(now, t, TaskCancelled, "the proposal was discarded")
	default:
		return Task{}, false, conflictf("task %s already ended %s", t.ID, t.State)
	}
	return t.copy(), false, nil
}

// ClarifyTask sends the user's answers to the agent's questions.
func (s *State) ClarifyTask(now time.Time, id string, answers []string) (Task, error) {
	now = norm(now)
	t, ok := s.tasks[id]
	if !ok {
		return Task{}, notFoundf("no task %q", id)
	}
	if t.State != TaskClarifying {
		return Task{}, conflictf("task %s is %s, not waiting for clarification", t.ID, t.State)
	}
	if _, err := s.Clarify(now, t.Delivery, answers); err != nil {
		return Task{}, err
	}
	s.syncTask(now, t.ID)
	return t.copy(), nil
}

// Responses to an escalated or blocked task.
const (
	RespondRetry = "retry"
	RespondFix   = "fix"
	RespondSkip  = "skip"
	RespondAbort = "abort"
)

// Respond acts on the user's answer to an escalated or blocked task:
// retry (counters reset; a task escalated because its verified change
// could not be committed is committed again, with no new attempt), fix
// (the instruction goes first in the next prompt as a
// <user_intervention>), skip (dependants are warned) or abort (stop, keep
// the partial state; a plan stops too).
func (s *State) Respond(now time.Time, id, action, instruction string) (Task, error) {
	now = norm(now)
	t, ok := s.tasks[id]
	if !ok {
		return Task{}, notFoundf("no task %q", id)
	}
	if t.State != Escalated && t.State != Blocked {
		return Task{}, conflictf("task %s is %s: only an escalated or blocked task takes a response", t.ID, t.State)
	}
	instruction = strings.TrimSpace(instruction)
	switch action {
	case RespondRetry, RespondSkip, RespondAbort:
		if instruction != "" {
			return Task{}, invalidf("%s takes no instruction (use fix)", action)
		}
	case RespondFix:
		if instruction == "" {
			return Task{}, invalidf("fix needs an instruction")
		}
	default:
		return Task{}, invalidf("action %q: must be retry, fix, skip or abort", action)
	}
	s.emit(now, t.ID, t.Agent, TaskResponse{Action: action, Instruction: instruction})
	if action == RespondRetry && landingEscalated(t) && t.Worktree != "" {
		// Its change is verified: it lands again, through the landing
		// queue (its place is where it was verified).
		s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Landing, Reason: "the user answered retry", Milestone: MilestoneLandQueued})
		s.landNext(now)
		return t.copy(), nil
	}
	if action == RespondRetry && landingEscalated(t) {
		// Its change is verified: only the commit is made again.
		s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Landing, Reason: "the user answered retry", Milestone: MilestoneLanding})
		s.effect(landTask(t))
		return t.copy(), nil
	}
	switch action {
	case RespondRetry, RespondFix:
		if t.Worktree != "" && t.Base == "" {
			// Its worktree could not be made: it is made again first.
			s.prepare(now, t, t.Agent)
			return t.copy(), nil
		}
		s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Running, Phase: Retrying, Reason: "the user answered " + action, Milestone: MilestoneUserRetry})
		s.startAttempt(now, t, action)
		s.schedule(now) // another agent may have taken it, freeing an instance
	case RespondSkip:
		for _, d := range s.Tasks(func(o *Task) bool { return slices.Contains(o.DependsOn, t.ID) }) {
			s.emit(now, d.ID, "", TaskWarning{Text: fmt.Sprintf("%s was skipped; this task depends on it and may fail", t.ID)})
		}
		s.finish(now, t, Skipped, "skipped by the user")
	case RespondAbort:
		s.effect(StopTurn{TaskID: t.ID, Reason: "aborted"})
		if t.PlanID != "" {
			for _, o := range s.Tasks(func(o *Task) bool { return o.PlanID == t.PlanID && o.State == Queued }) {
				s.emit(now, o.ID, "", TaskStateChanged{From: Queued, To: Aborted, Reason: "plan aborted at " + t.ID})
			}
		}
		s.finish(now, t, Aborted, "aborted by the user; partial state kept")
	}
	return t.copy(), nil
}

// ProposalResult is a dry run's diff, made by the workspace.
type ProposalResult struct {
	TaskID string
	RunID  string
	Files  []string
	Error  string
}

// EndProposal records a dry run's diff: the task becomes proposed (and no
// longer holds the queue).
func (s *State) EndProposal(now time.Time, r ProposalResult) (Task, error) {
	now = norm(now)
	t, ok := s.tasks[r.TaskID]
	if !ok {
		return Task{}, notFoundf("no task %q", r.TaskID)
	}
	if t.State != Running || !t.DryRun || t.Applying {
		return Task{}, conflictf("task %s is not a dry run waiting for its diff", t.ID)
	}
	if r.Error != "" {
		s.failure(now, t, FailureRecord{Attempt: t.Attempt, Timestamp: now, FailureType: ExecutionError,
			ExecutorOutput: ExecutorOutput{Status: "failure", FilesModified: []string{}, Error: "making the diff: " + r.Error}})
		return t.copy(), nil
	}
	s.emit(now, t.ID, t.Agent, TaskProposedDiff{Proposal: Proposal{RunID: r.RunID, Files: nonNil(r.Files)}})
	if d := s.find(t.Delivery); d != nil && d.Holds {
		s.emit(now, t.ID, d.To, DeliveryReply{ID: d.ID, Kind: "task_ended", Released: true})
	}
	s.emit(now, t.ID, t.Agent, TaskStateChanged{From: t.State, To: Proposed, Reason: "dry run: review the diff, then apply or discard", Milestone: "Proposed: review the diff"})
	if a := s.agents[t.Agent]; a != nil && a.Status == Busy && s.holdingWith(a.Name, "") == 0 {
		s.setStatus(now, a, Available, "dry run "+t.ID+" proposed")
	}
	s.schedule(now)
	return t.copy(), nil
}

// ApplyTask queues a proposed dry run to be applied: when its turn comes,
// the diff is written into the working tree and the full debug loop runs.
func (s *State) ApplyTask(now time.Time, id string) (Task, error) {
	now = norm(now)
	t, ok := s.tasks[id]
	if !ok {
		return Task{}, notFoundf("no task %q", id)
	}
	if err := notProposed(t, "apply"); err != nil {
		return Task{}, err
	}
	s.emit(now, t.ID, t.Agent, TaskStateChanged{From: Proposed, To: Queued, Reason: "apply the proposed diff"})
	s.schedule(now)
	return s.tasks[id].copy(), nil
}

// notProposed says why a task has no proposed diff to apply or discard
// (verb), or is nil when it has one.
func notProposed(t *Task, verb string) error {
	switch {
	case t.State == Proposed:
		return nil
	case !t.DryRun:
		return conflictf("task %s is not a dry run: there is no diff to %s", t.ID, verb)
	case t.Proposal != nil && t.State == TaskCancelled:
		return conflictf("dry run %s was discarded: there is no diff to %s (submit the task again for a new one)", t.ID, verb)
	case t.Proposal != nil && t.State.Terminal():
		return conflictf("dry run %s was already applied (it ended %s): there is no diff to %s", t.ID, t.State, verb)
	case t.Proposal != nil:
		return conflictf("dry run %s was already applied (it is %s): there is no diff to %s", t.ID, t.State, verb)
	case t.State.Terminal():
		return conflictf("dry run %s ended %s before it proposed a diff: there is nothing to %s", t.ID, t.State, verb)
	}
	return conflictf("dry run %s has not proposed its diff yet (it is %s): wait until it is proposed, or cancel it", t.ID, t.State)
}

// DiscardTask discards a proposed dry run.
func (s *State) DiscardTask(now time.Time, id string) (Task, error) {
	now = norm(now)
	t, ok := s.tasks[id]
	if !ok {
		return Task{}, notFoundf("no task %q", id)
	}
	if err := notProposed(t, "discard"); err != nil {
		return Task{}, err
	}
	t2, _, err := s.CancelTask(now, id)
	return t2, err
}

// ApplyResult is the outcome of writing a proposal into the working tree.
type ApplyResult struct {
	TaskID string
	Error  string
	Files  []string
}

// EndApply records the proposal written into the working tree: the task
// goes to verification, or is escalated if the diff did not apply.
func (s *State) EndApply(now time.Time, r ApplyResult) (Task, error) {
	now = norm(now)
	t, ok := s.tasks[r.TaskID]
	if !ok {
		return Task{}, notFoundf("no task %q", r.TaskID)
	}
	if t.State != Running || !t.Applying || t.Phase != Verifying || t.RunID != "" {
		return Task{}, conflictf("task %s is not applying a proposal", t.ID)
	}
	if r.Error != "" {
		s.escalateTask(now, t, "the proposed diff does not apply: "+r.Error)
		return t.copy(), nil
	}
	s.verify(now, t)
	return t.copy(), nil
}

// ResumeTask starts a new task from a stuck one's report (not its whole
// history).
func (s *State) ResumeTask(now time.Time, id string) (Task, error) {
	now = norm(now)
	t, ok := s.tasks[id]
	if !ok {
		return Task{}, notFoundf("no task %q", id)
	}
	if t.State != Stuck || t.StuckReport == nil {
		return Task{}, conflictf("task %s is %s: only a stuck task can be resumed", t.ID, t.State)
	}
	return s.SubmitTask(now, TaskSpec{
		Description: t.Description, Constraints: t.Constraints, NonGoals: t.NonGoals, Boundaries: t.Boundaries,
		AcceptanceCriteria: t.AcceptanceCriteria, Agent: t.RequestedAgent, Package: t.Package, DryRun: t.DryRun, Land: t.Land,
		Context: "This task resumes " + t.ID + ", which stopped at the hard stop. Its stuck report:\n\n" + t.StuckReport.Markdown,
		Resumed: t.ID,
	})
}

// RecoverTasks is called once after a restart: the turn of an exec agent
// that was running died with the server and counts as an execution error
// of its attempt; a remote agent (mailbox, tmux) is still working, so its
// attempt stays running (its timers are armed again from the store) and
// its late report is accepted; a verification, an apply or the commit of
// a verified change that was running is started again.
func (s *State) RecoverTasks(now time.Time) {
	now = norm(now)
	for _, tt := range s.Tasks(func(t *Task) bool { return t.State == Running }) {
		t := s.tasks[tt.ID]
		switch {
		case t.Phase == Preparing && t.Worktree != "":
			s.effect(prepareWorktree(t))
		case t.Phase == Landing && t.Verified != nil && t.Worktree != "":
			switch {
			case !t.LandStarted:
			case t.Integration != nil && (t.Integration.Void || t.LandOn != "" && t.Integration.Passed):
				// Combined behind the tasks ahead of it, verified or
				// void: nothing of it is under way.
			case t.Integration != nil && !t.Integration.Passed:
				s.effect(s.integrationVerify(t))
			default:
				s.effect(landTask(t))
			}
		case t.Phase == Landing && t.Verified != nil:
			s.effect(landTask(t))
		case t.Phase != Verifying && !t.DryRun && !s.diesWithServer(t.Agent):
			s.emit(now, t.ID, t.Agent, TaskMilestone{Text: "wilco restarted: still waiting for agent " + t.Agent + " to report"})
		case t.Applying && t.Phase == Verifying && t.RunID == "":
			s.effect(ApplyProposal{TaskID: t.ID, RunID: t.Proposal.RunID})
		case t.Phase == Verifying:
			s.effect(RunVerify{TaskID: t.ID, Attempt: t.Attempt, RunID: t.RunID, Boundaries: slices.Clone(t.Boundaries), Worktree: t.Worktree})
		case t.DryRun && t.Milestone == MilestoneProposing:
			s.effect(MakeProposal{TaskID: t.ID, Attempt: t.Attempt, RunID: runID(t.ID, t.Attempt)})
		default:
			_, _ = s.EndTurn(now, TurnResult{TaskID: t.ID, Attempt: t.Attempt, Lost: true, ExitCode: -1})
		}
	}
	s.schedule(now)
	s.landNext(now)
}

// diesWithServer reports whether an agent's turns run as processes of the
// server (exec agents), which a crash of the server ends.
func (s *State) diesWithServer(agent string) bool {
	a := s.agents[agent]
	return a == nil || a.Adapter == "exec" || a.Adapter == "sim"
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:79] + "…"
	}
	return s
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// TaskOfIssue is the task made from a forge's issue, nil for none.
func (s *State) TaskOfIssue(issue int) *Task {
	if issue <= 0 {
		return nil
	}
	for _, t := range s.tasks {
		if t.Issue == issue {
			return t
		}
	}
	return nil
}
