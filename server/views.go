package server

import (
	"cmp"
	"encoding/json"
	"time"

	"wilco/core"
	"wilco/store"
	"wilco/wire"
)

// This file is the one place where core's state becomes the API's bodies
// (package wire): every answer is built here.

func (s *Server) agentView(a core.Agent) wire.Agent {
	v := wire.Agent{
		Name: a.Name, Adapter: wire.Adapter(a.Adapter), Capabilities: nonNil(a.Capabilities), Status: wire.AgentStatus(a.Status),
		Pull: a.Pull, Role: wire.Role(a.Role), Context: agentContext(a.Context), HasToken: a.TokenHash != "",
		Waiting: len(a.Inbox) + len(a.Pending), Unacknowledged: len(a.Unacked), Polling: s.waiting(a.Name),
		FromConfig: a.FromConfig, Removed: a.Removed, LastSeen: timePtr(a.LastSeen), Conversation: a.Conversation,
	}
	if f := s.opts.PaneState; f != nil && a.Adapter == "tmux" {
		if p, ok := f(a.Name); ok {
			p.Attach = nonNil(p.Attach)
			v.Pane = &p
		}
	}
	return v
}

// agentViews renders agents with their records and usage, from one pass
// over the tasks; run it on the loop.
func (s *Server) agentViews(c *core.State, agents ...core.Agent) []wire.Agent {
	records := c.AgentRecords()
	usage := c.UsageTotals(nil).ByAgent
	out := make([]wire.Agent, 0, len(agents))
	for _, a := range agents {
		v := s.agentView(a)
		r := records[a.Name]
		v.CurrentTask, v.FinishedTasks, v.FirstAttemptSuccess = r.CurrentTask, r.Finished, r.FirstAttemptSuccess
		v.Usage = wire.Usage(usage[a.Name])
		out = append(out, v)
	}
	return out
}

func agentContext(c *core.AgentContext) *wire.AgentContext {
	if c == nil {
		return nil
	}
	v := wire.AgentContext(*c)
	return &v
}

func messageView(d core.Delivery, orch string) wire.Message {
	from := d.From
	if from == core.Orchestrator {
		from = orch
	}
	return wire.Message{
		ID: d.ID, From: from, To: d.To, Type: wire.MessageType(d.Type), Policy: wire.Policy(d.Policy), Subject: d.Subject, Body: d.Body,
		TaskID: d.TaskID, OperationID: d.OperationID, State: wire.DeliveryState(d.State), Attempts: d.Sends, Answer: d.Answer,
		Understanding: d.Understanding(), Questions: d.Questions(), Reason: d.Reason,
		CreatedAt: d.CreatedAt, SentAt: timePtr(d.SentAt), AcknowledgedAt: timePtr(d.AcknowledgedAt()),
		FailedAt: timePtr(d.FailedAt()), CancelledAt: timePtr(d.CancelledAt()),
	}
}

func instructionView(d core.Delivery) wire.Instruction {
	v := wire.Instruction{
		ID: d.ID, Agent: d.To, Content: d.Body, State: wire.DeliveryState(d.State), RetryCount: d.RetryCount(), MaxRetries: d.MaxRetries,
		Reason: d.Reason, CreatedAt: d.CreatedAt, SentAt: timePtr(d.SentAt),
		AcknowledgedAt: timePtr(d.AcknowledgedAt()), FailedAt: timePtr(d.FailedAt()), CancelledAt: timePtr(d.CancelledAt()),
	}
	if d.Matcher != nil {
		m := wire.Matcher(*d.Matcher)
		v.AckWhen = &m
	}
	return v
}

// inboxMessages are sends as their agent receives them, the
// orchestrator's configured name on its own: the name the agent writes
// back to.
func inboxMessages(msgs []core.InboxMessage, orch string) []wire.InboxMessage {
	out := make([]wire.InboxMessage, 0, len(msgs))
	for _, m := range msgs {
		if m.From == core.Orchestrator {
			m.From = orch
		}
		out = append(out, wire.InboxMessage(m))
	}
	return out
}

func interpretation(in core.Interpretation) wire.Interpretation {
	return wire.Interpretation{Kind: wire.Kind(in.Kind), DeliveryID: in.DeliveryID, TaskID: in.TaskID, OperationID: in.OperationID,
		Status: in.Status, Understanding: in.Understanding, Questions: in.Questions, Action: in.Action, Acknowledged: in.Acknowledged}
}

