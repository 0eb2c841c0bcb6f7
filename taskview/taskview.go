package taskview

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"wilco/core"
	"wilco/wire"
)

// DefaultMaxAttempts is the hard stop (the verify loops after which a task
// stops) a task is shown with until the task or its attempt event says
// which one is in force.
const DefaultMaxAttempts = 12

// Task is what the events say of one task.
type Task struct {
	ID        string
	State     wire.TaskState
	Phase     wire.Phase
	Milestone string
	// Attempt is the current attempt, out of MaxAttempts.
	Attempt     int
	MaxAttempts int
	// Start is when the task started (else when its first event came);
	// End is when it settled (zero while it has not).
	Start, End time.Time
}

// Settled reports whether the task waits for nothing more from its agent
// (wire.TaskState.Settled).
func (t *Task) Settled() bool { return t.State.Settled() }

// Line is what one event did, said in one line (Text, empty for nothing
// to say). An Important line is worth keeping in sight; the others are
// progress (a milestone, a turn's end, a reply) that only changes a task's
// status.
type Line struct {
	Text      string
	Important bool
}

// View folds one stream of events, in order, into the tasks they are
// about.
type View struct {
	tasks map[string]*Task
}

// New returns a view that knows of no task.
func New() *View { return &View{tasks: map[string]*Task{}} }

// Task returns the task id as folded so far, nil when no event or Load
// named it.
func (v *View) Task(id string) *Task { return v.tasks[id] }

func (v *View) task(id string) *Task {
	t := v.tasks[id]
	if t == nil {
		t = &Task{ID: id, MaxAttempts: DefaultMaxAttempts}
		v.tasks[id] = t
	}
	return t
}

// Load starts a task from what the server says of it (GET /v1/tasks/{id}),
// before its events are folded in.
func (v *View) Load(st *wire.Task) *Task {
	t := v.task(st.ID)
	t.State, t.Milestone, t.Attempt = st.State, st.Milestone, st.Attempt
	if st.Phase != nil {
		t.Phase = *st.Phase
	}
	t.Start = st.CreatedAt
	if st.StartedAt != nil {
		t.Start = *st.StartedAt
	}
	if st.FinishedAt != nil {
		t.End = *st.FinishedAt
	}
	if st.MaxAttempts > 0 {
		t.MaxAttempts = st.MaxAttempts
	}
	return t
}

// Apply folds one event in. It returns the task the event is about (nil
// for an event of no task) and the line that says what happened, which is
// one line whatever the event's texts hold.
func (v *View) Apply(ev wire.Event) (*Task, Line) {
	var t *Task
	if ev.TaskID != "" {
		t = v.task(ev.TaskID)
		if t.Start.IsZero() {
			t.Start = ev.Time
		}
	}
	text, important := apply(t, ev)
	if strings.ContainsAny(text, "\r\n") {
		// A reason, an error or a text of several lines.
		text = oneLine(text, 0)
	}
	return t, Line{Text: text, Important: important}
}

// apply folds ev into t (nil: the event is about no task) and says what
// happened.
func apply(t *Task, ev wire.Event) (string, bool) {
	if t == nil {
		t = &Task{} // an event of no task changes no view
	}
	if text, important, ok := fold(t, ev); ok {
		return text, important
	}
	switch {
	case strings.HasPrefix(ev.Type, "task."), strings.HasPrefix(ev.Type, "plan."):
		return describeTask(ev)
	case strings.HasPrefix(ev.Type, "delivery."):
		return describeDelivery(ev)
	}
	return describe(ev)
}

