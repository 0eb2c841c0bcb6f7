package wire

import "time"

// StartOperation starts an operation: POST /v1/operations. Zero fields
// take the server's policy (by default 120s, reminders at 30s 60s 90s, one
// 60s extension, proceed on timeout, quorum all).
type StartOperation struct {
	Operation        string     `json:"operation"`
	Agents           []string   `json:"agents"`
	Message          string     `json:"message,omitempty"`
	Timeout          Duration   `json:"timeout,omitzero"`
	Reminders        []Duration `json:"reminders,omitempty"`
	Extension        Duration   `json:"extension,omitzero"`
	ProceedOnTimeout *bool      `json:"proceed_on_timeout,omitempty"`
	Quorum           string     `json:"quorum,omitempty" doc:"all, majority or a number"`
	Command          []string   `json:"command,omitempty"`
	Target           string     `json:"target,omitempty" doc:"install-skill and install-plugin: the path of what is installed"`
}

// Operation is a pre-operation acknowledgment and its outcome.
type Operation struct {
	ID                     string              `json:"id"`
	Operation              string              `json:"operation"`
	State                  OperationState      `json:"state"`
	Message                string              `json:"message,omitempty"`
	Command                []string            `json:"command,omitempty"`
	Agents                 []OperationAgent    `json:"agents"`
	RemindersSent          int                 `json:"reminders_sent"`
	AcknowledgmentReceived bool                `json:"acknowledgment_received"`
	TimeoutOccurred        bool                `json:"timeout_occurred"`
	ProceededAnyway        bool                `json:"proceeded_anyway"`
	Reason                 string              `json:"reason,omitempty"`
	ExitCode               *int                `json:"exit_code"`
	Output                 string              `json:"output,omitempty"`
	Timeout                Duration            `json:"timeout"`
	Reminders              []Duration          `json:"reminders"`
	Extension              Duration            `json:"extension"`
	ProceedOnTimeout       bool                `json:"proceed_on_timeout"`
	Quorum                 string              `json:"quorum"`
	CreatedAt              time.Time           `json:"created_at"`
	FinishedAt             *time.Time          `json:"finished_at"`
	Target                 string              `json:"target,omitempty" doc:"What an install operation installs."`
	Results                []OperationResult   `json:"results,omitempty" doc:"What an operation on agents did to each of them."`
	Log                    []OperationLogEntry `json:"log,omitempty" doc:"The operation's round, step by step (GET /v1/operations/{id} only)."`
}

// OperationAgent is one agent's part in an operation.
type OperationAgent struct {
	Name        string     `json:"name"`
	Message     string     `json:"message" doc:"The delivery of the pre-operation request to this agent."`
	Response    *string    `json:"response" doc:"ok, wait (an extension was granted and no ok followed), cancel, timeout, or null while nothing came."`
	RespondedAt *time.Time `json:"responded_at"`
	Extended    bool       `json:"extended"`
}

// OperationResult is what an operation on agents did to one agent.
type OperationResult struct {
	Agent        string      `json:"agent"`
	Done         bool        `json:"done" doc:"The agent's part succeeded: action says what was done, error why it failed."`
	Action       string      `json:"action,omitempty"`
	Error        string      `json:"error,omitempty"`
	Status       AgentStatus `json:"status,omitempty" doc:"The agent's status after the operation (none: unchanged)."`
	Conversation string      `json:"conversation,omitempty" doc:"The conversation kept at a hibernation."`
}

// OperationLogEntry is one step of an operation's round: the request, a
// reminder, an answer, a notice, a change of state, what was done to an
// agent.
type OperationLogEntry struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Type  string    `json:"type"`
	Agent string    `json:"agent,omitempty"`
	Text  string    `json:"text"`
}

// OperationList is the operation log: GET /v1/operations.
type OperationList struct {
	Operations []Operation `json:"operations"`
}
