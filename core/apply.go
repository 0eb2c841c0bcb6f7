package core

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"wilco/ack"
)

// apply is the only place the state changes. It is called for live events
// (emit) and for replayed ones (Replay); effects are produced only when
// live.
//
// Every entity carries the seq of the last event that changed it
// (Version). apply changes an entity only when the event is newer than the
// entity, so replaying the log's tail over a checkpoint whose entities were
// saved at different moments changes each entity exactly as the live core
// did. That is what lets the runtime write checkpoints a little at a time.
func (s *State) apply(ev Event) {
	s.applyEvent(ev)
	if name := heardFrom(ev); name != "" {
		s.heard(name, ev.Seq, ev.Time)
	}
	// Keep the index of open deliveries by agent: replies without
	// in_reply_to look there, not through every delivery ever made.
	for _, d := range s.changed {
		if d.State.Terminal() {
			if m := s.open[d.To]; m != nil {
				delete(m, d.ID)
			}
			s.settle(d)
			continue
		}
		m := s.open[d.To]
		if m == nil {
			m = map[string]*Delivery{}
			s.open[d.To] = m
		}
		m[d.ID] = d
	}
	s.changed = s.changed[:0]
}

// applyEvent applies one event: those of operations here; of the
// policies and agents in applyAgentEvent, of deliveries in applySendEvent
// and applyDeliveryEnd, of tasks and plans in applyTask.
func (s *State) applyEvent(ev Event) {
	now, seq := ev.Time, ev.Seq
	if s.applyAgentEvent(ev) || s.applySendEvent(ev) || s.applyDeliveryEnd(ev) {
		return
	}
	switch e := ev.Data.(type) {
	case ForgeCall:
		// A record only.
	case OperationStarted:
		s.noteID(e.Operation.ID)
		if o, ok := s.operations[e.Operation.ID]; ok && o.Version >= seq {
			return
		}
		o := e.Operation
		o.Agents, o.Deliveries, o.Command = slices.Clone(o.Agents), slices.Clone(o.Deliveries), slices.Clone(o.Command)
		o.Policy.Reminders = slices.Clone(o.Policy.Reminders)
		o.CreatedAt, o.Version, o.StartSeq = now, seq, seq
		s.operations[o.ID] = &o
		s.touch(KindOperation, o.ID)

	case OperationReminder:
		if o := s.operationAt(e.ID, seq); o != nil {
			o.RemindersSent++
		}
		if d := s.deliveryAt(e.Delivery, seq); d != nil && d.Wait != nil {
			d.Wait.Reminded = e.Number
		}

	case OperationReply:
		d := s.deliveryAt(e.Delivery, seq)
		if d != nil && !e.Deadline.IsZero() && d.Wait != nil {
			d.Wait.Deadline, d.Wait.Extended = e.Deadline, true
			s.setTimer(d, s.reminderTimer(d))
		}

	case OperationStateChanged:
		o := s.operationAt(e.ID, seq)
		if o == nil {
			return
		}
		o.State = e.To
		if e.Reason != "" {
			o.Reason = e.Reason
		}
		o.TimeoutOccurred = o.TimeoutOccurred || e.TimeoutOccurred
		o.ProceededAnyway = o.ProceededAnyway || e.ProceededAnyway
		if e.ExitCode != nil {
			c := *e.ExitCode
			o.ExitCode = &c
			o.Output = e.Output
		}
		if len(e.Results) > 0 {
			o.Results = slices.Clone(e.Results)
		}
		if e.To.Terminal() {
			o.FinishedAt = now
		}
		if e.To == OpProceeding {
			s.effect(s.runOperation(o))
		}

	default:
		s.applyTask(ev)
	}
}