// fold folds in the events that change what is known of a task; ok is
// false for the others.
func fold(t *Task, ev wire.Event) (text string, important, ok bool) {
	switch ev.Type {
	case core.TypeTaskQueued:
		t.State = wire.TaskQueued
		return "queued" + optional(": ", oneLine(read[core.TaskQueued](ev.Data).Task.Description, 60)), true, true
	case core.TypeTaskState:
		d := read[core.TaskStateChanged](ev.Data)
		if d.To != "" {
			t.State = wire.TaskState(d.To)
		}
		t.Phase = wire.Phase(d.Phase)
		if d.Milestone != "" {
			t.Milestone = d.Milestone
		}
		if t.Settled() {
			t.End = ev.Time
		}
		line := "state " + orDash(string(d.From)) + " → " + orDash(string(d.To))
		if d.Phase != "" {
			line += " (" + string(d.Phase) + ")"
		}
		return line + optional(": ", d.Reason), true, true
	case core.TypeTaskMilestone:
		t.Milestone = read[core.TaskMilestone](ev.Data).Text
		return t.Milestone, false, true
	case core.TypeTaskAttempt:
		d := read[core.TaskAttempt](ev.Data)
		if d.Attempt > 0 {
			t.Attempt = d.Attempt
		}
		if d.MaxAttempts > 0 {
			t.MaxAttempts = d.MaxAttempts
		}
		line := fmt.Sprintf("attempt %d", d.Attempt)
		if d.Kind != "" && d.Kind != "first" {
			line += " (" + d.Kind + ")"
		}
		return line + optional(" by ", d.Agent), true, true
	case core.TypeTaskTurnEnded:
		d := read[core.TaskTurnEnded](ev.Data)
		if d.Attempt > 0 {
			t.Attempt = d.Attempt
		}
		line := fmt.Sprintf("turn %d ended: %s", d.Attempt, orDash(d.Status))
		if d.ExitCode != 0 {
			line += fmt.Sprintf(" (exit %d)", d.ExitCode)
		}
		return line + optional(": ", oneLine(d.Summary, 60)), false, true
	case core.TypeTaskRemoved:
		t.State, t.End = wire.TaskCancelled, ev.Time
		return "removed from the queue", true, true
	}
	return "", false, false
}

// describeTask says what the other events of a task or a plan did.
func describeTask(ev wire.Event) (string, bool) {
	if line, important, ok := describeLanding(ev); ok {
		return line, important
	}
	switch ev.Type {
	case core.TypeTaskFailure:
		return failureLine(read[core.TaskFailure](ev.Data).Record), true
	case core.TypeTaskReplan:
		d := read[core.TaskReplan](ev.Data)
		return fmt.Sprintf("replan %d after %d failures", d.Number, d.Failures), true
	case core.TypeTaskEscalated:
		d := read[core.TaskEscalated](ev.Data)
		return "escalated" + optional(": ", d.Reason) + optional(" — ", oneLine(d.Message, 80)), true
	case core.TypeTaskResponse:
		d := read[core.TaskResponse](ev.Data)
		line := "user response: " + orDash(d.Action)
		if d.Instruction != "" {
			line += " " + strconv.Quote(oneLine(d.Instruction, 80))
		}
		return line, true
	case core.TypeTaskSuccess:
		s := read[core.TaskSucceeded](ev.Data).Summary
		return "verified" + optional(": ", oneLine(s.Text, 80)) + optional(" (run ", s.RunID, ")"), true
	case core.TypeTaskUnverified:
		why := read[core.TaskUnverifiedEnd](ev.Data).Summary.Why
		return "NOT verified: no verify step is configured" + optional(": ", oneLine(why, 60)), true
	case core.TypeTaskStuck:
		return "hard stop" + optional(": stuck report ", read[core.TaskStuckReported](ev.Data).Report.Path), true
	case core.TypeTaskProposed:
		return "proposed a diff" + optional(" (run ", read[core.TaskProposedDiff](ev.Data).Proposal.RunID, ")"), true
	case core.TypeTaskWarning:
		return "warning: " + read[core.TaskWarning](ev.Data).Text, true
	case core.TypePlanCreated:
		return "plan " + orDash(read[core.PlanCreated](ev.Data).Plan.ID) + " created", true
	case core.TypePlanState:
		d := read[core.PlanStateChanged](ev.Data)
		return fmt.Sprintf("plan %s %s → %s", orDash(d.ID), orDash(string(d.From)), orDash(string(d.To))), true
	}
	return other(ev)
}

// failureLine says how an attempt failed: its failure type, the
// executor's error or else the verification's summary, and its run.
func failureLine(rec core.FailureRecord) string {
	line := fmt.Sprintf("attempt %d failed: %s", rec.Attempt, orDash(rec.FailureType))
	if msg := rec.ExecutorOutput.Error; msg != "" {
		line += ": " + oneLine(msg, 80)
	} else if v := rec.ExecutorOutput.Verification; v != nil && v.OutputSummary != "" {
		line += ": " + oneLine(v.OutputSummary, 80)
	}
	return line + optional(" (run ", rec.RunID, ")")
}

