package client

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration carried as a Go duration string ("90s",
// "5m"), the API's form. It also accepts a number of nanoseconds.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("client: bad duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("client: bad duration %s", b)
	}
	*d = Duration(n)
	return nil
}

// Agent statuses.
const (
	AgentAvailable    = "available"
	AgentBusy         = "busy"
	AgentUnresponsive = "unresponsive"
	AgentHibernating  = "hibernating"
	AgentOffline      = "offline"
)

// Agent is a named worker. The fields after Status are
// extras this server adds.
type Agent struct {
	Name         string   `json:"name"`
	Adapter      string   `json:"adapter"`
	Capabilities []string `json:"capabilities"`
	Status       string   `json:"status"`
	// Pull agents fetch their messages (mailbox); the others are handed them.
	Pull     bool `json:"pull,omitempty"`
	HasToken bool `json:"has_token,omitempty"`
	// Waiting counts what waits for the agent's next dispatch cycle;
	// Unacknowledged the instructions sent and not yet acknowledged.
	Waiting        int `json:"waiting,omitempty"`
	Unacknowledged int `json:"unacknowledged,omitempty"`
	// FromConfig: the agent comes from wilco.yaml; Removed: it was taken
	// out of service.
	FromConfig bool `json:"from_config,omitempty"`
	Removed    bool `json:"removed,omitempty"`
	// Conversation is what a hibernated agent resumes at its wake.
	Conversation string `json:"conversation,omitempty"`
	// Pane is what a tmux agent's pane shows.
	Pane *Pane `json:"pane,omitempty"`
	// Role is "scout" for a read-only helper agents consult.
	Role string `json:"role,omitempty"`
	// Context is what the last context probe learned of the agent's side.
	Context *AgentContext `json:"context,omitempty"`
}

// Pane is what a tmux agent's pane shows: State is ready, busy,
// permission, dialog, typing, dead, not started or hibernating; Attach is
// the command that opens its session.
type Pane struct {
	State        string   `json:"state"`
	Session      string   `json:"session"`
	Attach       []string `json:"attach"`
	Queued       int      `json:"queued"`
	Working      string   `json:"working,omitempty"`
	Conversation string   `json:"conversation,omitempty"`
}

// AgentContext is what a context probe learned of an agent's side: its
// OS, its CLI's version, and each tool's version or "missing".
type AgentContext struct {
	OS    string            `json:"os,omitempty"`
	CLI   string            `json:"cli,omitempty"`
	Tools map[string]string `json:"tools,omitempty"`
	At    time.Time         `json:"at"`
}

// NextAgent says where the next task that names no agent would go, and why.
type NextAgent struct {
	Agent string `json:"agent"`
	Why   string `json:"why"`
}

// AgentSpec registers an agent: POST /v1/agents. Adapter is exec, mailbox
// or tmux; the other fields are those of the agent's entry in wilco.yaml.
type AgentSpec struct {
	Name         string            `json:"name"`
	Adapter      string            `json:"adapter"`
	Capabilities []string          `json:"capabilities,omitempty"`
	Preset       string            `json:"preset,omitempty"`
	Command      []string          `json:"command,omitempty"`
	Prompt       string            `json:"prompt,omitempty"`
	Handshake    string            `json:"handshake,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Timeout      Duration          `json:"timeout,omitzero"`
	IdleTimeout  Duration          `json:"idle_timeout,omitzero"`
}

// CreatedAgent is the answer to registering an agent: the agent, and its
// token (shown once).
type CreatedAgent struct {
	Agent Agent  `json:"agent"`
	Token string `json:"token"`
}

// MessageRequest sends a message: POST /v1/messages. Without Type the
// server classifies the body; a task delegation is tracked under the ack
// policy.
type MessageRequest struct {
	To      string `json:"to"`
	Type    string `json:"type,omitempty"`
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body"`
	TaskID  string `json:"task_id,omitempty"`
	// For a task delegation: what reassignment and the understanding
	// check need.
	Capabilities       []string `json:"capabilities,omitempty"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty"`
	Description        string   `json:"description,omitempty"`
}