// applyAgentEvent applies the events of the policies and of agents; it
// reports whether ev was one of them.
func (s *State) applyAgentEvent(ev Event) bool {
	seq := ev.Seq
	switch e := ev.Data.(type) {
	case PoliciesSet:
		if s.version < seq {
			s.version = seq
			s.policies = e.Policies
			s.touch(KindMeta, "core")
		}

	case AgentRegistered:
		a, ok := s.agents[e.Name]
		if !ok {
			a = &Agent{Name: e.Name, Status: Available}
			s.agents[e.Name] = a
		} else if a.Version >= seq {
			return true
		}
		a.Version = seq
		a.Removed, a.EndSession, a.FromConfig, a.Role = false, false, e.FromConfig, e.Role
		a.Adapter, a.Capabilities, a.Pull, a.Handshake = e.Adapter, slices.Clone(e.Capabilities), e.Pull, e.Handshake
		a.Settings, a.Instances = slices.Clone(e.Settings), e.Instances
		s.touch(KindAgent, e.Name)

	case AgentProbed:
		if a := s.agentAt(ev.Agent, seq); a != nil {
			c := e.Context
			c.Tools = maps.Clone(c.Tools)
			a.Context = &c
		}

	case AgentStatusChanged:
		if a := s.agentAt(ev.Agent, seq); a != nil {
			a.Status = e.To
			if e.Conversation != "" {
				a.Conversation = e.Conversation
			}
		}

	case AgentPermission:
		// On record only: a milestone of the task says it.

	case AgentTokenSet:
		if a := s.agentAt(ev.Agent, seq); a != nil {
			a.TokenHash = e.TokenHash
		}

	case AgentRemoved:
		if a := s.agentAt(ev.Agent, seq); a != nil {
			a.Removed, a.TokenHash = true, ""
			a.EndSession = keepsSession(a)
		}

	case AgentSessionEnded:
		if a := s.agentAt(ev.Agent, seq); a != nil {
			a.EndSession = false
		}

	case AgentSeen:
		if a := s.agentAt(ev.Agent, seq); a != nil {
			a.Seen = true
		}

	case AgentCycle:
		if a := s.agentAt(ev.Agent, seq); a != nil {
			a.Inbox = a.Inbox[min(e.Fetched, len(a.Inbox)):]
			if len(a.Inbox) == 0 {
				a.Inbox = nil
			}
		}

	default:
		return false
	}
	return true
}

// applySendEvent applies the events of deliveries being sent and
// answered; it reports whether ev was one of them.
func (s *State) applySendEvent(ev Event) bool {
	now, seq := ev.Time, ev.Seq
	switch e := ev.Data.(type) {
	case DeliveryQueued:
		if d := s.create(now, seq, e.Message); d != nil {
			d.State = Pending
		}
		if a := s.agentAt(e.Message.To, seq); a != nil {
			a.Pending = append(a.Pending, e.Message.ID)
			if a.Pull {
				s.effect(Wake{Agent: a.Name})
			}
		}

	case DeliverySent:
		s.applySend(now, seq, e.Send, true)

	case DeliveryRetried:
		s.applySend(now, seq, e.Send, true)

	case DeliveryNotice:
		s.applySend(now, seq, e.Send, false)

	case DeliveryDeferred:
		if d := s.deliveryAt(e.ID, seq); d != nil {
			d.Resend = e.Resend
			s.setTimer(d, e.TimerAt)
		}

	case DeliveryAcknowledged:
		s.unlist(e.ID, seq)
		d := s.deliveryAt(e.ID, seq)
		if d == nil {
			return true
		}
		d.State, d.EndedAt = Acknowledged, now
		d.Answer = e.Status
		if e.Understanding != "" {
			d.reply().understood(e.Understanding)
		}
		d.Queued = e.Status == "queued"
		if d.Type == TypeDelegation && d.TaskID != "" {
			if _, held := s.byTask.holder(d.TaskID); !held {
				d.Holds = true
				s.byTask.hold(d.TaskID, d.ID)
			}
		}
		s.setTimer(d, e.TimerAt)

	case DeliveryClarifying:
		if d := s.deliveryAt(e.ID, seq); d != nil {
			d.State = Clarifying
			d.reply().Questions = slices.Clone(e.Questions)
			if e.Understanding != "" {
				d.reply().understood(e.Understanding)
			}
			s.setTimer(d, time.Time{})
		}

	default:
		return false
	}
	return true
}