// describeLanding says what an event of a task's worktree or landing
// did; ok is false for the others.
func describeLanding(ev wire.Event) (line string, important, ok bool) {
	switch ev.Type {
	case core.TypeTaskLanding:
		c := read[core.TaskLandRequested](ev.Data).Change
		return fmt.Sprintf("committing the verified change (run %s) on %s", orDash(c.RunID), orDash(c.Branch)), false, true
	case core.TypeTaskLanded:
		return landedLine(read[core.TaskLanded](ev.Data)), true, true
	case core.TypeTaskWorktree:
		d := read[core.TaskWorktreeAssigned](ev.Data)
		return fmt.Sprintf("works in %s on branch %s", orDash(d.Worktree), orDash(d.Branch)) + optional(", from ", d.From), false, true
	case core.TypeTaskPrepared:
		return "worktree made from " + orDash(core.ShortCommit(read[core.TaskWorktreePrepared](ev.Data).Base)), false, true
	case core.TypeTaskLandStarted:
		if on := read[core.TaskLandStarted](ev.Data).On; on != "" {
			return "combined behind the task landing ahead of it (on " + core.ShortCommit(on) + "), verified while that one lands", false, true
		}
		return "its turn to land", false, true
	case core.TypeTaskIntegrating:
		i := read[core.TaskIntegrating](ev.Data).Integration
		if i == nil {
			return "the target moved: combining again", false, true
		}
		if i.Void {
			return "its combination behind the task ahead does not pass: combined again once first to land", false, true
		}
		return fmt.Sprintf("combined with the target's head %s as %s: verifying (run %s)", core.ShortCommit(i.Onto), core.ShortCommit(i.Combined), orDash(i.RunID)), true, true
	case core.TypeTaskIntegrated:
		return "the combination passed (run " + orDash(read[core.TaskIntegrated](ev.Data).RunID) + ")", true, true
	}
	return "", false, false
}

// landedLine says what a landing came to: the commit and the files it
// landed, or nothing committed, and the files left uncommitted.
func landedLine(d core.TaskLanded) string {
	line := "nothing committed on " + orDash(d.Branch)
	if d.Commit != "" {
		files := fmt.Sprintf("%d files", len(d.Files))
		if len(d.Files) == 1 {
			files = "1 file"
		}
		line = fmt.Sprintf("landed as %s on %s (%s)", core.ShortCommit(d.Commit), orDash(d.Branch), files)
	}
	if len(d.Left) > 0 {
		line += "; left uncommitted: " + oneLine(strings.Join(d.Left, ", "), 80)
	}
	return line
}

// describeDelivery says what an event of a delivery did.
func describeDelivery(ev wire.Event) (string, bool) {
	switch ev.Type {
	case core.TypeDeliverySent, core.TypeDeliveryRetried, core.TypeDeliveryNotice:
		d := read[core.Send](ev.Data) // the data of all three
		verb := map[string]string{core.TypeDeliverySent: "sent", core.TypeDeliveryRetried: "sent again", core.TypeDeliveryNotice: "notice"}[ev.Type]
		line := fmt.Sprintf("message %s %s", orDash(d.ID), verb)
		if d.Attempt > 0 && ev.Type != core.TypeDeliveryNotice {
			line += fmt.Sprintf(" (attempt %d", d.Attempt)
			if d.Kind != "" && d.Kind != core.SendFirst {
				line += ", " + string(d.Kind)
			}
			line += ")"
		} else if d.Kind != "" {
			line += " (" + string(d.Kind) + ")"
		}
		return line, true
	case core.TypeDeliveryAcknowledged:
		d := read[core.DeliveryAcknowledged](ev.Data)
		return fmt.Sprintf("message %s acknowledged by %s", orDash(d.ID), orDash(d.By)) +
			optional(" (", d.Status, ")") + optional(": ", oneLine(d.Understanding, 60)), true
	case core.TypeDeliveryClarifying:
		d := read[core.DeliveryClarifying](ev.Data)
		if len(d.Questions) == 1 {
			return fmt.Sprintf("message %s: the agent asks 1 question", orDash(d.ID)), true
		}
		return fmt.Sprintf("message %s: the agent asks %d questions", orDash(d.ID), len(d.Questions)), true
	case core.TypeDeliveryDeferred:
		d := read[core.DeliveryDeferred](ev.Data)
		return fmt.Sprintf("message %s deferred", orDash(d.ID)) + optional(": ", d.Reason), true
	case core.TypeDeliveryCancelled:
		d := read[core.DeliveryCancelled](ev.Data)
		return fmt.Sprintf("message %s cancelled", orDash(d.ID)) + optional(": ", d.Reason), true
	case core.TypeDeliveryEscalated:
		d := read[core.DeliveryEscalated](ev.Data)
		return fmt.Sprintf("message %s escalated", orDash(d.ID)) + optional(": ", d.Reason), true
	case core.TypeDeliveryFailed:
		d := read[core.DeliveryFailed](ev.Data)
		attempts := ""
		if d.Attempts > 0 {
			attempts = strconv.Itoa(d.Attempts)
		}
		return fmt.Sprintf("message %s failed", orDash(d.ID)) + optional(": ", d.Reason) + optional(" (", attempts, " attempts)"), true
	case core.TypeDeliveryReassigned:
		d := read[core.DeliveryReassigned](ev.Data)
		return fmt.Sprintf("message %s reassigned %s → %s", orDash(d.ID), orDash(d.From), orDash(d.To)), true
	case core.TypeDeliveryReply:
		d := read[core.DeliveryReply](ev.Data)
		return fmt.Sprintf("reply (%s)", orDash(d.Kind)) + optional(": ", oneLine(d.Text, 60)), false
	}
	return other(ev)
}

