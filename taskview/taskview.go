package taskview

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"wilco/client"
)

// DefaultMaxAttempts is the hard stop (the verify loops after which a task
// stops) a task is shown with until the task or its attempt event says
// which one is in force.
const DefaultMaxAttempts = 12

// Task is what the events say of one task.
type Task struct {
	ID        string
	State     string
	Phase     string
	Milestone string
	// Attempt is the current attempt, out of MaxAttempts.
	Attempt     int
	MaxAttempts int
	// Start is when the task started (else when its first event came);
	// End is when it settled (zero while it has not).
	Start, End time.Time
}

// Settled reports whether the task waits for nothing more from its agent
// (client.TaskSettled).
func (t *Task) Settled() bool { return client.TaskSettled(t.State) }

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
func (v *View) Load(st *client.Task) *Task {
	t := v.task(st.ID)
	t.State, t.Phase, t.Milestone, t.Attempt = st.State, st.Phase, st.Milestone, st.Attempt
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
func (v *View) Apply(ev client.Event) (*Task, Line) {
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
func apply(t *Task, ev client.Event) (string, bool) {
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
func fold(t *Task, ev client.Event) (text string, important, ok bool) {
	switch ev.Type {
	case client.EventTaskQueued:
		t.State = client.TaskQueued
		return "queued" + optional(": ", oneLine(read[taskQueued](ev.Data).Task.Description, 60)), true, true
	case client.EventTaskState:
		d := read[taskState](ev.Data)
		if d.To != "" {
			t.State = d.To
		}
		t.Phase = d.Phase
		if d.Milestone != "" {
			t.Milestone = d.Milestone
		}
		if t.Settled() {
			t.End = ev.Time
		}
		line := "state " + orDash(d.From) + " → " + orDash(d.To)
		if d.Phase != "" {
			line += " (" + d.Phase + ")"
		}
		return line + optional(": ", d.Reason), true, true
	case client.EventTaskMilestone:
		t.Milestone = read[taskText](ev.Data).Text
		return t.Milestone, false, true
	case "task.attempt":
		d := read[taskAttempt](ev.Data)
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
	case "task.turn_ended":
		d := read[taskTurnEnded](ev.Data)
		if d.Attempt > 0 {
			t.Attempt = d.Attempt
		}
		line := fmt.Sprintf("turn %d ended: %s", d.Attempt, orDash(d.Status))
		if d.ExitCode != 0 {
			line += fmt.Sprintf(" (exit %d)", d.ExitCode)
		}
		return line + optional(": ", oneLine(d.Summary, 60)), false, true
	case "task.removed":
		t.State, t.End = client.TaskCancelled, ev.Time
		return "removed from the queue", true, true
	}
	return "", false, false
}

// describeTask says what the other events of a task or a plan did.
func describeTask(ev client.Event) (string, bool) {
	switch ev.Type {
	case client.EventTaskFailure:
		rec := read[taskFailure](ev.Data).Record
		line := fmt.Sprintf("attempt %d failed: %s", rec.Attempt, orDash(rec.FailureType))
		if msg := rec.ExecutorOutput.Error; msg != "" {
			line += ": " + oneLine(msg, 80)
		} else if msg := rec.ExecutorOutput.Verification.OutputSummary; msg != "" {
			line += ": " + oneLine(msg, 80)
		}
		return line + optional(" (run ", rec.RunID, ")"), true
	case client.EventTaskReplan:
		d := read[taskReplan](ev.Data)
		return fmt.Sprintf("replan %d after %d failures", d.Number, d.Failures), true
	case "task.escalated":
		d := read[taskEscalated](ev.Data)
		return "escalated" + optional(": ", d.Reason) + optional(" — ", oneLine(d.Message, 80)), true
	case "task.response":
		d := read[taskResponse](ev.Data)
		line := "user response: " + orDash(d.Action)
		if d.Instruction != "" {
			line += " " + strconv.Quote(oneLine(d.Instruction, 80))
		}
		return line, true
	case "task.success":
		s := read[taskSuccess](ev.Data).Summary
		return "verified" + optional(": ", oneLine(s.Text, 80)) + optional(" (run ", s.RunID, ")"), true
	case "task.unverified":
		why := read[taskUnverified](ev.Data).Summary.Why
		return "NOT verified: no verify step is configured" + optional(": ", oneLine(why, 60)), true
	case "task.stuck":
		return "hard stop" + optional(": stuck report ", read[taskStuck](ev.Data).Report.Path), true
	case "task.proposed":
		return "proposed a diff" + optional(" (run ", read[taskProposed](ev.Data).Proposal.RunID, ")"), true
	case "task.warning":
		return "warning: " + read[taskText](ev.Data).Text, true
	case "plan.created":
		return "plan " + orDash(read[planCreated](ev.Data).Plan.ID) + " created", true
	case "plan.state":
		d := read[transition](ev.Data)
		return fmt.Sprintf("plan %s %s → %s", orDash(d.ID), orDash(d.From), orDash(d.To)), true
	}
	return other(ev)
}

// describeDelivery says what an event of a delivery did.
func describeDelivery(ev client.Event) (string, bool) {
	switch ev.Type {
	case client.EventDeliverySent, client.EventDeliveryRetried, "delivery.notice":
		d := read[deliverySend](ev.Data)
		verb := map[string]string{client.EventDeliverySent: "sent", client.EventDeliveryRetried: "sent again", "delivery.notice": "notice"}[ev.Type]
		line := fmt.Sprintf("message %s %s", orDash(d.ID), verb)
		if d.Attempt > 0 && ev.Type != "delivery.notice" {
			line += fmt.Sprintf(" (attempt %d", d.Attempt)
			if d.Kind != "" && d.Kind != "first" {
				line += ", " + d.Kind
			}
			line += ")"
		} else if d.Kind != "" {
			line += " (" + d.Kind + ")"
		}
		return line, true
	case client.EventDeliveryAcknowledged:
		d := read[deliveryAcknowledged](ev.Data)
		return fmt.Sprintf("message %s acknowledged by %s", orDash(d.ID), orDash(d.By)) +
			optional(" (", d.Status, ")") + optional(": ", oneLine(d.Understanding, 60)), true
	case "delivery.clarifying":
		d := read[deliveryClarifying](ev.Data)
		if len(d.Questions) == 1 {
			return fmt.Sprintf("message %s: the agent asks 1 question", orDash(d.ID)), true
		}
		return fmt.Sprintf("message %s: the agent asks %d questions", orDash(d.ID), len(d.Questions)), true
	case "delivery.deferred", "delivery.cancelled", "delivery.escalated":
		d := read[deliveryEnded](ev.Data)
		verb := strings.TrimPrefix(ev.Type, "delivery.")
		return fmt.Sprintf("message %s %s", orDash(d.ID), verb) + optional(": ", d.Reason), true
	case client.EventDeliveryFailed:
		d := read[deliveryEnded](ev.Data)
		attempts := ""
		if d.Attempts != nil {
			attempts = strconv.Itoa(*d.Attempts)
		}
		return fmt.Sprintf("message %s failed", orDash(d.ID)) + optional(": ", d.Reason) + optional(" (", attempts, " attempts)"), true
	case "delivery.reassigned":
		d := read[transition](ev.Data)
		return fmt.Sprintf("message %s reassigned %s → %s", orDash(d.ID), orDash(d.From), orDash(d.To)), true
	case "delivery.reply":
		d := read[deliveryReply](ev.Data)
		return fmt.Sprintf("reply (%s)", orDash(d.Kind)) + optional(": ", oneLine(d.Text, 60)), false
	}
	return other(ev)
}

// describe says what an event of an agent, an operation or a
// notification did.
func describe(ev client.Event) (string, bool) {
	switch ev.Type {
	case "agent.cycle":
		return fmt.Sprintf("agent fetched %d messages", read[agentCycle](ev.Data).Fetched), false
	case client.EventAgentStatus:
		d := read[transition](ev.Data)
		return fmt.Sprintf("agent %s → %s", orDash(d.From), orDash(d.To)) + optional(": ", d.Reason), true
	case client.EventOperationReminder:
		d := read[operationReminder](ev.Data)
		return fmt.Sprintf("operation %s: reminder %d", orDash(d.ID), d.Number) + optional(" (", d.Tone, ")"), true
	case "operation.reply":
		d := read[operationReply](ev.Data)
		return fmt.Sprintf("operation %s: %s", orDash(d.ID), orDash(d.Answer)), true
	case client.EventOperationState:
		d := read[transition](ev.Data)
		return fmt.Sprintf("operation %s %s → %s", orDash(d.ID), orDash(d.From), orDash(d.To)) + optional(": ", d.Reason), true
	case "operation.started":
		op := read[operationStarted](ev.Data).Operation
		return fmt.Sprintf("operation %s started", orDash(op.ID)) + optional(": ", op.Operation), true
	case "notification.queued":
		n := read[notificationQueued](ev.Data).Notification
		return fmt.Sprintf("notifying %s: %s (%s)", orDash(n.Hook), orDash(n.Event), orDash(n.ID)), true
	case "notification.retried":
		d := read[notificationAttempt](ev.Data)
		return fmt.Sprintf("notification %s: attempt %d", orDash(d.ID), d.Attempt), false
	case "notification.attempt":
		d := read[notificationAttempt](ev.Data)
		return fmt.Sprintf("notification %s: attempt %d failed", orDash(d.ID), d.Attempt) + optional(": ", oneLine(d.Error, 60)), false
	case "notification.delivered":
		d := read[notificationAttempt](ev.Data)
		return fmt.Sprintf("notification %s delivered (attempt %d)", orDash(d.ID), d.Attempt), true
	case "notification.failed":
		d := read[notificationAttempt](ev.Data)
		return fmt.Sprintf("notification %s failed after %d attempts", orDash(d.ID), d.Attempts) + optional(": ", oneLine(d.Error, 60)), true
	case "notification.pruned":
		return fmt.Sprintf("%d notifications that ended over 30 days ago pruned", len(read[notificationsPruned](ev.Data).IDs)), false
	}
	return other(ev)
}

// other is the line of an event the view does not read: its type and its
// data, cut short.
func other(ev client.Event) (string, bool) {
	data := strings.TrimSpace(string(ev.Data))
	if data == "{}" || data == "null" {
		data = ""
	}
	return ev.Type + optional(" ", oneLine(data, 80)), false
}