// applyDeliveryEnd applies the events of deliveries ending; it reports
// whether ev was one of them.
func (s *State) applyDeliveryEnd(ev Event) bool {
	now, seq := ev.Time, ev.Seq
	switch e := ev.Data.(type) {
	case DeliveryReply:
		d := s.deliveryAt(e.ID, seq)
		if d == nil {
			return true
		}
		if e.Understanding != "" {
			d.reply().understood(e.Understanding)
		}
		if e.Started && d.Queued {
			d.Queued = false
			s.setTimer(d, time.Time{})
		}
		if e.Released {
			s.release(d)
		}

	case DeliveryFailed:
		s.unlist(e.ID, seq)
		if d := s.deliveryAt(e.ID, seq); d != nil {
			d.State, d.EndedAt, d.Reason = Failed, now, e.Reason
			s.setTimer(d, time.Time{})
		}

	case DeliveryCancelled:
		s.unlist(e.ID, seq)
		if d := s.deliveryAt(e.ID, seq); d != nil {
			s.release(d)
			d.State, d.EndedAt, d.Reason = Cancelled, now, e.Reason
			d.Queued = false
			s.setTimer(d, time.Time{})
		}

	case DeliveryReassigned, DeliveryEscalated:
		// On record only: the new delivery's DeliverySent carries the change.

	default:
		return false
	}
	return true
}

// applyTask applies the events of tasks and plans: a task's proposal,
// warnings, scouts and reviews here; its state and attempts in
// applyTaskRun, its outcomes in applyTaskOutcome, plans in applyPlanEvent,
// notifications in applyNotification.
func (s *State) applyTask(ev Event) {
	now, seq := ev.Time, ev.Seq
	if s.applyTaskRun(ev) || s.applyTaskOutcome(ev) || s.applyPlanEvent(ev) || s.applyPR(ev) || s.applyIssue(ev) || s.applyLanding(ev) {
		return
	}
	switch e := ev.Data.(type) {
	case TaskBaselineRecorded:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Baseline = true
		}

	case TaskWarning:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Warnings = append(t.Warnings, e.Text)
		}

	case TaskProposedDiff:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			p := e.Proposal
			p.Files = slices.Clone(p.Files)
			t.Proposal = &p
		}

	case ScoutAsked:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Consultations = append(t.Consultations, e.Consultation)
		}

	case ScoutAnswered:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			for i := range t.Consultations {
				if c := &t.Consultations[i]; c.ID == e.ID {
					c.State, c.Answer, c.EndedAt = ConsultAnswered, e.Answer, now
				}
			}
		}

	case ScoutFailed:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			for i := range t.Consultations {
				if c := &t.Consultations[i]; c.ID == e.ID {
					c.State, c.Error, c.EndedAt = ConsultFailed, e.Reason, now
				}
			}
		}

	case TaskReviewRequested:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			r := e.Review
			r.Files, r.Warnings = slices.Clone(r.Files), slices.Clone(r.Warnings)
			t.Review = &r
		}

	case TaskReviewed:
		if t := s.taskAt(ev.TaskID, seq); t != nil && t.Review != nil {
			r := *t.Review
			r.Verdict, r.Reasons, r.At = e.Verdict, e.Reasons, now
			t.Review = &r
		}

	default:
		s.applyNotification(ev)
	}
}