func consultation(c core.Consultation) wire.Consultation {
	return wire.Consultation{ID: c.ID, TaskID: c.TaskID, Attempt: c.Attempt, From: c.From, Scout: c.Scout, Question: c.Question,
		State: wire.ConsultationState(c.State), Answer: c.Answer, Error: c.Error, AskedAt: c.AskedAt, EndedAt: c.EndedAt}
}

func operationView(o core.Operation, c *core.State) wire.Operation {
	v := wire.Operation{
		ID: o.ID, Operation: o.Name, State: wire.OperationState(o.State), Message: o.Message, Command: o.Command,
		RemindersSent: o.RemindersSent, TimeoutOccurred: o.TimeoutOccurred, ProceededAnyway: o.ProceededAnyway,
		Reason: o.Reason, ExitCode: o.ExitCode, Output: o.Output, CreatedAt: o.CreatedAt, FinishedAt: timePtr(o.FinishedAt),
		Timeout: wire.Duration(o.Policy.Timeout), Extension: wire.Duration(o.Policy.Extension),
		ProceedOnTimeout: o.Policy.ProceedOnTimeout, Quorum: string(o.Policy.Quorum), Reminders: []wire.Duration{},
		Agents: []wire.OperationAgent{}, Target: o.Target,
	}
	for _, r := range o.Policy.Reminders {
		v.Reminders = append(v.Reminders, wire.Duration(r))
	}
	for _, r := range o.Results {
		v.Results = append(v.Results, wire.OperationResult{Agent: r.Agent, Done: r.Done, Action: r.Action, Error: r.Error,
			Status: wire.AgentStatus(r.Status), Conversation: r.Conversation})
	}
	acked := 0
	for i, name := range o.Agents {
		av := wire.OperationAgent{Name: name}
		if i < len(o.Deliveries) {
			av.Message = o.Deliveries[i]
			if d, ok := c.Delivery(o.Deliveries[i]); ok {
				av.Extended = d.Wait != nil && d.Wait.Extended
				var resp string
				switch {
				case d.State == core.Acknowledged:
					resp = "ok"
					if d.Answer != "" {
						resp = d.Answer
					}
					av.RespondedAt = timePtr(d.AcknowledgedAt())
					acked++
				case d.State == core.Failed && d.Reason == "timeout":
					resp = "timeout"
				case d.State == core.Cancelled && o.Reason == "cancelled at the request of "+name:
					resp = "cancel"
					av.RespondedAt = timePtr(d.CancelledAt())
				case av.Extended:
					resp = "wait"
				}
				if resp != "" {
					av.Response = &resp
				}
			}
		}
		v.Agents = append(v.Agents, av)
	}
	v.AcknowledgmentReceived = len(o.Agents) > 0 && acked == len(o.Agents)
	return v
}

func notificationView(n core.Notification, maxAttempts int) wire.Notification {
	v := wire.Notification{
		ID: n.ID, Hook: n.Hook, Event: wire.NotifyEvent(n.Event), TaskID: n.TaskID, Agent: n.Agent, OperationID: n.OperationID,
		Subject: n.Subject, TaskState: n.Status, Reason: n.Reason, State: wire.NotificationState(n.State), Attempts: n.Attempts,
		MaxAttempts: maxAttempts, LastError: n.LastError, CreatedAt: n.CreatedAt, LastAttemptAt: timePtr(n.LastAttemptAt),
		NextAttemptAt: timePtr(n.TimerAt), DeliveredAt: timePtr(n.DeliveredAt), FailedAt: timePtr(n.FailedAt),
	}
	if n.LastStatus != 0 {
		st := n.LastStatus
		v.LastStatus = &st
	}
	return v
}

func eventView(ev store.Event) wire.Event {
	data := json.RawMessage(ev.Data)
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	return wire.Event{Seq: ev.Seq, Time: ev.Time.UTC(), Type: ev.Type, TaskID: ev.TaskID, Agent: ev.Agent, Data: data}
}

// taskView renders a task; c gives its position and the agent's questions.
func taskView(c *core.State, t core.Task) wire.Task {
	pos := 0
	if t.State == core.Queued {
		pos = c.Position(t.ID)
	}
	return taskViewAt(c, t, pos)
}

