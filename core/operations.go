package core

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"wilco/ack"
)

// Operations on agents: after the "ok" round wilco performs them on each
// agent itself (hibernate, wake, restart, install a skill or a plugin,
// maintenance). Any other operation runs its command, if any.
const (
	OpHibernate     = "hibernate"
	OpWake          = "wake"
	OpRestart       = "restart"
	OpInstallSkill  = "install-skill"
	OpInstallPlugin = "install-plugin"
	OpMaintenance   = "maintenance"
)

// AgentOperation reports whether name is an operation wilco performs on
// the agents themselves.
func AgentOperation(name string) bool {
	switch name {
	case OpHibernate, OpWake, OpRestart, OpInstallSkill, OpInstallPlugin, OpMaintenance:
		return true
	}
	return false
}

// OperationRequest asks for a pre-operation acknowledgment.
type OperationRequest struct {
	Name    string
	Agents  []string
	Message string
	Command []string
	// Target is what an install operation installs: a path.
	Target string
	// Policy overrides the configured operation policy when set.
	Policy *OperationPolicy
}

// Reminder tones, in order.
var tones = []string{"gentle", "firm", "final"}

// StartOperation sends the pre-operation request to every agent and waits
// for their "ok" under the reminders policy.
func (s *State) StartOperation(now time.Time, req OperationRequest) (Operation, error) {
	now = norm(now)
	if !validName(req.Name) {
		return Operation{}, invalidf("operation %q: use 1 to 64 of A-Z a-z 0-9 . _ : -", req.Name)
	}
	if len(req.Agents) == 0 {
		return Operation{}, invalidf("agents: name at least one agent")
	}
	for i, n := range req.Agents {
		if _, ok := s.agents[n]; !ok {
			return Operation{}, notFoundf("agents[%d]: no agent %q", i, n)
		}
		if slices.Index(req.Agents, n) != i {
			return Operation{}, invalidf("agents[%d]: %q is named twice", i, n)
		}
	}
	switch req.Name {
	case OpInstallSkill, OpInstallPlugin:
		if req.Target == "" {
			return Operation{}, invalidf("%s needs the path of what it installs (target)", req.Name)
		}
		if len(req.Command) > 0 {
			return Operation{}, invalidf("%s takes no command: wilco installs %s itself", req.Name, req.Target)
		}
	case OpMaintenance:
		if len(req.Command) == 0 {
			return Operation{}, invalidf("maintenance needs a command: it runs while the agents are hibernated")
		}
	case OpHibernate, OpWake, OpRestart:
		if len(req.Command) > 0 {
			return Operation{}, invalidf("%s takes no command: wilco performs it on the agents", req.Name)
		}
	}
	if req.Target != "" && req.Name != OpInstallSkill && req.Name != OpInstallPlugin {
		return Operation{}, invalidf("target: only install-skill and install-plugin take one")
	}
	p := s.policies.Operation
	if req.Policy != nil {
		p = *req.Policy
	}
	if err := p.Validate(); err != nil {
		return Operation{}, err
	}
	if _, err := p.Quorum.Need(len(req.Agents)); err != nil {
		return Operation{}, invalidf("quorum: %v", err)
	}
	o := Operation{
		ID: s.nextID("OP"), Name: req.Name, Agents: slices.Clone(req.Agents), Message: req.Message,
		Policy: p, Command: slices.Clone(req.Command), Target: req.Target, State: OpWaiting,
	}
	base := s.counters["M"]
	for i := range req.Agents {
		o.Deliveries = append(o.Deliveries, "M-"+strconv.Itoa(base+i+1))
	}
	s.emit(now, "", "", OperationStarted{Operation: o})
	deadline := now.Add(p.Timeout)
	first := deadline
	if len(p.Reminders) > 0 {
		first = now.Add(p.Reminders[0])
	}
	for i, agent := range o.Agents {
		m := Message{
			ID: o.Deliveries[i], From: Orchestrator, To: agent, Type: TypePreOperation, Policy: PolicyReminders,
			OperationID: o.ID, Subject: fmt.Sprintf("[%s] Pending - Acknowledgment Required", o.Name),
			Body: operationRequestText(o),
		}
		s.emit(now, "", agent, DeliverySent{Send{ID: m.ID, Attempt: 1, Kind: SendFirst, Round: 1, TimerAt: first, Message: &m}})
	}
	return s.operations[o.ID].copy(), nil
}

