package wire

// values is the strings of an enumeration's values.
func values[T ~string](vs ...T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// TaskState is where a task stands.
type TaskState string

// Task states.
const (
	TaskQueued      TaskState = "queued"
	TaskAwaitingAck TaskState = "awaiting_ack"
	TaskClarifying  TaskState = "clarifying"
	TaskRunning     TaskState = "running"
	TaskEscalated   TaskState = "escalated"
	TaskBlocked     TaskState = "blocked"
	TaskProposed    TaskState = "proposed"
	TaskSuccess     TaskState = "success"
	// TaskUnverified: the agent finished but no verify step is
	// configured, so nothing checked its work.
	TaskUnverified TaskState = "unverified"
	TaskCancelled  TaskState = "cancelled"
	TaskStuck      TaskState = "stuck"
	TaskSkipped    TaskState = "skipped"
	TaskAborted    TaskState = "aborted"
	TaskFailed     TaskState = "failed"
)

// Values are the task states.
func (TaskState) Values() []string {
	return values(TaskQueued, TaskAwaitingAck, TaskClarifying, TaskRunning, TaskEscalated, TaskBlocked, TaskProposed,
		TaskSuccess, TaskUnverified, TaskCancelled, TaskStuck, TaskSkipped, TaskAborted, TaskFailed)
}

// Settled reports whether a task in this state waits for nothing more
// from its agent: it ended, or (proposed) it waits for the user to apply
// or discard its diff.
func (s TaskState) Settled() bool {
	switch s {
	case TaskSuccess, TaskUnverified, TaskCancelled, TaskStuck, TaskSkipped, TaskAborted, TaskFailed, TaskProposed:
		return true
	}
	return false
}

// Phase is what a running task is doing.
type Phase string

// Phases of a running task.
const (
	PhaseExecuting  Phase = "executing"
	PhaseVerifying  Phase = "verifying"
	PhaseRetrying   Phase = "retrying"
	PhaseReplanning Phase = "replanning"
	PhaseReviewing  Phase = "reviewing"
	// PhaseLanding: the verified change is being committed, or waits
	// for its turn to land.
	PhaseLanding Phase = "landing"
	// PhasePreparing: the worktree of a task worked in parallel is being
	// made.
	PhasePreparing Phase = "preparing"
	// PhasePullRequest: the verified change is in a pull request, waiting
	// for its checks and its review (land pr).
	PhasePullRequest Phase = "pull_request"
)

// Values are the phases.
func (Phase) Values() []string {
	return values(PhasePreparing, PhaseExecuting, PhaseVerifying, PhaseRetrying, PhaseReplanning, PhaseReviewing, PhaseLanding, PhasePullRequest)
}

// LandHow is how a task's verified change lands on the target branch.
type LandHow string

// Ways to land. This version runs commit and none; the others need tasks
// in worktrees of their own and are refused.
const (
	LandMerge  LandHow = "merge"
	LandRebase LandHow = "rebase"
	LandSquash LandHow = "squash"
	LandCommit LandHow = "commit"
	LandNone   LandHow = "none"
	LandPR     LandHow = "pr"
)

// Values are the ways to land.
func (LandHow) Values() []string {
	return values(LandMerge, LandRebase, LandSquash, LandCommit, LandNone, LandPR)
}

// PlanState is where a plan stands.
type PlanState string

// Plan states.
const (
	PlanRunning PlanState = "running"
	PlanDone    PlanState = "done"
	PlanAborted PlanState = "aborted"
)

// Values are the plan states.
func (PlanState) Values() []string { return values(PlanRunning, PlanDone, PlanAborted) }

// FailureType is what kind of failure an attempt had.
type FailureType string

// Failure types.
const (
	FailureExecution    FailureType = "execution_error"
	FailureVerification FailureType = "verification_failed"
	FailureTimeout      FailureType = "timeout"
	FailureRejected     FailureType = "architect_rejected"
	// FailureEnvironment is a failure no retry can fix: a missing
	// program, an agent that is not logged in.
	FailureEnvironment FailureType = "environment"
	// FailureMergeConflict: a verified task's branch conflicts with what
	// landed on the target since it started.
	FailureMergeConflict FailureType = "merge_conflict"
	// FailureIntegration: a verified task combined with what landed on
	// the target since it started fails a check.
	FailureIntegration FailureType = "integration_failed"
	// FailureCI: a check of the task's pull request failed (its log's
	// tail is in the record).
	FailureCI FailureType = "ci_failed"
	// FailureChangesRequested: a review of the task's pull request asked
	// for changes or commented on lines of its diff.
	FailureChangesRequested FailureType = "changes_requested"
)

// Values are the failure types.
func (FailureType) Values() []string {
	return values(FailureExecution, FailureVerification, FailureTimeout, FailureRejected, FailureEnvironment, FailureMergeConflict, FailureIntegration, FailureCI, FailureChangesRequested)
}

// Action is the user's answer to an escalated or blocked task.
type Action string

// Actions.
const (
	ActionRetry Action = "retry"
	ActionFix   Action = "fix"
	ActionSkip  Action = "skip"
	ActionAbort Action = "abort"
)

// Values are the actions.
func (Action) Values() []string { return values(ActionRetry, ActionFix, ActionSkip, ActionAbort) }

// Verdict is a reviewer's verdict on a task's change.
type Verdict string

// Verdicts.
const (
	VerdictApproved Verdict = "APPROVED"
	VerdictRejected Verdict = "REJECTED"
)

// Values are the verdicts.
func (Verdict) Values() []string { return values(VerdictApproved, VerdictRejected) }

// ConsultationState is where a question to a scout stands.
type ConsultationState string

// Consultation states.
const (
	ConsultPending  ConsultationState = "pending"
	ConsultAnswered ConsultationState = "answered"
	ConsultFailed   ConsultationState = "failed"
)

// Values are the consultation states.
func (ConsultationState) Values() []string {
	return values(ConsultPending, ConsultAnswered, ConsultFailed)
}

// TranscriptKind is what a transcript entry is.
type TranscriptKind string

// Transcript entry kinds.
const (
	TranscriptPrompt     TranscriptKind = "prompt"
	TranscriptText       TranscriptKind = "text"
	TranscriptToolCall   TranscriptKind = "tool_call"
	TranscriptToolResult TranscriptKind = "tool_result"
	TranscriptError      TranscriptKind = "error"
	TranscriptNote       TranscriptKind = "note"
)

// Values are the transcript entry kinds.
func (TranscriptKind) Values() []string {
	return values(TranscriptPrompt, TranscriptText, TranscriptToolCall, TranscriptToolResult, TranscriptError, TranscriptNote)
}

// AgentStatus is an agent's availability.
type AgentStatus string

// Agent statuses.
const (
	AgentAvailable    AgentStatus = "available"
	AgentBusy         AgentStatus = "busy"
	AgentUnresponsive AgentStatus = "unresponsive"
	AgentHibernating  AgentStatus = "hibernating"
	AgentOffline      AgentStatus = "offline"
)

// Values are the agent statuses.
func (AgentStatus) Values() []string {
	return values(AgentAvailable, AgentBusy, AgentUnresponsive, AgentHibernating, AgentOffline)
}

// Adapter is how wilco talks to an agent.
type Adapter string

// Adapters.
const (
	AdapterExec    Adapter = "exec"
	AdapterMailbox Adapter = "mailbox"
	AdapterTmux    Adapter = "tmux"
)

// Values are the adapters.
func (Adapter) Values() []string { return values(AdapterExec, AdapterMailbox, AdapterTmux) }

// Preset is the agent CLI an exec or tmux agent runs, with its known
// command line.
type Preset string

// Presets.
const (
	PresetClaudeCode Preset = "claude-code"
	PresetCodex      Preset = "codex"
	PresetGemini     Preset = "gemini"
	PresetAider      Preset = "aider"
	PresetOpencode   Preset = "opencode"
)

// Values are the presets.
func (Preset) Values() []string {
	return values(PresetClaudeCode, PresetCodex, PresetGemini, PresetAider, PresetOpencode)
}

// PromptMode is how an exec agent gets its prompt.
type PromptMode string

// Prompt modes.
const (
	PromptStdin PromptMode = "stdin"
	PromptArg   PromptMode = "arg"
	PromptFile  PromptMode = "file"
)

// Values are the prompt modes.
func (PromptMode) Values() []string { return values(PromptStdin, PromptArg, PromptFile) }

// Handshake is how an exec agent acknowledges a task.
type Handshake string

// Handshakes.
const (
	HandshakeInline  Handshake = "inline"
	HandshakeSession Handshake = "session"
	HandshakeNone    Handshake = "none"
)

// Values are the handshakes.
func (Handshake) Values() []string { return values(HandshakeInline, HandshakeSession, HandshakeNone) }

// Role is an agent's role ("": it takes tasks).
type Role string

// RoleScout is a read-only helper agents consult; it takes no task.
const RoleScout Role = "scout"

// Values are the roles.
func (Role) Values() []string { return values(RoleScout) }

// PaneState is what a tmux agent's pane shows.
type PaneState string

// Pane states.
const (
	PaneReady       PaneState = "ready"
	PaneBusy        PaneState = "busy"
	PanePermission  PaneState = "permission"
	PaneDialog      PaneState = "dialog"
	PaneTyping      PaneState = "typing"
	PaneDead        PaneState = "dead"
	PaneNotStarted  PaneState = "not started"
	PaneHibernating PaneState = "hibernating"
)

// Values are the pane states.
func (PaneState) Values() []string {
	return values(PaneReady, PaneBusy, PanePermission, PaneDialog, PaneTyping, PaneDead, PaneNotStarted, PaneHibernating)
}

// MessageType is what a message is.
type MessageType string

// Message types.
const (
	TypeInstruction  MessageType = "instruction"
	TypeDelegation   MessageType = "task_delegation"
	TypeConversation MessageType = "conversation"
	TypePreOperation MessageType = "pre_operation"
	TypeTaskTurn     MessageType = "task_turn"
	TypeReview       MessageType = "review"
	TypeScoutQuery   MessageType = "scout_query"
	TypeProbe        MessageType = "context_probe"
)

// Values are the message types.
func (MessageType) Values() []string {
	return values(TypeInstruction, TypeDelegation, TypeConversation, TypePreOperation, TypeTaskTurn, TypeReview, TypeScoutQuery, TypeProbe)
}

// Policy is how a message's delivery is tracked.
type Policy string

// Delivery policies.
const (
	PolicyNone      Policy = "none"
	PolicyCycles    Policy = "cycles"
	PolicyBackoff   Policy = "backoff"
	PolicyReminders Policy = "reminders"
)

// Values are the policies.
func (Policy) Values() []string {
	return values(PolicyNone, PolicyCycles, PolicyBackoff, PolicyReminders)
}

// DeliveryState is where a message's delivery stands (clarifying is a
// delegation waiting for the user's answers).
type DeliveryState string

// Delivery states.
const (
	DeliveryPending      DeliveryState = "pending"
	DeliverySent         DeliveryState = "sent"
	DeliveryClarifying   DeliveryState = "clarifying"
	DeliveryAcknowledged DeliveryState = "acknowledged"
	DeliveryFailed       DeliveryState = "failed"
	DeliveryCancelled    DeliveryState = "cancelled"
)

// Values are the delivery states.
func (DeliveryState) Values() []string {
	return values(DeliveryPending, DeliverySent, DeliveryClarifying, DeliveryAcknowledged, DeliveryFailed, DeliveryCancelled)
}

// Terminal reports whether a message or instruction in this state ended.
func (s DeliveryState) Terminal() bool {
	return s == DeliveryAcknowledged || s == DeliveryFailed || s == DeliveryCancelled
}

// ReplyType names the JSON form of an agent's reply.
type ReplyType string

// Reply forms.
const (
	ReplyAck            ReplyType = "task-acknowledgment"
	ReplyAckError       ReplyType = "task-acknowledgment-error"
	ReplyCheckpoint     ReplyType = "checkpoint-ack"
	ReplyComplete       ReplyType = "task-complete"
	ReplyAcknowledgment ReplyType = "acknowledgment"
)

// Values are the reply forms.
func (ReplyType) Values() []string {
	return values(ReplyAck, ReplyAckError, ReplyCheckpoint, ReplyComplete, ReplyAcknowledgment)
}

// Kind is what an agent's reply was taken to be.
type Kind string

// Interpretation kinds.
const (
	KindAck            Kind = "ack"
	KindAckError       Kind = "ack_error"
	KindCheckpoint     Kind = "checkpoint"
	KindComplete       Kind = "complete"
	KindOperationReply Kind = "operation_reply"
	KindMessage        Kind = "message"
	KindProbe          Kind = "probe"
	KindReview         Kind = "review"
	KindScoutAnswer    Kind = "scout_answer"
)

// Values are the interpretation kinds.
func (Kind) Values() []string {
	return values(KindAck, KindAckError, KindCheckpoint, KindComplete, KindOperationReply, KindMessage, KindProbe, KindReview,
		KindScoutAnswer)
}

// OperationState is where an operation stands.
type OperationState string

// Operation states.
const (
	OperationWaiting    OperationState = "waiting"
	OperationProceeding OperationState = "proceeding"
	OperationDone       OperationState = "done"
	OperationCancelled  OperationState = "cancelled"
	OperationAborted    OperationState = "aborted"
	OperationFailed     OperationState = "failed"
)

// Values are the operation states.
func (OperationState) Values() []string {
	return values(OperationWaiting, OperationProceeding, OperationDone, OperationCancelled, OperationAborted, OperationFailed)
}

// Terminal reports whether an operation in this state ended.
func (s OperationState) Terminal() bool {
	switch s {
	case OperationDone, OperationCancelled, OperationAborted, OperationFailed:
		return true
	}
	return false
}

// NotifyEvent is what a notification tells of.
type NotifyEvent string

// Notification events.
const (
	NotifyEscalated     NotifyEvent = "escalated"
	NotifyClarification NotifyEvent = "clarification"
	NotifyBlocked       NotifyEvent = "blocked"
	NotifyStuck         NotifyEvent = "stuck"
	NotifyUnresponsive  NotifyEvent = "unresponsive"
	NotifyOperation     NotifyEvent = "operation"
	NotifyPermission    NotifyEvent = "permission"
	NotifySuccess       NotifyEvent = "success"
	NotifyFailed        NotifyEvent = "failed"
	// NotifyAcknowledged: an agent acknowledged a task, with its
	// understanding (not by default).
	NotifyAcknowledged NotifyEvent = "acknowledged"
	// NotifyPullRequest: a task's verified change was pushed to a new
	// pull request (not by default).
	NotifyPullRequest NotifyEvent = "pull_request"
	// NotifyEnded: a task ended otherwise than success, failed or stuck:
	// cancelled, skipped, aborted or unverified (not by default).
	NotifyEnded NotifyEvent = "ended"
)

// Values are the notification events.
func (NotifyEvent) Values() []string {
	return values(NotifyEscalated, NotifyClarification, NotifyBlocked, NotifyStuck, NotifyUnresponsive, NotifyOperation,
		NotifyPermission, NotifySuccess, NotifyFailed, NotifyAcknowledged, NotifyPullRequest, NotifyEnded)
}

// NotificationState is where a notification's delivery stands.
type NotificationState string

// Notification states.
const (
	NotificationPending   NotificationState = "pending"
	NotificationDelivered NotificationState = "delivered"
	NotificationFailed    NotificationState = "failed"
)

// Values are the notification states.
func (NotificationState) Values() []string {
	return values(NotificationPending, NotificationDelivered, NotificationFailed)
}

// SessionVia is how a request was authenticated.
type SessionVia string

// Ways in.
const (
	ViaCookie SessionVia = "cookie"
	ViaBearer SessionVia = "bearer"
)

// Values are the ways in.
func (SessionVia) Values() []string { return values(ViaCookie, ViaBearer) }

// MaestroPriority is an AI Maestro message's priority.
type MaestroPriority string

// Priorities.
const (
	PriorityLow    MaestroPriority = "low"
	PriorityNormal MaestroPriority = "normal"
	PriorityHigh   MaestroPriority = "high"
	PriorityUrgent MaestroPriority = "urgent"
)

// Values are the priorities.
func (MaestroPriority) Values() []string {
	return values(PriorityLow, PriorityNormal, PriorityHigh, PriorityUrgent)
}

// MaestroStatus is an AI Maestro message's mark.
type MaestroStatus string

// Marks.
const (
	StatusUnread   MaestroStatus = "unread"
	StatusRead     MaestroStatus = "read"
	StatusArchived MaestroStatus = "archived"
)

// Values are the marks.
func (MaestroStatus) Values() []string { return values(StatusUnread, StatusRead, StatusArchived) }