// applyLanding applies the events of a task's worktree and landing; it
// reports whether ev was one.
func (s *State) applyLanding(ev Event) bool {
	seq := ev.Seq
	switch e := ev.Data.(type) {
	case TaskLandRequested:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			v := e.Change
			v.Files, v.Warnings = slices.Clone(v.Files), slices.Clone(v.Warnings)
			t.Verified = &v
			t.LandSeq = seq
		}

	case TaskLandStarted:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.LandStarted, t.LandOn = true, e.On
		}

	case TaskIntegrating:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Integration = nil
			if e.Integration != nil {
				i := *e.Integration
				t.Integration = &i
				if i.RunID != "" && !slices.Contains(t.RunIDs, i.RunID) {
					t.RunIDs = append(t.RunIDs, i.RunID)
				}
			}
		}

	case TaskIntegrated:
		if t := s.taskAt(ev.TaskID, seq); t != nil && t.Integration != nil && t.Integration.RunID == e.RunID {
			t.Integration.Passed = true
		}

	case TaskLanded:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.LandedCommit = e.Commit
		}

	case TaskWorktreeAssigned:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Worktree, t.Branch, t.From, t.Base = e.Worktree, e.Branch, e.From, ""
		}

	case TaskWorktreePrepared:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Base = e.Base
		}

	default:
		return false
	}
	return true
}

// applyPlanEvent applies the events of plans; it reports whether ev was
// one of them.
func (s *State) applyPlanEvent(ev Event) bool {
	now, seq := ev.Time, ev.Seq
	switch e := ev.Data.(type) {
	case PlanCreated:
		if p, ok := s.plans[e.Plan.ID]; ok && p.Version >= seq {
			return true
		}
		p := e.Plan
		p.Tasks = slices.Clone(p.Tasks)
		p.Version, p.CreatedAt = seq, now
		s.plans[p.ID] = &p
		s.touch(KindPlan, p.ID)

	case PlanStateChanged:
		p := s.plans[e.ID]
		if p == nil || p.Version >= seq {
			return true
		}
		p.Version = seq
		p.State, p.Summary = e.To, e.Summary
		if e.To != PlanRunning {
			p.FinishedAt = now
		}
		s.touch(KindPlan, p.ID)

	default:
		return false
	}
	return true
}

// applyTaskRun applies the events of a task's state and attempts; it
// reports whether ev was one of them.
func (s *State) applyTaskRun(ev Event) bool {
	now, seq := ev.Time, ev.Seq
	switch e := ev.Data.(type) {
	case TaskQueued:
		s.applyTaskQueued(e, now, seq)

	case TaskRemoved:
		if t, ok := s.tasks[ev.TaskID]; ok && t.Version < seq {
			delete(s.tasks, ev.TaskID)
			s.touch(KindTask, ev.TaskID)
		}

	case TaskStateChanged:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.changeState(e, now, seq)
		}

	case TaskMilestone:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Milestone = e.Text
		}

	case TaskAttempt:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Attempt, t.Agent, t.Delivery = e.Attempt, e.Agent, e.Delivery
			t.TurnBlocker = ""
			t.Released, t.Resume = false, ""
		}

	case TaskWaitingForSlot:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Resume = e.Kind
		}

	default:
		return false
	}
	return true
}

// applyTaskQueued adds the task queued, once: an event older than the
// task's version is not applied again.
func (s *State) applyTaskQueued(e TaskQueued, now time.Time, seq uint64) {
	s.noteID(e.Task.ID)
	if t, ok := s.tasks[e.Task.ID]; ok && t.Version >= seq {
		return
	}
	t := e.Task.copy()
	t.Version, t.CreatedAt, t.QueuedSeq, t.State = seq, now, seq, Queued
	s.tasks[t.ID] = &t
	s.touch(KindTask, t.ID)
}