func operationRequestText(o Operation) string {
	what := o.Message
	if what == "" {
		what = operationWhat(o)
	}
	return fmt.Sprintf("I will %s. Please finish your current work and reply with \"ok\" when ready. I will wait up to %s.\n"+
		"- Reply \"ok\" to proceed.\n- Reply \"wait\" for more time (up to %s more, once).\n- Reply \"cancel\" to abort the operation.",
		what, seconds(o.Policy.Timeout), seconds(o.Policy.Extension))
}

// operationWhat says what an operation will do, for its request.
func operationWhat(o Operation) string {
	switch o.Name {
	case OpHibernate:
		return "hibernate you (stop your program, keeping your conversation to resume)"
	case OpWake:
		return "wake you (start your program again, resuming your conversation)"
	case OpRestart:
		return "restart you (stop your program and start it again, resuming your conversation and your task)"
	case OpInstallSkill:
		return "install the skill " + path.Base(o.Target) + " (you will be hibernated, then woken with it)"
	case OpInstallPlugin:
		return "install the plugin " + path.Base(o.Target) + " (you will be hibernated, then woken with it)"
	case OpMaintenance:
		return "run maintenance (" + strings.Join(o.Command, " ") + ") while you are hibernated"
	}
	return "perform " + o.Name
}

// runOperation is the effect that performs a proceeding operation.
func (s *State) runOperation(o *Operation) RunOperation {
	e := RunOperation{ID: o.ID, Name: o.Name, Agents: slices.Clone(o.Agents), Target: o.Target, Command: slices.Clone(o.Command)}
	for _, n := range o.Agents {
		if a := s.agents[n]; a != nil && a.Conversation != "" {
			if e.Conversations == nil {
				e.Conversations = map[string]string{}
			}
			e.Conversations[n] = a.Conversation
		}
	}
	return e
}

// seconds says d in whole seconds: "1 second", "90 seconds".
func seconds(d time.Duration) string {
	n := int(d.Round(time.Second) / time.Second)
	if n == 1 {
		return "1 second"
	}
	return fmt.Sprintf("%d seconds", n)
}

// reminderTimer is a waiting agent's next timer: its next reminder, or its
// deadline.
func (s *State) reminderTimer(d *Delivery) time.Time {
	o := s.operations[d.OperationID]
	if o == nil || d.Wait == nil {
		return time.Time{}
	}
	if d.Wait.Reminded < len(o.Policy.Reminders) {
		if at := o.CreatedAt.Add(o.Policy.Reminders[d.Wait.Reminded]); at.Before(d.Wait.Deadline) {
			return at
		}
	}
	return d.Wait.Deadline
}

// reminderDue sends the next reminder, or, at the deadline, the timeout
// notice.
func (s *State) reminderDue(now time.Time, d *Delivery) {
	o := s.operations[d.OperationID]
	if o == nil || o.State != OpWaiting || d.Wait == nil {
		return
	}
	deadline := d.Wait.Deadline
	if !now.Before(deadline) {
		body := fmt.Sprintf("No response received after %s. Proceeding with %s now.", seconds(deadline.Sub(o.CreatedAt)), o.Name)
		switch {
		case !o.Policy.ProceedOnTimeout:
			body = fmt.Sprintf("No response received after %s. %s will not proceed without acknowledgment.", seconds(deadline.Sub(o.CreatedAt)), o.Name)
		case len(o.Agents) > 1:
			body = fmt.Sprintf("No response received after %s. %s proceeds only if its quorum (%s) acknowledged.", seconds(deadline.Sub(o.CreatedAt)), o.Name, o.Policy.Quorum)
		}
		s.notice(now, d, SendTimeoutNotice, "Proceeding Without Acknowledgment", body)
		s.emit(now, "", d.To, DeliveryFailed{ID: d.ID, Reason: "timeout", Attempts: d.Sends})
		s.resolve(now, o)
		return
	}
	n := d.Wait.Reminded + 1
	tone := tones[min(n, len(tones))-1]
	remaining := deadline.Sub(now)
	verb := "proceed"
	if !o.Policy.ProceedOnTimeout {
		verb = "abort"
	}
	var body string
	switch tone {
	case "gentle":
		body = fmt.Sprintf("Reminder: Please reply 'ok' when ready for the pending %s. %s remaining before I %s.", o.Name, seconds(remaining), verb)
	case "firm":
		body = fmt.Sprintf("Second reminder: %s is waiting for your 'ok'. Reply 'ok', 'wait' or 'cancel' now. %s remaining before I %s.", o.Name, seconds(remaining), verb)
	default:
		body = fmt.Sprintf("Final notice: reply 'ok' now. %s remaining before I %s with %s.", seconds(remaining), verb, o.Name)
	}
	s.emit(now, "", d.To, OperationReminder{ID: o.ID, Delivery: d.ID, Number: n, Tone: tone, Remaining: remaining})
	s.emit(now, "", d.To, DeliveryRetried{Send{
		ID: d.ID, Attempt: d.Sends + 1, Kind: SendReminder, Round: d.Round + 1,
		Subject: "Reminder: Acknowledgment Required", Body: body, TimerAt: s.reminderTimer(d),
	}})
}