// Message is a message sent to or from an agent and where its delivery
// stands.
type Message struct {
	ID             string     `json:"id"`
	From           string     `json:"from"`
	To             string     `json:"to"`
	Type           string     `json:"type"`
	Policy         string     `json:"policy,omitempty"`
	Subject        string     `json:"subject"`
	Body           string     `json:"body"`
	TaskID         string     `json:"task_id,omitempty"`
	OperationID    string     `json:"operation_id,omitempty"`
	State          string     `json:"state"`
	Attempts       int        `json:"attempts"`
	Answer         string     `json:"answer,omitempty"`
	Understanding  string     `json:"understanding,omitempty"`
	Questions      []string   `json:"questions,omitempty"`
	Reason         string     `json:"reason,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	SentAt         *time.Time `json:"sent_at,omitempty"`
	AcknowledgedAt *time.Time `json:"acknowledged_at"`
	FailedAt       *time.Time `json:"failed_at,omitempty"`
	CancelledAt    *time.Time `json:"cancelled_at,omitempty"`
}

// Delivery states of a message (clarifying is a delegation waiting for the
// user's answers).
const (
	DeliveryPending      = "pending"
	DeliverySent         = "sent"
	DeliveryClarifying   = "clarifying"
	DeliveryAcknowledged = "acknowledged"
	DeliveryFailed       = "failed"
	DeliveryCancelled    = "cancelled"
)

// DeliveryTerminal reports whether a message or instruction state is an end.
func DeliveryTerminal(state string) bool {
	return state == DeliveryAcknowledged || state == DeliveryFailed || state == DeliveryCancelled
}

// MessageFilter selects messages: GET /v1/messages (an extra of this
// server). Empty fields select all.
type MessageFilter struct {
	Agent, State, Type, Task string
}

// AckWhen is the matcher that acknowledges an instruction when the
// agent's reply contains a text or matches a regular expression.
type AckWhen struct {
	Contains string `json:"contains,omitempty"`
	Regex    string `json:"regex,omitempty"`
}

// InstructionRequest queues an instruction: POST /v1/instructions.
// MaxRetries nil takes the server's policy (3: four sends).
type InstructionRequest struct {
	Agent      string   `json:"agent"`
	Content    string   `json:"content"`
	MaxRetries *int     `json:"max_retries,omitempty"`
	AckWhen    *AckWhen `json:"ack_when,omitempty"`
}

// Instruction states.
const (
	InstructionPending      = "pending"
	InstructionSent         = "sent"
	InstructionAcknowledged = "acknowledged"
	InstructionFailed       = "failed"
	InstructionCancelled    = "cancelled"
)

// InstructionFilter selects instructions: GET /v1/instructions. Empty
// fields select all.
type InstructionFilter struct {
	State, Agent string
}

// Instruction is a delivery under the cycles policy.
type Instruction struct {
	ID             string     `json:"id"`
	Agent          string     `json:"agent"`
	Content        string     `json:"content"`
	State          string     `json:"state"`
	RetryCount     int        `json:"retry_count"`
	MaxRetries     int        `json:"max_retries"`
	AckWhen        *AckWhen   `json:"ack_when,omitempty"`
	Reason         string     `json:"reason,omitempty"`
	CreatedAt      *time.Time `json:"created_at,omitempty"`
	SentAt         *time.Time `json:"sent_at"`
	AcknowledgedAt *time.Time `json:"acknowledged_at"`
	FailedAt       *time.Time `json:"failed_at"`
	CancelledAt    *time.Time `json:"cancelled_at,omitempty"`
}

// InboxMessage is one send as the agent receives it (docs/AGENTS.md, "What
// the inbox holds"): Type is what this send is, the message's own type the
// first time, then the kind of each later send of the same ID.
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
	TaskAttempt   int       `json:"task_attempt,omitempty"`
}

// Reply is an agent's answer: POST /v1/inbox/replies. Text is parsed (ACK
// lines, "ok"/"wait"/"cancel"); Type and Data carry the JSON forms
// (task-acknowledgment, task-acknowledgment-error, checkpoint-ack,
// task-complete, acknowledgment).
type Reply struct {
	InReplyTo string          `json:"in_reply_to,omitempty"`
	Type      string          `json:"type,omitempty"`
	Text      string          `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
}

// Interpretation kinds.
const (
	KindAck            = "ack"
	KindAckError       = "ack_error"
	KindCheckpoint     = "checkpoint"
	KindComplete       = "complete"
	KindOperationReply = "operation_reply"
	KindMessage        = "message"
)

