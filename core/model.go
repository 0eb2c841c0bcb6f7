package core

import (
	"encoding/json"
	"slices"
	"time"
)

// AgentStatus is what wilco knows of an agent's availability.
type AgentStatus string

// Agent statuses.
const (
	Available    AgentStatus = "available"
	Busy         AgentStatus = "busy"
	Unresponsive AgentStatus = "unresponsive"
	Hibernating  AgentStatus = "hibernating"
	Offline      AgentStatus = "offline"
)

// Valid reports whether s is one of the five statuses.
func (s AgentStatus) Valid() bool {
	switch s {
	case Available, Busy, Unresponsive, Hibernating, Offline:
		return true
	}
	return false
}

// Agent is a named worker reached through an adapter.
type Agent struct {
	// Version is the seq of the last event that changed the agent.
	Version      uint64   `json:"version"`
	Name         string   `json:"name"`
	Adapter      string   `json:"adapter"`
	Capabilities []string `json:"capabilities,omitempty"`
	Pull         bool     `json:"pull"`
	Handshake    string   `json:"handshake,omitempty"`
	// Settings are the adapter's own settings (see AgentSpec).
	Settings json.RawMessage `json:"settings,omitempty"`
	Status   AgentStatus     `json:"status"`
	// Seen says a pull agent has polled its inbox or replied at least once.
	Seen      bool   `json:"seen,omitempty"`
	TokenHash string `json:"token_hash,omitempty"`
	// FromConfig: the agent comes from wilco.yaml (see AgentSpec).
	FromConfig bool `json:"from_config,omitempty"`
	// Role is "" or RoleScout (see AgentSpec).
	Role string `json:"role,omitempty"`
	// Context is what the last context probe learned of the agent's side.
	Context *AgentContext `json:"context,omitempty"`
	// Removed: the agent was taken out of service (see AgentRemoved).
	Removed bool `json:"removed,omitempty"`
	// EndSession: the agent was removed and the end of the session its
	// adapter keeps for it is not recorded yet (see StopSession).
	EndSession bool `json:"end_session,omitempty"`
	// LastSeen is when wilco last heard from the agent (see heardFrom).
	LastSeen time.Time `json:"last_seen,omitzero"`
	// Inbox holds what waits for a pull agent's next dispatch cycle.
	Inbox []InboxMessage `json:"inbox,omitempty"`
	// Conversation is the agent program's conversation id kept when an
	// operation hibernated it, to resume at its wake.
	Conversation string `json:"conversation,omitempty"`
	// Pending are instructions (cycles policy) never sent yet, oldest first.
	Pending []string `json:"pending,omitempty"`
	// Unacked are instructions sent and not yet acknowledged, oldest first.
	Unacked []string `json:"unacked,omitempty"`
	// Instances is how many tasks the agent works at once when tasks are
	// worked in parallel (0: one): one each per task's worktree.
	Instances int `json:"instances,omitempty"`
}

// instances is how many tasks the agent works at once.
func (a *Agent) instances() int { return max(a.Instances, 1) }