// taskViewAt renders a task whose queue position is known.
func taskViewAt(c *core.State, t core.Task, position int) wire.Task {
	v := wire.Task{
		ID: t.ID, Description: t.Description, Constraints: nonNil(t.Constraints), NonGoals: nonNil(t.NonGoals), Boundaries: nonNil(t.Boundaries),
		AcceptanceCriteria: nonNil(t.AcceptanceCriteria), State: wire.TaskState(t.State), Phase: phase(t), DryRun: t.DryRun, Agent: t.Agent,
		Attempt: t.Attempt, MaxAttempts: c.Policies().Loop.HardStop, ConsecutiveFailures: t.ConsecutiveFailures,
		TotalVerifyLoops: t.TotalVerifyLoops, Replans: t.Replans, Milestone: t.Milestone, Questions: []string{},
		Failures: failureRecords(t.Failures), CreatedAt: t.CreatedAt, StartedAt: timePtr(t.StartedAt), FinishedAt: timePtr(t.FinishedAt),
		RunID: t.RunID, RunIDs: t.RunIDs, BlockedBy: t.BlockedBy, Warnings: t.Warnings, PlanID: t.PlanID, DependsOn: t.DependsOn,
		ResumedFrom: t.ResumedFrom, Delivery: t.Delivery, Usage: wire.Usage(t.Usage), Usages: []wire.UsageRecord{}, Package: t.Package,
		Land: wire.LandHow(cmp.Or(t.Land, core.LandNone)), LandedCommit: t.LandedCommit,
		Branch: t.Branch, Worktree: t.Worktree, KeepWorktree: t.KeepWorktree, Issue: t.Issue,
	}
	if t.State == core.Running && t.Phase == core.Landing && t.Worktree != "" {
		v.LandPosition = c.LandPosition(t.ID)
	}
	if pr := t.PR; pr != nil {
		v.PullRequest = &wire.PullRequest{Number: pr.Number, URL: pr.URL, Head: pr.Head, Checks: pr.Checks, ChecksDone: pr.ChecksDone,
			CIDeadline: timePtr(pr.CIDeadline), Ready: pr.Ready, Merging: pr.Merging}
	}
	if e := t.Escalation; e != nil {
		v.Escalation = &wire.Escalation{Reason: e.Reason, Message: e.Message, At: e.At}
	}
	if sum := t.Summary; sum != nil {
		v.Summary = &wire.TaskSummary{Files: nonNil(sum.Files), Why: sum.Why, RunID: sum.RunID, Text: sum.Text}
	}
	if r := t.StuckReport; r != nil {
		v.StuckReport = &wire.StuckReport{Hypotheses: nonNil(r.Hypotheses), RunIDs: nonNil(r.RunIDs), Path: r.Path, Markdown: r.Markdown}
	}
	if p := t.Proposal; p != nil {
		v.Proposal = &wire.Proposal{RunID: p.RunID, Files: nonNil(p.Files)}
	}
	if r := t.Review; r != nil {
		v.Review = &wire.Review{Attempt: r.Attempt, Reviewer: r.Reviewer, Delivery: r.Delivery, RunID: r.RunID, Command: r.Command,
			Files: r.Files, Warnings: r.Warnings, Verdict: wire.Verdict(r.Verdict), Reasons: r.Reasons, At: r.At}
	}
	for _, u := range t.Usages {
		v.Usages = append(v.Usages, wire.UsageRecord{Attempt: u.Attempt, Agent: u.Agent, Day: u.Day, Usage: wire.Usage(u.Usage)})
	}
	for _, q := range t.Consultations {
		v.Consultations = append(v.Consultations, consultation(q))
	}
	if t.State == core.Queued {
		v.Position = &position
	}
	if t.State == core.TaskClarifying {
		if d, ok := c.Delivery(t.Delivery); ok {
			v.Questions = append(v.Questions, d.Questions()...)
		}
	}
	return v
}

// phase is a running task's phase, nil in any other state.
func phase(t core.Task) *wire.Phase {
	if t.Phase == "" || t.State != core.Running {
		return nil
	}
	p := wire.Phase(t.Phase)
	return &p
}

func failureRecords(fs []core.FailureRecord) []wire.FailureRecord {
	out := make([]wire.FailureRecord, 0, len(fs))
	for _, f := range fs {
		r := wire.FailureRecord{Attempt: f.Attempt, Timestamp: f.Timestamp, FailureType: wire.FailureType(f.FailureType), RunID: f.RunID,
			ExecutorOutput: wire.ExecutorOutput{Status: f.ExecutorOutput.Status, FilesModified: nonNil(f.ExecutorOutput.FilesModified),
				Error: f.ExecutorOutput.Error},
			RootCauseGuess: f.RootCauseGuess, SuggestedFix: f.SuggestedFix, Details: f.Details, Escalate: f.Escalate, DurationMS: f.DurationMS}
		if vf := f.ExecutorOutput.Verification; vf != nil {
			w := wire.Verification(*vf)
			r.ExecutorOutput.Verification = &w
		}
		for _, fs := range f.FilesState {
			r.FilesState = append(r.FilesState, wire.FileState(fs))
		}
		out = append(out, r)
	}
	return out
}