// Interpretation says what a reply was taken to mean and what wilco did.
type Interpretation struct {
	Kind          string   `json:"kind"`
	DeliveryID    string   `json:"delivery_id,omitempty"`
	TaskID        string   `json:"task_id,omitempty"`
	OperationID   string   `json:"operation_id,omitempty"`
	Status        string   `json:"status,omitempty"`
	Understanding string   `json:"understanding,omitempty"`
	Questions     []string `json:"questions,omitempty"`
	Action        string   `json:"action,omitempty"`
	Acknowledged  []string `json:"acknowledged,omitempty"`
}

// OperationRequest starts an operation: POST /v1/operations. Zero fields
// take the server's policy (by default 120s, reminders at 30s 60s 90s, one
// 60s extension, proceed on timeout, quorum all).
type OperationRequest struct {
	Operation        string     `json:"operation"`
	Agents           []string   `json:"agents"`
	Message          string     `json:"message,omitempty"`
	Timeout          Duration   `json:"timeout,omitzero"`
	Reminders        []Duration `json:"reminders,omitempty"`
	Extension        Duration   `json:"extension,omitzero"`
	ProceedOnTimeout *bool      `json:"proceed_on_timeout,omitempty"`
	// Quorum is "all", "any", "majority" or a number of agents.
	Quorum  string   `json:"quorum,omitempty"`
	Command []string `json:"command,omitempty"`
	// Target is what install-skill and install-plugin install: a path.
	Target string `json:"target,omitempty"`
}

// Operation states.
const (
	OperationWaiting    = "waiting"
	OperationProceeding = "proceeding"
	OperationDone       = "done"
	OperationCancelled  = "cancelled"
	OperationAborted    = "aborted"
	OperationFailed     = "failed"
)

// OperationTerminal reports whether an operation state is an end.
func OperationTerminal(state string) bool {
	switch state {
	case OperationDone, OperationCancelled, OperationAborted, OperationFailed:
		return true
	}
	return false
}

// OperationAgent is one agent's answer to an operation: Response is "ok",
// "wait", "cancel", "timeout", or nil while nothing came.
type OperationAgent struct {
	Name        string     `json:"name"`
	Message     string     `json:"message,omitempty"`
	Response    *string    `json:"response"`
	RespondedAt *time.Time `json:"responded_at"`
	Extended    bool       `json:"extended"`
}

// Operation is a pre-operation acknowledgment and its outcome.
type Operation struct {
	ID                     string              `json:"id"`
	Operation              string              `json:"operation"`
	State                  string              `json:"state"`
	Agents                 []OperationAgent    `json:"agents"`
	RemindersSent          int                 `json:"reminders_sent"`
	AcknowledgmentReceived bool                `json:"acknowledgment_received"`
	TimeoutOccurred        bool                `json:"timeout_occurred"`
	ProceededAnyway        bool                `json:"proceeded_anyway"`
	CreatedAt              time.Time           `json:"created_at"`
	FinishedAt             *time.Time          `json:"finished_at"`
	Reason                 string              `json:"reason,omitempty"`
	ExitCode               *int                `json:"exit_code,omitempty"`
	Output                 string              `json:"output,omitempty"`
	Message                string              `json:"message,omitempty"`
	Command                []string            `json:"command,omitempty"`
	Timeout                string              `json:"timeout,omitempty"`
	Reminders              []string            `json:"reminders,omitempty"`
	Extension              string              `json:"extension,omitempty"`
	ProceedOnTimeout       *bool               `json:"proceed_on_timeout,omitempty"`
	Quorum                 string              `json:"quorum,omitempty"`
	Target                 string              `json:"target,omitempty"`
	Results                []OperationResult   `json:"results,omitempty"`
	Log                    []OperationLogEntry `json:"log,omitempty"`
}

// OperationResult is what an operation on agents did to one agent.
type OperationResult struct {
	Agent        string `json:"agent"`
	Done         bool   `json:"done"`
	Action       string `json:"action,omitempty"`
	Error        string `json:"error,omitempty"`
	Status       string `json:"status,omitempty"`
	Conversation string `json:"conversation,omitempty"`
}

// OperationLogEntry is one step of an operation's round.
type OperationLogEntry struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Type  string    `json:"type"`
	Agent string    `json:"agent,omitempty"`
	Text  string    `json:"text"`
}