// changeState moves the task to e's state and phase at now (the event's
// seq): when it started and ended, what it is blocked by, its run, agent
// and delivery, whether it lets go of its slot (landing), and a landing's
// progress begun afresh.
func (t *Task) changeState(e TaskStateChanged, now time.Time, seq uint64) {
	if t.State == Queued && e.To != Queued && !e.To.Terminal() && t.StartedAt.IsZero() {
		t.StartedAt = now
	}
	if t.State == Proposed && e.To == Queued {
		t.Applying = true
	}
	t.State, t.Phase = e.To, e.Phase
	t.LandStarted, t.LandOn, t.Integration = false, "", nil
	if t.Worktree != "" && e.To == Running && (e.Phase == Landing || e.Phase == InPullRequest) {
		t.Released = true
	}
	if e.To == Queued {
		t.QueuedSeq = seq
	}
	if e.Milestone != "" {
		t.Milestone = e.Milestone
	}
	if e.RunID != "" {
		t.RunID = e.RunID
		t.RunIDs = append(t.RunIDs, e.RunID)
		t.Applying = false
	}
	if e.Agent != "" {
		t.Agent = e.Agent
	}
	if e.Delivery != "" {
		t.Delivery = e.Delivery
	}
	t.BlockedBy = ""
	if e.To == Blocked {
		t.BlockedBy = e.Reason
	}
	if e.To.Terminal() {
		t.FinishedAt, t.Phase = now, ""
	}
}

// applyTaskOutcome applies the events of a task's turns, failures,
// escalations and ends; it reports whether ev was one of them.
func (s *State) applyTaskOutcome(ev Event) bool {
	now, seq := ev.Time, ev.Seq
	switch e := ev.Data.(type) {
	case TaskTurnEnded:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			if e.Summary != "" {
				t.LastSummary = e.Summary
			}
			t.TurnBlocker = e.Blocker
			if e.Usage != nil {
				t.Usage.Add(*e.Usage)
				t.Usages = append(t.Usages, UsageRecord{Attempt: e.Attempt, Agent: ev.Agent, Day: usageDay(now), Usage: *e.Usage})
			}
		}

	case TaskFailure:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Failures = append(t.Failures, e.Record)
			t.ConsecutiveFailures++
			t.TotalVerifyLoops++
			t.SinceEscalation++
			if e.Record.RootCauseGuess != "" {
				l := fmt.Sprintf("Attempt %d: %s", e.Record.Attempt, e.Record.RootCauseGuess)
				if e.Record.SuggestedFix != "" {
					l += " — " + e.Record.SuggestedFix
				}
				t.Learnings = append(t.Learnings, l)
			}
		}

	case TaskReplan:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Replans = e.Number
			t.ConsecutiveFailures = 0
		}

	case TaskEscalated:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.Escalation = &TaskEscalation{Reason: e.Reason, Message: e.Message, At: now}
		}

	case TaskResponse:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			t.ConsecutiveFailures, t.SinceEscalation = 0, 0
			if e.Action == RespondFix {
				t.Intervention = e.Instruction
			}
		}

	case TaskSucceeded:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			sum := e.Summary
			sum.Files = slices.Clone(sum.Files)
			t.Summary = &sum
		}

	case TaskUnverifiedEnd:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			sum := e.Summary
			sum.Files = slices.Clone(sum.Files)
			t.Summary = &sum
		}

	case TaskStuckReported:
		if t := s.taskAt(ev.TaskID, seq); t != nil {
			r := e.Report
			r.Hypotheses, r.RunIDs = slices.Clone(r.Hypotheses), slices.Clone(r.RunIDs)
			t.StuckReport = &r
		}

	default:
		return false
	}
	return true
}

// taskAt is agentAt for tasks.
func (s *State) taskAt(id string, seq uint64) *Task {
	t := s.tasks[id]
	if t == nil || t.Version >= seq {
		return nil
	}
	t.Version = seq
	s.touch(KindTask, id)
	return t
}

