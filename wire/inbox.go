package wire

import (
	"encoding/json"
	"time"
)

// InboxMessage is one send as the agent receives it (docs/AGENTS.md, "What
// the inbox holds").
type InboxMessage struct {
	ID            string    `json:"id"`
	From          string    `json:"from"`
	Type          string    `json:"type" doc:"What this send is: the message's own type the first time (instruction, task_delegation, conversation, context_probe, scout_query, review, pre_operation), then the kind of each later send of the same id (retry of an instruction; ack_request, resend, wrong_id, correction, task_clarification, followup, cancel of a delegation; reminder, extension_granted, timeout_notice, operation_outcome of an operation's request)."`
	Subject       string    `json:"subject,omitempty"`
	Body          string    `json:"body"`
	TaskID        string    `json:"task_id,omitempty"`
	InstructionID string    `json:"instruction_id,omitempty"`
	OperationID   string    `json:"operation_id,omitempty"`
	Attempt       int       `json:"attempt"`
	CreatedAt     time.Time `json:"created_at"`
	TaskAttempt   int       `json:"task_attempt,omitempty" doc:"A task's turn: the task's attempt."`
	DryRun        bool      `json:"dry_run,omitempty" doc:"A task's turn: the task is a dry run."`
	Worktree      string    `json:"worktree,omitempty" doc:"A task's turn: the worktree the task works in, relative to the repository's root, when tasks are worked in parallel."`
}

// Inbox is one dispatch cycle of the calling agent: GET /v1/inbox.
type Inbox struct {
	Messages []InboxMessage `json:"messages"`
}

// Reply is an agent's answer: POST /v1/inbox/replies. Text is parsed (ACK
// lines, "ok"/"wait"/"cancel"); Type and Data carry the JSON forms.
type Reply struct {
	InReplyTo string          `json:"in_reply_to,omitempty"`
	Type      ReplyType       `json:"type,omitempty"`
	Text      string          `json:"text,omitempty"`
	Data      json.RawMessage `json:"data,omitempty" doc:"The JSON form named by type."`
}

// Interpretation says what a reply was taken to mean and what wilco did.
type Interpretation struct {
	Kind          Kind     `json:"kind"`
	DeliveryID    string   `json:"delivery_id,omitempty"`
	TaskID        string   `json:"task_id,omitempty"`
	OperationID   string   `json:"operation_id,omitempty"`
	Status        string   `json:"status,omitempty"`
	Understanding string   `json:"understanding,omitempty"`
	Questions     []string `json:"questions,omitempty"`
	Action        string   `json:"action"`
	Acknowledged  []string `json:"acknowledged,omitempty" doc:"The deliveries this reply acknowledged."`
}

// Interpreted is the answer to a reply: POST /v1/inbox/replies.
type Interpreted struct {
	Interpreted Interpretation `json:"interpreted"`
}

// Ask asks a scout a question: POST /v1/ask.
type Ask struct {
	Scout    string `json:"scout"`
	Question string `json:"question"`
}