// Task states.
const (
	TaskQueued      = "queued"
	TaskAwaitingAck = "awaiting_ack"
	TaskClarifying  = "clarifying"
	TaskRunning     = "running"
	TaskEscalated   = "escalated"
	TaskBlocked     = "blocked"
	TaskProposed    = "proposed"
	TaskSuccess     = "success"
	// TaskUnverified: the agent finished but no verify step is
	// configured, so nothing checked its work.
	TaskUnverified = "unverified"
	TaskCancelled  = "cancelled"
	TaskStuck      = "stuck"
	TaskSkipped    = "skipped"
	TaskAborted    = "aborted"
	TaskFailed     = "failed"
)

// TaskSettled reports whether a task in this state waits for nothing more
// from its agent: it ended, or (proposed) it waits for the user to apply
// or discard its diff.
func TaskSettled(state string) bool {
	switch state {
	case TaskSuccess, TaskUnverified, TaskCancelled, TaskStuck, TaskSkipped, TaskAborted, TaskFailed, TaskProposed:
		return true
	}
	return false
}

// TaskRequest submits a task: POST /v1/tasks.
type TaskRequest struct {
	Description        string   `json:"description"`
	Constraints        []string `json:"constraints,omitempty"`
	NonGoals           []string `json:"non_goals,omitempty"`
	Boundaries         []string `json:"boundaries,omitempty"`
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty"`
	DryRun             bool     `json:"dry_run,omitempty"`
	Agent              string   `json:"agent,omitempty"`
	ID                 string   `json:"id,omitempty"`
	// Package is the monorepo package (a folder) the task is scoped to.
	Package string `json:"package,omitempty"`
}

// Verification is the verify step of a failed attempt.
type Verification struct {
	Command       string `json:"command"`
	ExitCode      int    `json:"exit_code"`
	OutputSummary string `json:"output_summary"`
}

// ExecutorOutput is what the agent's attempt produced.
type ExecutorOutput struct {
	Status        string        `json:"status"`
	FilesModified []string      `json:"files_modified"`
	Verification  *Verification `json:"verification,omitempty"`
	Error         string        `json:"error,omitempty"`
}

// Failure is the failure record of one attempt.
type Failure struct {
	Attempt        int            `json:"attempt"`
	Timestamp      time.Time      `json:"timestamp"`
	FailureType    string         `json:"failure_type"`
	RunID          string         `json:"run_id,omitempty"`
	ExecutorOutput ExecutorOutput `json:"executor_output"`
	RootCauseGuess string         `json:"root_cause_guess,omitempty"`
	SuggestedFix   string         `json:"suggested_fix,omitempty"`
}

// Task is a unit of user work and where it stands. The
// shapes of Escalation, Summary and StuckReport are the server's: they are
// kept as raw JSON.
type Task struct {
	ID                  string          `json:"id"`
	Description         string          `json:"description"`
	Constraints         []string        `json:"constraints"`
	NonGoals            []string        `json:"non_goals"`
	Boundaries          []string        `json:"boundaries"`
	AcceptanceCriteria  []string        `json:"acceptance_criteria"`
	State               string          `json:"state"`
	Phase               string          `json:"phase,omitempty"`
	DryRun              bool            `json:"dry_run"`
	Agent               string          `json:"agent,omitempty"`
	Position            *int            `json:"position"`
	Attempt             int             `json:"attempt"`
	MaxAttempts         int             `json:"max_attempts,omitempty"`
	ConsecutiveFailures int             `json:"consecutive_failures"`
	TotalVerifyLoops    int             `json:"total_verify_loops"`
	Replans             int             `json:"replans"`
	Milestone           string          `json:"milestone,omitempty"`
	Questions           []string        `json:"questions"`
	Escalation          json.RawMessage `json:"escalation,omitempty"`
	Failures            []Failure       `json:"failures"`
	Summary             json.RawMessage `json:"summary,omitempty"`
	StuckReport         json.RawMessage `json:"stuck_report,omitempty"`
	CreatedAt           time.Time       `json:"created_at"`
	StartedAt           *time.Time      `json:"started_at"`
	FinishedAt          *time.Time      `json:"finished_at"`
	// Extras: the plan a task belongs to and the tasks it waits for.
	PlanID    string   `json:"plan_id,omitempty"`
	DependsOn []string `json:"depends_on,omitempty"`
	// BlockedBy is why a blocked task is blocked, in the agent's words.
	BlockedBy string `json:"blocked_by,omitempty"`
	// Usage is what the task's turns cost; Usages per attempt.
	Usage  Usage `json:"usage"`
	Usages []struct {
		Attempt int    `json:"attempt"`
		Agent   string `json:"agent"`
		Day     string `json:"day"`
		Usage   Usage  `json:"usage"`
	} `json:"usages,omitempty"`
	// Package is the monorepo package the task is scoped to.
	Package string `json:"package,omitempty"`
	// Warnings are what the definition of done found and let pass.
	Warnings []string `json:"warnings,omitempty"`
	// Review is the last review of the change, when a reviewer is
	// configured.
	Review *Review `json:"review,omitempty"`
	// Consultations are the questions asked of scouts, with their answers.
	Consultations []Consultation `json:"consultations,omitempty"`
}