// heardFrom names the agent an event shows to be alive ("" for none): it
// polled its inbox, answered (an ACK, questions, a checkpoint or report, an
// operation's "ok", a scout's answer), or its turn's process ran to its end. What wilco does
// to an agent (a send, a reassignment, a status it sets) is not a sign of
// the agent's life.
func heardFrom(ev Event) string {
	switch e := ev.Data.(type) {
	case AgentCycle, AgentSeen, DeliveryClarifying, OperationReply, ScoutAnswered:
		return ev.Agent
	case DeliveryAcknowledged:
		if e.By == "agent" {
			return ev.Agent
		}
	case DeliveryReply:
		if e.Kind != "attempt_failed" && e.Kind != "task_ended" {
			return ev.Agent
		}
	case TaskTurnEnded:
		if e.ExitCode >= 0 {
			return ev.Agent
		}
	}
	return ""
}

// heard sets the agent's LastSeen. Unlike agentAt it also changes an agent
// the same event already changed (its Version is seq): LastSeen only moves
// forward, so applying it twice is harmless.
func (s *State) heard(name string, seq uint64, now time.Time) {
	a := s.agents[name]
	if a == nil || a.Version > seq {
		return
	}
	if a.Version < seq {
		a.Version = seq
		s.touch(KindAgent, name)
	}
	if now.After(a.LastSeen) {
		a.LastSeen = now
	}
}

// agentAt returns the agent to change for the event at seq, or nil when it
// does not exist or already reflects that event; it marks it changed.
func (s *State) agentAt(name string, seq uint64) *Agent {
	a := s.agents[name]
	if a == nil || a.Version >= seq {
		return nil
	}
	a.Version = seq
	s.touch(KindAgent, name)
	return a
}

// deliveryAt is agentAt for deliveries.
func (s *State) deliveryAt(id string, seq uint64) *Delivery {
	d := s.revive(id, seq)
	if d == nil || d.Version >= seq {
		return nil
	}
	d.Version = seq
	s.touch(KindDelivery, id)
	s.changed = append(s.changed, d)
	return d
}

// operationAt is agentAt for operations.
func (s *State) operationAt(id string, seq uint64) *Operation {
	o := s.operations[id]
	if o == nil || o.Version >= seq {
		return nil
	}
	o.Version = seq
	s.touch(KindOperation, id)
	return o
}

// create makes a delivery from its message and returns it to change, or
// returns nil when it exists already and reflects the event at seq.
func (s *State) create(now time.Time, seq uint64, m Message) *Delivery {
	s.noteID(m.ID)
	if s.exists(m.ID) {
		return s.deliveryAt(m.ID, seq)
	}
	m.Brief = m.Brief.clone()
	if m.Matcher != nil {
		c := *m.Matcher
		m.Matcher = &c
	}
	d := &Delivery{Message: m, CreatedAt: now, Version: seq}
	s.deliveries[m.ID] = d
	s.changed = append(s.changed, d)
	if m.TaskID != "" {
		s.byTask.add(m.TaskID, m.ID)
	}
	s.touch(KindDelivery, m.ID)
	return d
}

func (s *State) applySend(now time.Time, seq uint64, e Send, asks bool) {
	var d *Delivery
	if e.Message != nil {
		d = s.create(now, seq, *e.Message)
	} else {
		d = s.deliveryAt(e.ID, seq)
	}
	if d != nil {
		if asks {
			d.Sends++
			d.Round = e.Round
			d.Resend = false
			if e.Correction {
				d.Corrections++
			}
			if d.SentAt.IsZero() {
				d.SentAt = now
			}
			d.LastSentAt = now
			if !d.State.Terminal() {
				d.State = Sent
			}
			if d.Policy == PolicyReminders && d.Wait == nil {
				if o := s.operations[d.OperationID]; o != nil {
					d.Wait = &OperationWait{Deadline: o.CreatedAt.Add(o.Policy.Timeout)}
				}
			}
		}
		s.setTimer(d, e.TimerAt)
	}
	// The agent's side depends on the message, which never changes, and on
	// the event: it is applied even when the delivery was saved later.
	m := s.find(e.ID)
	if m == nil {
		return
	}
	if m.Policy == PolicyCycles {
		if asks && e.Attempt == 1 {
			s.moveToUnacked(m, seq)
		}
		return // handed over in the dispatch cycle's answer
	}
	a := s.agents[m.To]
	if a == nil {
		return
	}
	msg := s.inboxMessage(m, e, now)
	if a.Pull {
		if a = s.agentAt(a.Name, seq); a != nil {
			a.Inbox = append(a.Inbox, msg)
			s.effect(Wake{Agent: a.Name})
		}
		return
	}
	s.deliver(a.Name, msg)
}