// taskBrief renders a task as a list shows it.
func taskBrief(t core.Task, position, maxAttempts int) wire.TaskBrief {
	b := wire.TaskBrief{
		ID: t.ID, Description: firstLine(t.Description, briefDescription), State: wire.TaskState(t.State), Phase: phase(t), DryRun: t.DryRun,
		Agent: t.Agent, Attempt: t.Attempt, MaxAttempts: maxAttempts, Milestone: t.Milestone, PlanID: t.PlanID, CostUSD: t.Usage.CostUSD,
		CreatedAt: t.CreatedAt, StartedAt: timePtr(t.StartedAt), FinishedAt: timePtr(t.FinishedAt),
	}
	if position > 0 {
		b.Position = &position
	}
	return b
}

func planView(c *core.State, p core.Plan) wire.Plan {
	v := wire.Plan{ID: p.ID, State: wire.PlanState(p.State), Tasks: []wire.Task{}, CreatedAt: p.CreatedAt, FinishedAt: timePtr(p.FinishedAt)}
	for _, id := range p.Tasks {
		if t, ok := c.Task(id); ok {
			v.Tasks = append(v.Tasks, taskView(c, t))
		}
	}
	if p.Summary != nil {
		sum := retrySummary(*p.Summary)
		v.Summary = &sum
	}
	return v
}

func retrySummary(s core.PlanSummary) wire.RetrySummary {
	v := wire.RetrySummary{TotalTasks: s.TotalTasks, FirstAttemptSuccess: s.FirstAttemptSuccess, RetriedTasks: s.RetriedTasks,
		RetrySuccess: s.RetrySuccess, Escalations: s.Escalations, Skipped: s.Skipped, Unverified: s.Unverified, Landed: s.Landed, LeftOnBranch: s.LeftOnBranch,
		Conflicted: s.Conflicted, IntegrationFailed: s.IntegrationFailed,
		Details: []wire.SummaryRow{}, FailurePatterns: []wire.FailurePattern{}, Text: s.Text}
	for _, r := range s.Details {
		v.Details = append(v.Details, wire.SummaryRow(r))
	}
	for _, p := range s.FailurePatterns {
		v.FailurePatterns = append(v.FailurePatterns, wire.FailurePattern(p))
	}
	return v
}

func retryState(r core.RetryState) wire.RetryState {
	v := wire.RetryState{TaskRetries: map[string]wire.TaskRetry{}, GlobalStats: wire.GlobalStats(r.GlobalStats)}
	for id, t := range r.TaskRetries {
		w := wire.TaskRetry{TaskID: t.TaskID, TaskName: t.TaskName, RetryCount: t.RetryCount, MaxRetries: t.MaxRetries, Status: t.Status,
			Failures: []wire.RetryFailure{}, CurrentAttempt: t.CurrentAttempt, StartedAt: t.StartedAt, LastAttemptAt: t.LastAttemptAt}
		for _, f := range t.Failures {
			w.Failures = append(w.Failures, wire.RetryFailure{Attempt: f.Attempt, Timestamp: f.Timestamp,
				FailureType: wire.FailureType(f.FailureType), ErrorSummary: f.ErrorSummary, SuggestedFix: f.SuggestedFix})
		}
		v.TaskRetries[id] = w
	}
	return v
}

func usageTotals(u core.UsageTotals) wire.UsageTotals {
	v := wire.UsageTotals{Total: wire.Usage(u.Total), ByAgent: map[string]wire.Usage{}, ByDay: map[string]wire.Usage{}}
	for k, x := range u.ByAgent {
		v.ByAgent[k] = wire.Usage(x)
	}
	for k, x := range u.ByDay {
		v.ByDay[k] = wire.Usage(x)
	}
	return v
}

func dayNumbers(days []core.DayNumbers) []wire.DayNumbers {
	out := make([]wire.DayNumbers, 0, len(days))
	for _, d := range days {
		out = append(out, wire.DayNumbers{Day: d.Day, Finished: d.Finished, Success: d.Success, FirstAttemptSuccess: d.FirstAttemptSuccess,
			Retried: d.Retried, RetrySuccess: d.RetrySuccess, Escalations: d.Escalations, Failures: nonNilMap(d.Failures), Usage: wire.Usage(d.Usage)})
	}
	return out
}

// timePtr is nil for the zero time, so that it encodes as null.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}