// Capable reports whether the agent has every capability asked for.
func (a *Agent) Capable(need []string) bool {
	for _, n := range need {
		found := false
		for _, c := range a.Capabilities {
			if c == n {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Policy is how a delivery chases its acknowledgment.
type Policy string

// The delivery policies, and none
// for messages that need no acknowledgment beyond a reply.
const (
	PolicyNone      Policy = "none"
	PolicyCycles    Policy = "cycles"
	PolicyBackoff   Policy = "backoff"
	PolicyReminders Policy = "reminders"
)

// MessageType is what a message is.
type MessageType string

// Message types.
const (
	TypeInstruction  MessageType = "instruction"
	TypeDelegation   MessageType = "task_delegation"
	TypeConversation MessageType = "conversation"
	TypePreOperation MessageType = "pre_operation"
	// TypeTaskTurn is a task's turn given to an agent that does not
	// acknowledge (handshake: none): it is recorded, not chased.
	TypeTaskTurn MessageType = "task_turn"
)

// SendKind says what one send of a delivery was.
type SendKind string

// Send kinds; the inbox shows them as the message type of a send that is
// not the message itself.
const (
	SendFirst            SendKind = "first"
	SendRetry            SendKind = "retry"              // cycles: the same text again
	SendAckRequest       SendKind = "ack_request"        // backoff: "ACK REQUIRED"
	SendResend           SendKind = "resend"             // after RESOURCE_UNAVAILABLE's wait
	SendCorrection       SendKind = "correction"         // understanding missed acceptance items
	SendWrongID          SendKind = "wrong_id"           // the ACK named another task
	SendClarification    SendKind = "task_clarification" // the user's answers
	SendReminder         SendKind = "reminder"           // reminders policy
	SendFollowup         SendKind = "followup"           // QUEUED and work not started
	SendTimeoutNotice    SendKind = "timeout_notice"
	SendExtension        SendKind = "extension_granted"
	SendCancel           SendKind = "cancel"
	SendOperationOutcome SendKind = "operation_outcome"
)

// Matcher acknowledges an instruction when the agent's reply contains a
// text or matches a regular expression.
type Matcher struct {
	Contains string `json:"contains,omitempty"`
	Regex    string `json:"regex,omitempty"`
}

// Message is what was asked of an agent: the content of a delivery.
type Message struct {
	ID          string      `json:"id"`
	From        string      `json:"from"`
	To          string      `json:"to"`
	Type        MessageType `json:"type"`
	Policy      Policy      `json:"policy"`
	Subject     string      `json:"subject,omitempty"`
	Body        string      `json:"body"`
	TaskID      string      `json:"task_id,omitempty"`
	OperationID string      `json:"operation_id,omitempty"`
	// MaxRetries is the cycles policy's limit (instructions).
	MaxRetries int      `json:"max_retries,omitempty"`
	Matcher    *Matcher `json:"matcher,omitempty"`
	// TaskAttempt is the attempt of the task this message delegates.
	TaskAttempt int `json:"task_attempt,omitempty"`
	// DryRun: the agent works in a throw-away worktree.
	DryRun bool `json:"dry_run,omitempty"`
	// Brief is what a delegation asks, for the understanding check and
	// reassignment; nil for other messages.
	Brief *Brief `json:"brief,omitempty"`
}

// Brief is the part of a task delegation that wilco checks answers
// against.
type Brief struct {
	// Capabilities the task needs (for reassignment).
	Capabilities []string `json:"capabilities,omitempty"`
	// AcceptanceCriteria, for the understanding check.
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty"`
	// Description of the task, for the understanding check.
	Description string `json:"description,omitempty"`
	// Tried lists the agents this delegation was reassigned away from.
	Tried []string `json:"tried,omitempty"`
}

func (b *Brief) clone() *Brief {
	if b == nil {
		return nil
	}
	c := *b
	c.Capabilities = slices.Clone(b.Capabilities)
	c.AcceptanceCriteria = slices.Clone(b.AcceptanceCriteria)
	c.Tried = slices.Clone(b.Tried)
	return &c
}

// Capabilities a delegation needs.
func (m *Message) Capabilities() []string {
	if m.Brief == nil {
		return nil
	}
	return m.Brief.Capabilities
}

// Tried lists the agents a delegation was reassigned away from.
func (m *Message) Tried() []string {
	if m.Brief == nil {
		return nil
	}
	return m.Brief.Tried
}

// DeliveryState is where a delivery stands. Acknowledged, failed and
// cancelled are terminal.
type DeliveryState string

// Delivery states.
const (
	Pending      DeliveryState = "pending"
	Sent         DeliveryState = "sent"
	Clarifying   DeliveryState = "clarifying"
	Acknowledged DeliveryState = "acknowledged"
	Failed       DeliveryState = "failed"
	Cancelled    DeliveryState = "cancelled"
)

// Terminal reports whether the state is an end.
func (s DeliveryState) Terminal() bool {
	return s == Acknowledged || s == Failed || s == Cancelled
}

// Delivery is a message tracked until it is acknowledged. It is kept
// compact: a million open deliveries must fit in well under a GiB.
type Delivery struct {
	Message
	// Version is the seq of the last event that changed the delivery.
	Version uint64        `json:"version"`
	State   DeliveryState `json:"state"`
	// Sends counts every send that asked for an answer.
	Sends int `json:"sends"`
	// Round is the attempt within the current ACK round (backoff).
	Round       int `json:"round,omitempty"`
	Corrections int `json:"corrections,omitempty"`
	// Resend: when the timer fires, send again and restart the round.
	Resend bool `json:"resend,omitempty"`
	// Queued is set by a QUEUED acknowledgment until work starts.
	Queued bool `json:"queued,omitempty"`
	// Holds is set while this delivery's agent holds its task: it was the
	// first to acknowledge it, and has not finished or been cancelled.
	Holds bool `json:"holds,omitempty"`
	// TimerAt is when the delivery's one timer fires; zero for none.
	TimerAt time.Time `json:"timer_at,omitzero"`
	// Answer is the status the agent acknowledged with ("received",
	// "queued", "ok"…).
	Answer string `json:"answer,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Reply holds what the agent said it understood and asked.
	Reply *AgentReply `json:"reply,omitempty"`
	// Wait is the reminders policy's state of one agent of an operation.
	Wait *OperationWait `json:"wait,omitempty"`

	CreatedAt  time.Time `json:"created_at"`
	SentAt     time.Time `json:"sent_at,omitzero"`
	LastSentAt time.Time `json:"last_sent_at,omitzero"`
	// EndedAt is when the delivery reached its terminal state.
	EndedAt time.Time `json:"ended_at,omitzero"`

	// rowed: the store holds a record of this delivery of its own (see
	// Copies). Not part of the delivery's state.
	rowed bool
}

// AgentReply is what an agent's acknowledgment said.
type AgentReply struct {
	Understanding string   `json:"understanding,omitempty"`
	Questions     []string `json:"questions,omitempty"`
	// Earlier are the understandings the agent gave before Understanding,
	// oldest first: with its questions, or in an ACK that got a
	// correction. The understanding check judges them all together.
	Earlier []string `json:"earlier,omitempty"`
}

// maxEarlier bounds AgentReply.Earlier; the oldest go first.
const maxEarlier = 16

// understood records u as what the agent now says it understood.
func (r *AgentReply) understood(u string) {
	if u == "" || u == r.Understanding {
		return
	}
	if r.Understanding != "" {
		r.Earlier = append(r.Earlier, r.Understanding)
		if len(r.Earlier) > maxEarlier {
			r.Earlier = slices.Delete(r.Earlier, 0, len(r.Earlier)-maxEarlier)
		}
	}
	r.Understanding = u
}

// said returns everything the agent said it understood so far, oldest
// first.
func (d *Delivery) said() []string {
	if d.Reply == nil {
		return nil
	}
	out := slices.Clone(d.Reply.Earlier)
	if d.Reply.Understanding != "" {
		out = append(out, d.Reply.Understanding)
	}
	return out
}

// OperationWait is one agent's wait under the reminders policy.
type OperationWait struct {
	Deadline time.Time `json:"deadline"`
	Reminded int       `json:"reminded,omitempty"`
	Extended bool      `json:"extended,omitempty"`
}

// RetryCount is how many times the delivery was sent again.
func (d *Delivery) RetryCount() int { return max(d.Sends-1, 0) }

func (d *Delivery) endedIf(s DeliveryState) time.Time {
	if d.State == s {
		return d.EndedAt
	}
	return time.Time{}
}

// AcknowledgedAt is when it was acknowledged (zero if it was not).
func (d *Delivery) AcknowledgedAt() time.Time { return d.endedIf(Acknowledged) }

// FailedAt is when it failed (zero if it did not).
func (d *Delivery) FailedAt() time.Time { return d.endedIf(Failed) }

// CancelledAt is when it was cancelled (zero if it was not).
func (d *Delivery) CancelledAt() time.Time { return d.endedIf(Cancelled) }

// Understanding is what the agent said it understood.
func (d *Delivery) Understanding() string {
	if d.Reply == nil {
		return ""
	}
	return d.Reply.Understanding
}

// Questions are the agent's clarification questions.
func (d *Delivery) Questions() []string {
	if d.Reply == nil {
		return nil
	}
	return d.Reply.Questions
}

// InboxMessage is one send as the agent receives it.
type InboxMessage struct {
	ID            string    `json:"id"`
	From          string    `json:"from"`
	Type          string    `json:"type"`
	Subject       string    `json:"subject,omitempty"`
	Body          string    `json:"body"`
	TaskID        string    `json:"task_id,omitempty"`
	InstructionID string    `json:"instruction_id,omitempty"`
	OperationID   string    `json:"operation_id,omitempty"`
	Attempt       int       `json:"attempt"`
	CreatedAt     time.Time `json:"created_at"`
	// TaskAttempt and DryRun describe a task's turn, for the exec adapter.
	TaskAttempt int  `json:"task_attempt,omitempty"`
	DryRun      bool `json:"dry_run,omitempty"`
	// Worktree is where a task worked in parallel works, relative to the
	// repository's root ("" for the checkout itself).
	Worktree string `json:"worktree,omitempty"`
}

// OperationState is where an operation stands.
type OperationState string

// Operation states.
const (
	OpWaiting    OperationState = "waiting"
	OpProceeding OperationState = "proceeding"
	OpDone       OperationState = "done"
	OpCancelled  OperationState = "cancelled"
	OpAborted    OperationState = "aborted"
	OpFailed     OperationState = "failed"
)

// Operation is a disruptive or state-changing action that waits for the
// affected agents' "ok".
type Operation struct {
	// Version is the seq of the last event that changed the operation.
	Version    uint64          `json:"version"`
	ID         string          `json:"id"`
	Name       string          `json:"operation"`
	Agents     []string        `json:"agents"`
	Deliveries []string        `json:"deliveries"`
	Message    string          `json:"message"`
	Policy     OperationPolicy `json:"policy"`
	Command    []string        `json:"command,omitempty"`
	// Target is what an install operation installs (a path).
	Target string         `json:"target,omitempty"`
	State  OperationState `json:"state"`
	// StartSeq is the seq of the event that started the operation: its
	// log is the events from there.
	StartSeq uint64 `json:"start_seq,omitempty"`
	// Results say what was done to each agent once the operation
	// proceeded (an operation on agents: hibernate, wake, restart,
	// install-skill, install-plugin, maintenance).
	Results []OperationResult `json:"results,omitempty"`

	RemindersSent   int       `json:"reminders_sent"`
	TimeoutOccurred bool      `json:"timeout_occurred"`
	ProceededAnyway bool      `json:"proceeded_anyway"`
	Reason          string    `json:"reason,omitempty"`
	ExitCode        *int      `json:"exit_code,omitempty"`
	Output          string    `json:"output,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
	FinishedAt      time.Time `json:"finished_at,omitzero"`
}

// OperationResult is what an operation did to one agent.
type OperationResult struct {
	Agent string `json:"agent"`
	// Done: the agent's part succeeded; Action says what was done, Error
	// why it failed.
	Done   bool   `json:"done"`
	Action string `json:"action,omitempty"`
	Error  string `json:"error,omitempty"`
	// Status is the agent's status after the operation ("" : unchanged).
	Status AgentStatus `json:"status,omitempty"`
	// Conversation is the conversation id kept at a hibernation.
	Conversation string `json:"conversation,omitempty"`
}

// Terminal reports whether the state is an end.
func (s OperationState) Terminal() bool {
	return s == OpDone || s == OpCancelled || s == OpAborted || s == OpFailed
}