// describe says what an event of an agent, an operation or a
// notification did.
func describe(ev wire.Event) (string, bool) {
	switch ev.Type {
	case core.TypeAgentCycle:
		return fmt.Sprintf("agent fetched %d messages", read[core.AgentCycle](ev.Data).Fetched), false
	case core.TypeAgentStatus:
		d := read[core.AgentStatusChanged](ev.Data)
		return fmt.Sprintf("agent %s → %s", orDash(string(d.From)), orDash(string(d.To))) + optional(": ", d.Reason), true
	case core.TypeOperationReminder:
		d := read[core.OperationReminder](ev.Data)
		return fmt.Sprintf("operation %s: reminder %d", orDash(d.ID), d.Number) + optional(" (", d.Tone, ")"), true
	case core.TypeOperationReply:
		d := read[core.OperationReply](ev.Data)
		return fmt.Sprintf("operation %s: %s", orDash(d.ID), orDash(d.Answer)), true
	case core.TypeOperationState:
		d := read[core.OperationStateChanged](ev.Data)
		return fmt.Sprintf("operation %s %s → %s", orDash(d.ID), orDash(string(d.From)), orDash(string(d.To))) + optional(": ", d.Reason), true
	case core.TypeOperationStarted:
		op := read[core.OperationStarted](ev.Data).Operation
		return fmt.Sprintf("operation %s started", orDash(op.ID)) + optional(": ", op.Name), true
	case core.TypeNotificationQueued:
		n := read[core.NotificationQueued](ev.Data).Notification
		return fmt.Sprintf("notifying %s: %s (%s)", orDash(n.Hook), orDash(string(n.Event)), orDash(n.ID)), true
	case core.TypeNotificationRetried:
		d := read[core.NotificationRetried](ev.Data)
		return fmt.Sprintf("notification %s: attempt %d", orDash(d.ID), d.Attempt), false
	case core.TypeNotificationAttempt:
		d := read[core.NotificationAttempt](ev.Data)
		return fmt.Sprintf("notification %s: attempt %d failed", orDash(d.ID), d.Attempt) + optional(": ", oneLine(d.Error, 60)), false
	case core.TypeNotificationDelivered:
		d := read[core.NotificationDelivered](ev.Data)
		return fmt.Sprintf("notification %s delivered (attempt %d)", orDash(d.ID), d.Attempt), true
	case core.TypeNotificationFailed:
		d := read[core.NotificationFailed](ev.Data)
		return fmt.Sprintf("notification %s failed after %d attempts", orDash(d.ID), d.Attempts) + optional(": ", oneLine(d.Error, 60)), true
	case core.TypeNotificationsPruned:
		return fmt.Sprintf("%d notifications that ended over 30 days ago pruned", len(read[core.NotificationsPruned](ev.Data).IDs)), false
	}
	return other(ev)
}

// other is the line of an event the view does not read: its type and its
// data, cut short.
func other(ev wire.Event) (string, bool) {
	data := strings.TrimSpace(string(ev.Data))
	if data == "{}" || data == "null" {
		data = ""
	}
	return ev.Type + optional(" ", oneLine(data, 80)), false
}