// operationAnswer acts on an agent's answer to an operation.
func (s *State) operationAnswer(now time.Time, d *Delivery, answer ack.OperationAnswer, text string) (Interpretation, error) {
	o := s.operations[d.OperationID]
	in := Interpretation{Kind: string(ack.KindOperationReply), DeliveryID: d.ID, OperationID: d.OperationID, Status: string(answer)}
	if o == nil {
		return in, notFoundf("no operation %q", d.OperationID)
	}
	if o.State != OpWaiting {
		return in, conflictf("operation %s is already %s", o.ID, o.State)
	}
	if d.State.Terminal() {
		return in, s.settled(d)
	}
	a := s.agents[d.To]
	s.seen(now, a, "replied")
	switch answer {
	case ack.AnswerOK:
		s.emit(now, "", d.To, OperationReply{ID: o.ID, Delivery: d.ID, Answer: string(answer), Text: text})
		s.emit(now, "", d.To, DeliveryAcknowledged{ID: d.ID, By: "agent", Status: "ok"})
		in.Acknowledged = []string{d.ID}
		s.resolve(now, o)
		in.Action = "ready recorded; operation " + string(o.State)
	case ack.AnswerWait:
		if d.Wait.Extended {
			s.emit(now, "", d.To, OperationReply{ID: o.ID, Delivery: d.ID, Answer: string(answer), Text: text})
			in.Action = "the one extension was already granted; still waiting"
			return in, nil
		}
		deadline := d.Wait.Deadline.Add(o.Policy.Extension)
		s.emit(now, "", d.To, OperationReply{ID: o.ID, Delivery: d.ID, Answer: string(answer), Text: text, Deadline: deadline})
		s.notice(now, d, SendExtension, "Extension Granted",
			fmt.Sprintf("Extension granted. You now have %s remaining. Please reply \"ok\" when ready.", seconds(deadline.Sub(now))))
		in.Action = "extension granted until " + deadline.Format(time.RFC3339)
	case ack.AnswerCancel:
		s.emit(now, "", d.To, OperationReply{ID: o.ID, Delivery: d.ID, Answer: string(answer), Text: text})
		s.endOperation(now, o, OpCancelled, "cancelled at the request of "+d.To)
		in.Action = "operation cancelled"
	default:
		s.emit(now, "", d.To, OperationReply{ID: o.ID, Delivery: d.ID, Answer: string(ack.AnswerInfo), Text: text})
		in.Action = "logged as information; still waiting for \"ok\""
	}
	return in, nil
}

// CancelOperation cancels a waiting operation (the user's decision).
func (s *State) CancelOperation(now time.Time, id, reason string) (Operation, error) {
	now = norm(now)
	o, ok := s.operations[id]
	if !ok {
		return Operation{}, notFoundf("no operation %q", id)
	}
	if o.State != OpWaiting {
		return Operation{}, conflictf("operation %s is %s, not waiting", o.ID, o.State)
	}
	if reason == "" {
		reason = "cancelled by the user"
	}
	s.endOperation(now, o, OpCancelled, reason)
	return o.copy(), nil
}