// Review is a reviewer's review of a task's change.
type Review struct {
	Attempt  int    `json:"attempt"`
	Reviewer string `json:"reviewer"`
	RunID    string `json:"run_id"`
	// Verdict is APPROVED or REJECTED once the reviewer answered.
	Verdict string `json:"verdict,omitempty"`
	Reasons string `json:"reasons,omitempty"`
}

// Consultation is a question an agent asked a scout, and its answer.
type Consultation struct {
	ID       string `json:"id"`
	TaskID   string `json:"task_id"`
	Attempt  int    `json:"attempt"`
	From     string `json:"from"`
	Scout    string `json:"scout"`
	Question string `json:"question"`
	// State is ConsultPending, ConsultAnswered or ConsultFailed.
	State   string     `json:"state"`
	Answer  string     `json:"answer,omitempty"`
	Error   string     `json:"error,omitempty"`
	AskedAt time.Time  `json:"asked_at"`
	EndedAt *time.Time `json:"ended_at,omitempty"`
}

// Consultation states.
const (
	ConsultPending  = "pending"
	ConsultAnswered = "answered"
	ConsultFailed   = "failed"
)

// QueueEntry is one queued task (position 1 runs next).
type QueueEntry struct {
	ID          string `json:"id"`
	Position    int    `json:"position"`
	Description string `json:"description"`
}

// Respond actions for an escalated or blocked task.
const (
	ActionRetry = "retry"
	ActionSkip  = "skip"
	ActionAbort = "abort"
	ActionFix   = "fix"
)

// PlanTask is one task of a plan; DependsOn lists the 1-based numbers of
// the tasks it waits for.
type PlanTask struct {
	TaskRequest
	DependsOn []int `json:"depends_on,omitempty"`
}

// PlanRequest submits a plan: POST /v1/plans. Its tasks get the ids
// "<id>:task-<n>".
type PlanRequest struct {
	ID    string     `json:"id"`
	Tasks []PlanTask `json:"tasks"`
}

// Plan is a plan, its tasks and its retry summary. The
// summary's shape is the server's and is kept as raw JSON.
type Plan struct {
	ID      string          `json:"id"`
	State   string          `json:"state"`
	Tasks   []Task          `json:"tasks"`
	Summary json.RawMessage `json:"summary,omitempty"`
}

// Event is one numbered state change. Data is the event's
// payload, whose shape depends on Type.
type Event struct {
	Seq    uint64          `json:"seq"`
	Time   time.Time       `json:"time"`
	Type   string          `json:"type"`
	TaskID string          `json:"task_id,omitempty"`
	Agent  string          `json:"agent,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// Event types of the event stream.
const (
	EventTaskQueued           = "task.queued"
	EventTaskState            = "task.state"
	EventTaskMilestone        = "task.milestone"
	EventTaskFailure          = "task.failure"
	EventTaskReplan           = "task.replan"
	EventDeliverySent         = "delivery.sent"
	EventDeliveryRetried      = "delivery.retried"
	EventDeliveryAcknowledged = "delivery.acknowledged"
	EventDeliveryFailed       = "delivery.failed"
	EventAgentStatus          = "agent.status"
	EventOperationReminder    = "operation.reminder"
	EventOperationState       = "operation.state"
)

// EventPage is one page of the stored event log.
type EventPage struct {
	Events []Event `json:"events"`
	// Next is the seq to pass as After for the following page.
	Next uint64 `json:"next"`
}

// EventQuery selects events: those of one task or agent (empty: all),
// after a seq (0: from the first). Limit bounds a page (0: the server's).
type EventQuery struct {
	Task  string
	Agent string
	After uint64
	Limit int
}