func (s *State) inboxMessage(d *Delivery, e Send, now time.Time) InboxMessage {
	m := InboxMessage{
		ID: d.ID, From: d.From, Type: string(d.Type), Subject: d.Subject, Body: d.Body,
		TaskID: d.TaskID, OperationID: d.OperationID, Attempt: e.Attempt, CreatedAt: now,
		TaskAttempt: d.TaskAttempt, DryRun: d.DryRun,
	}
	if t := s.tasks[d.TaskID]; t != nil && (d.Type == TypeDelegation || d.Type == TypeTaskTurn || d.Type == TypeScoutQuery || d.Type == TypeReview) {
		// Where the task works: the agent works, a scout and a reviewer
		// read, there.
		m.Worktree = t.Worktree
	}
	if d.Type == TypeInstruction {
		m.InstructionID = d.ID
	}
	if e.Kind != SendFirst && e.Kind != "" {
		m.Type = string(e.Kind)
	}
	if e.Subject != "" || e.Body != "" {
		m.Subject, m.Body = e.Subject, e.Body
	}
	// Remote agents do not know the protocol: every delegation carries the
	// teaching block. It is added as the message is handed over,
	// not stored with each event.
	if d.Type == TypeDelegation && (e.Kind == SendFirst || e.Kind == SendResend) && !strings.Contains(m.Body, "ACKNOWLEDGMENT REQUIRED") {
		m.Body = ack.AfterTeaching(m.Body, d.TaskID)
	}
	return m
}

func (d *Delivery) reply() *AgentReply {
	if d.Reply == nil {
		d.Reply = &AgentReply{}
	}
	return d.Reply
}

// setTimer records the delivery's next timer and asks the runtime to arm it.
func (s *State) setTimer(d *Delivery, at time.Time) {
	if d.TimerAt.Equal(at) {
		return
	}
	d.TimerAt = at
	s.effect(ArmTimer{Key: d.ID, At: at})
}

// moveToUnacked moves an instruction from its agent's pending list to the
// unacknowledged one.
func (s *State) moveToUnacked(d *Delivery, seq uint64) {
	a := s.agentAt(d.To, seq)
	if a == nil {
		return
	}
	if i := slices.Index(a.Pending, d.ID); i >= 0 {
		a.Pending = slices.Delete(a.Pending, i, i+1)
	}
	if len(a.Pending) == 0 {
		a.Pending = nil
	}
	a.Unacked = append(a.Unacked, d.ID)
}

// unlist removes an instruction from its agent's lists when it ends.
func (s *State) unlist(id string, seq uint64) {
	d := s.find(id)
	if d == nil || d.Policy != PolicyCycles {
		return
	}
	a := s.agentAt(d.To, seq)
	if a == nil {
		return
	}
	if i := slices.Index(a.Pending, d.ID); i >= 0 {
		a.Pending = slices.Delete(a.Pending, i, i+1)
	}
	if i := slices.Index(a.Unacked, d.ID); i >= 0 {
		a.Unacked = slices.Delete(a.Unacked, i, i+1)
	}
	if len(a.Pending) == 0 {
		a.Pending = nil
	}
	if len(a.Unacked) == 0 {
		a.Unacked = nil
	}
}

// release ends an agent's hold on its task.
func (s *State) release(d *Delivery) {
	if !d.Holds {
		return
	}
	d.Holds = false
	s.byTask.release(d.TaskID, d.ID)
}