// endOperation ends a waiting operation without proceeding; every agent
// still waiting is told.
func (s *State) endOperation(now time.Time, o *Operation, to OperationState, reason string) {
	for _, id := range o.Deliveries {
		d := s.find(id)
		if !d.State.Terminal() {
			s.emit(now, "", d.To, DeliveryCancelled{ID: d.ID, Reason: reason})
		}
	}
	s.emit(now, "", "", OperationStateChanged{ID: o.ID, From: o.State, To: to, Reason: reason})
	s.outcome(now, o, fmt.Sprintf("%s is %s: %s.", o.Name, to, reason))
}

// outcome tells every agent of the operation how it ended.
func (s *State) outcome(now time.Time, o *Operation, text string) {
	for _, id := range o.Deliveries {
		s.notice(now, s.find(id), SendOperationOutcome, fmt.Sprintf("[%s] %s", o.Name, o.State), text)
	}
}

// resolve decides a waiting operation once every agent has answered "ok"
// or timed out: proceed when all said ok; on timeout, proceed only if
// proceed_on_timeout is set and (a single agent, or) the quorum said ok.
func (s *State) resolve(now time.Time, o *Operation) {
	if o.State != OpWaiting {
		return
	}
	ok := 0
	for _, id := range o.Deliveries {
		switch s.find(id).State {
		case Acknowledged:
			ok++
		case Sent, Pending:
			return
		}
	}
	n := len(o.Agents)
	if ok == n {
		s.proceed(now, o, OperationStateChanged{ID: o.ID, From: o.State, To: OpProceeding, Reason: "every agent acknowledged"})
		return
	}
	need, _ := o.Policy.Quorum.Need(n)
	switch {
	case !o.Policy.ProceedOnTimeout:
		s.emit(now, "", "", OperationStateChanged{ID: o.ID, From: o.State, To: OpAborted, TimeoutOccurred: true,
			Reason: fmt.Sprintf("%d of %d agents acknowledged and proceed_on_timeout is off", ok, n)})
		s.outcome(now, o, fmt.Sprintf("%s is aborted: not every agent acknowledged in time.", o.Name))
	case n == 1 || ok >= need:
		s.proceed(now, o, OperationStateChanged{ID: o.ID, From: o.State, To: OpProceeding, TimeoutOccurred: true, ProceededAnyway: true,
			Reason: fmt.Sprintf("timeout: %d of %d agents acknowledged; proceeding anyway", ok, n)})
	default:
		s.emit(now, "", "", OperationStateChanged{ID: o.ID, From: o.State, To: OpAborted, TimeoutOccurred: true,
			Reason: fmt.Sprintf("timeout: %d of %d agents acknowledged, quorum needs %d", ok, n, need)})
		s.outcome(now, o, fmt.Sprintf("%s is aborted: its quorum did not acknowledge in time.", o.Name))
	}
}

func (s *State) proceed(now time.Time, o *Operation, ch OperationStateChanged) {
	s.emit(now, "", "", ch)
	if len(o.Command) == 0 && !AgentOperation(o.Name) {
		zero := 0
		s.emit(now, "", "", OperationStateChanged{ID: o.ID, From: OpProceeding, To: OpDone, Reason: "no command to run", ExitCode: &zero})
		s.outcome(now, o, fmt.Sprintf("%s is done.", o.Name))
	}
}

// FinishOperation records the end of a proceeding operation's command.
func (s *State) FinishOperation(now time.Time, id string, exitCode int, output string) (Operation, error) {
	return s.FinishAgentOperation(now, id, nil, exitCode, output)
}

// FinishAgentOperation records the end of a proceeding operation: what it
// did to each agent (their new status, a hibernated agent's conversation)
// and its command's exit status. It is done when every agent's part and
// the command succeeded, else failed.
func (s *State) FinishAgentOperation(now time.Time, id string, results []OperationResult, exitCode int, output string) (Operation, error) {
	now = norm(now)
	o, ok := s.operations[id]
	if !ok {
		return Operation{}, notFoundf("no operation %q", id)
	}
	if o.State != OpProceeding {
		return Operation{}, conflictf("operation %s is %s, not proceeding", o.ID, o.State)
	}
	for i, r := range results {
		if !slices.Contains(o.Agents, r.Agent) {
			return Operation{}, invalidf("results[%d]: %q is not an agent of %s", i, r.Agent, o.ID)
		}
		if r.Status != "" && !r.Status.Valid() {
			return Operation{}, invalidf("results[%d]: status %q", i, r.Status)
		}
	}
	to := OpDone
	if exitCode != 0 {
		to = OpFailed
	}
	failed := 0
	for _, r := range results {
		if !r.Done {
			failed++
		}
		a := s.agents[r.Agent]
		if a == nil || r.Status == "" || a.Status == r.Status && r.Conversation == "" {
			continue
		}
		s.emit(now, "", a.Name, AgentStatusChanged{From: a.Status, To: r.Status, Reason: fmt.Sprintf("%s %s: %s", o.ID, o.Name, firstOf(r.Action, r.Error)),
			Conversation: r.Conversation})
	}
	if failed > 0 {
		to = OpFailed
	}
	const maxOutput = 64 << 10
	if len(output) > maxOutput {
		output = output[len(output)-maxOutput:]
	}
	reason := fmt.Sprintf("command exited with status %d", exitCode)
	switch {
	case AgentOperation(o.Name) && failed > 0:
		reason = fmt.Sprintf("%d of %d agents failed", failed, len(results))
	case AgentOperation(o.Name) && len(o.Command) == 0:
		reason = fmt.Sprintf("performed on %d agents", len(results))
	case AgentOperation(o.Name):
		reason = fmt.Sprintf("performed on %d agents; command exited with status %d", len(results), exitCode)
	}
	s.emit(now, "", "", OperationStateChanged{ID: o.ID, From: o.State, To: to, ExitCode: &exitCode, Output: output,
		Reason: reason, Results: slices.Clone(results)})
	text := fmt.Sprintf("%s is %s (exit status %d).", o.Name, to, exitCode)
	if AgentOperation(o.Name) {
		text = fmt.Sprintf("%s is %s: %s.", o.Name, to, reason)
	}
	s.outcome(now, o, text)
	return o.copy(), nil
}

// NotePermission records a permission question an agent asked (a tool it
// wants), and how its allow list answered it (allowed, denied, or "":
// waiting for the user); the task it works on gets it as its milestone.
func (s *State) NotePermission(now time.Time, agent, taskID string, attempt int, tool, text, answer string) error {
	now = norm(now)
	if _, ok := s.agents[agent]; !ok {
		return notFoundf("no agent %q", agent)
	}
	const maxText = 2000
	if len(text) > maxText {
		text = text[:maxText] + "…"
	}
	s.emit(now, taskID, agent, AgentPermission{TaskID: taskID, Tool: tool, Text: text, Answer: answer})
	t := s.tasks[taskID]
	if t == nil || t.Attempt != attempt || t.State != Running && t.State != AwaitingAck {
		return nil
	}
	what := firstOf(tool, "a tool")
	var m string
	switch answer {
	case "allowed":
		m = "Permission for " + what + ": allowed by the allow list"
	case "denied":
		m = "Permission for " + what + ": denied (not in the allow list)"
	default:
		m = "Waiting for permission: " + what + " (answer in the agent's pane: " + attachCommand(agent, t) + ")"
	}
	if len(m) > 120 {
		m = m[:119] + "…"
	}
	s.emit(now, t.ID, t.Agent, TaskMilestone{Text: m})
	return nil
}

// RunningOperations lists operations that were proceeding: after a restart
// their command's fate is unknown and the runtime must decide.
func (s *State) RunningOperations() []string {
	var out []string
	for id, o := range s.operations {
		if o.State == OpProceeding {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if idLess(a, b) {
			return -1
		}
		return 1
	})
	return out
}

// attachCommand is the command that opens the pane an agent asks its
// question in: a task worked in parallel is worked in a session of its
// own (--task), the rest in the agent's.
func attachCommand(agent string, t *Task) string {
	if t != nil && t.Worktree != "" {
		return "wilco attach " + agent + " --task " + t.ID
	}
	return "wilco attach " + agent
}
