package ack

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Status is the status of a text ACK or of a JSON task-acknowledgment,
// normalised: the text word RECEIVED and the JSON value "received" are both
// Received.
type Status string

// The statuses of the ACK protocol. Confirmed is JSON's answer after a clarification;
// the text form accepts CONFIRMED too, although the request lists only the
// other four.
const (
	Received            Status = "received"             // [ACK] … - RECEIVED, JSON "received"
	Confirmed           Status = "confirmed"            // JSON "confirmed" (after clarification)
	ClarificationNeeded Status = "clarification_needed" // CLARIFICATION_NEEDED, JSON "needs-clarification"
	Rejected            Status = "rejected"             // REJECTED
	Queued              Status = "queued"               // QUEUED
)

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool {
	switch s {
	case Received, Confirmed, ClarificationNeeded, Rejected, Queued:
		return true
	}
	return false
}

// word is the status as the text form writes it: RECEIVED, CLARIFICATION_NEEDED…
func (s Status) word() string { return strings.ToUpper(string(s)) }

// jsonValue is the status as the JSON task-acknowledgment writes it.
func (s Status) jsonValue() string {
	if s == ClarificationNeeded {
		return "needs-clarification"
	}
	return string(s)
}

// statusWords lists the spellings ParseStatus accepts, after normalisation
// (lower case, '-' and spaces read as '_').
var statusWords = map[string]Status{
	"received":             Received,
	"confirmed":            Confirmed,
	"clarification_needed": ClarificationNeeded,
	"needs_clarification":  ClarificationNeeded,
	"need_clarification":   ClarificationNeeded,
	"rejected":             Rejected,
	"queued":               Queued,
}

// statusOptions is how errors name the accepted words.
const statusOptions = "RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED or CONFIRMED"

// ParseStatus reads a status word of the text or the JSON form in any case,
// with '-', '_' or a space between words: "RECEIVED", "received",
// "CLARIFICATION_NEEDED", "needs-clarification", "Clarification needed"…
func ParseStatus(word string) (Status, error) {
	if s, ok := statusWords[normWord(word)]; ok {
		return s, nil
	}
	return "", fmt.Errorf("unknown status %q (want %s)", word, statusOptions)
}

// normWord lowercases w and turns runs of '-', '_' and spaces into one '_'.
func normWord(w string) string {
	var b strings.Builder
	sep := false
	for _, c := range strings.ToLower(strings.TrimSpace(w)) {
		if c == '-' || c == '_' || c == ' ' || c == '\t' {
			sep = true
			continue
		}
		if sep && b.Len() > 0 {
			b.WriteByte('_')
		}
		sep = false
		b.WriteRune(c)
	}
	return b.String()
}

// ErrorCode is the error_code of a task-acknowledgment-error.
type ErrorCode string

// The error codes of a task-acknowledgment-error; core says what wilco does with each.
const (
	ResourceUnavailable ErrorCode = "RESOURCE_UNAVAILABLE" // agent at capacity: wait retry_after, or reassign
	CapabilityMismatch  ErrorCode = "CAPABILITY_MISMATCH"  // agent lacks skills: reassign now
	NetworkError        ErrorCode = "NETWORK_ERROR"        // communication issue: retry with backoff
	InvalidTaskFormat   ErrorCode = "INVALID_TASK_FORMAT"  // malformed task: escalate, the task must be fixed
	AgentShuttingDown   ErrorCode = "AGENT_SHUTTING_DOWN"  // agent going offline: reassign now
)

// Valid reports whether c is one of the five codes.
func (c ErrorCode) Valid() bool {
	switch c {
	case ResourceUnavailable, CapabilityMismatch, NetworkError, InvalidTaskFormat, AgentShuttingDown:
		return true
	}
	return false
}

// ParseErrorCode reads an error code in any case, with '-', '_' or spaces
// between words: "RESOURCE_UNAVAILABLE", "resource-unavailable"…
func ParseErrorCode(s string) (ErrorCode, error) {
	c := ErrorCode(strings.ToUpper(normWord(s)))
	if c.Valid() {
		return c, nil
	}
	return "", fmt.Errorf("unknown error code %q (want RESOURCE_UNAVAILABLE, CAPABILITY_MISMATCH, NETWORK_ERROR, INVALID_TASK_FORMAT or AGENT_SHUTTING_DOWN)", s)
}

// Kind is what a reply was taken to mean.
type Kind string

// The kinds of reply. KindMessage is everything that is none of the others:
// prose, a question, an answer to a conversation.
const (
	KindAck            Kind = "ack"             // [ACK] line or JSON task-acknowledgment
	KindAckError       Kind = "ack_error"       // JSON task-acknowledgment-error
	KindCheckpoint     Kind = "checkpoint"      // JSON checkpoint-ack
	KindComplete       Kind = "complete"        // JSON task-complete
	KindOperationReply Kind = "operation_reply" // JSON acknowledgment
	KindMessage        Kind = "message"         // anything else
)

// OperationAnswer is an agent's answer to a pre-operation request.
type OperationAnswer string

// The answers to a pre-operation request.
const (
	AnswerOK     OperationAnswer = "ok"     // ready: proceed with the operation
	AnswerWait   OperationAnswer = "wait"   // more time needed: extend once
	AnswerCancel OperationAnswer = "cancel" // abort the operation
	AnswerInfo   OperationAnswer = "info"   // anything else: log it, keep waiting
)

// CompleteStatus is the status of a completion report: the executor's
// result at the end of its turn. "" is a claim of completion without a
// status: verification decides, as for a success.
type CompleteStatus string

// The statuses an executor may report at the end of its turn.
const (
	CompleteClaimed    CompleteStatus = ""
	CompleteSuccess    CompleteStatus = "success"
	CompleteFailure    CompleteStatus = "failure"
	CompleteBlocked    CompleteStatus = "blocked"
	CompleteImpossible CompleteStatus = "impossible"
)

// Valid reports whether s is one of the four statuses.
func (s CompleteStatus) Valid() bool {
	switch s {
	case CompleteSuccess, CompleteFailure, CompleteBlocked, CompleteImpossible:
		return true
	}
	return false
}

// Verification is the verification an executor ran before it reported
// task-complete.
type Verification struct {
	Command       string `json:"command"`
	ExitCode      int    `json:"exit_code"`
	OutputSummary string `json:"output_summary,omitempty"`
}

// The JSON forms of the ACK protocol, as their "type" says.
const (
	TypeTaskAcknowledgment      = "task-acknowledgment"
	TypeTaskAcknowledgmentError = "task-acknowledgment-error"
	TypeCheckpointAck           = "checkpoint-ack"
	TypeTaskComplete            = "task-complete"
	TypeAcknowledgment          = "acknowledgment" // an operation reply {message, ready, notes}
)

// Reply is one interpreted reply of an agent. Only the fields of its Kind are
// set; Text always holds the original text (or JSON).
//
// TaskID is clean: surrounding markdown is removed and trailing '.' and ':'
// are stripped ("T-3." is T-3).
type Reply struct {
	Kind   Kind
	TaskID string

	// KindAck.
	Status               Status
	Understanding        string
	Questions            []string
	Note                 string   // Note: (also Reason:, or text after the STATUS); for KindOperationReply the "notes"
	EstimatedCheckpoints []string // JSON estimated_checkpoints

	// KindAckError.
	ErrorCode         ErrorCode
	ErrorMessage      string
	RetryAfter        time.Duration // retry_after_minutes, to the millisecond
	AlternativeAgents []string

	// KindCheckpoint (Summary also for KindComplete).
	Checkpoint       int
	CheckpointStatus string
	Summary          string
	NextCheckpoint   int

	// KindComplete. Reason is why the agent is blocked, or says the task
	// is impossible or failed: the JSON "reason" (or "blocked_by"), the
	// text's Reason: line or the words after BLOCKED:.
	Complete      CompleteStatus
	Reason        string
	FilesModified []string
	Error         string
	Verification  *Verification

	// KindOperationReply.
	Answer OperationAnswer

	// Text is the original text, always kept.
	Text string
}

// ErrWrongTaskID is what For wraps when a reply names another task.
var ErrWrongTaskID = errors.New("ack: wrong task id")

// For returns nil if r names exactly the task taskID, else an error wrapping
// ErrWrongTaskID that names both ids. Both ids are compared case-sensitively
// after trimming spaces; the reply's id may carry trailing '.' or ':' ("T-3."
// is T-3), the expected one may not. An empty id on either side is an error:
// For never accepts an acknowledgment it cannot tie to the task.
func (r Reply) For(taskID string) error {
	want := strings.TrimSpace(taskID)
	got := cleanID(strings.TrimSpace(r.TaskID))
	switch {
	case want == "":
		return fmt.Errorf("%w: no task id to compare the reply's %q with", ErrWrongTaskID, got)
	case got == "":
		return fmt.Errorf("%w: the reply names no task id, want %q", ErrWrongTaskID, want)
	case got != want:
		return fmt.Errorf("%w: the reply is for task %q, want %q", ErrWrongTaskID, got, want)
	}
	return nil
}

// replyJSON is how a Reply is encoded in JSON: snake_case, empty fields
// omitted, RetryAfter as a Go duration string (the API's form of durations).
type replyJSON struct {
	Kind                 Kind            `json:"kind"`
	TaskID               string          `json:"task_id,omitempty"`
	Status               Status          `json:"status,omitempty"`
	Understanding        string          `json:"understanding,omitempty"`
	Questions            []string        `json:"questions,omitempty"`
	Note                 string          `json:"note,omitempty"`
	EstimatedCheckpoints []string        `json:"estimated_checkpoints,omitempty"`
	ErrorCode            ErrorCode       `json:"error_code,omitempty"`
	ErrorMessage         string          `json:"error_message,omitempty"`
	RetryAfter           string          `json:"retry_after,omitempty"`
	AlternativeAgents    []string        `json:"alternative_agents,omitempty"`
	Checkpoint           int             `json:"checkpoint,omitempty"`
	CheckpointStatus     string          `json:"checkpoint_status,omitempty"`
	Summary              string          `json:"summary,omitempty"`
	NextCheckpoint       int             `json:"next_checkpoint,omitempty"`
	Complete             CompleteStatus  `json:"complete,omitempty"`
	Reason               string          `json:"reason,omitempty"`
	FilesModified        []string        `json:"files_modified,omitempty"`
	Error                string          `json:"error,omitempty"`
	Verification         *Verification   `json:"verification,omitempty"`
	Answer               OperationAnswer `json:"answer,omitempty"`
	Text                 string          `json:"text,omitempty"`
}

// MarshalJSON encodes r as the API shows an interpreted reply:
// {"kind": "ack", "task_id": "T-3", "status": "received", …}. This is wilco's
// own shape; FormatJSON writes the wire forms instead.
func (r Reply) MarshalJSON() ([]byte, error) {
	j := replyJSON{
		Kind: r.Kind, TaskID: r.TaskID, Status: r.Status, Understanding: r.Understanding,
		Questions: r.Questions, Note: r.Note, EstimatedCheckpoints: r.EstimatedCheckpoints,
		ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage, AlternativeAgents: r.AlternativeAgents,
		Checkpoint: r.Checkpoint, CheckpointStatus: r.CheckpointStatus, Summary: r.Summary,
		NextCheckpoint: r.NextCheckpoint, Complete: r.Complete, Reason: r.Reason, FilesModified: r.FilesModified,
		Error: r.Error, Verification: r.Verification, Answer: r.Answer, Text: r.Text,
	}
	if r.RetryAfter != 0 {
		j.RetryAfter = r.RetryAfter.String()
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (r *Reply) UnmarshalJSON(data []byte) error {
	var j replyJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	var retry time.Duration
	if j.RetryAfter != "" {
		d, err := time.ParseDuration(j.RetryAfter)
		if err != nil {
			return fmt.Errorf("ack: reply field \"retry_after\": %w", err)
		}
		retry = d
	}
	*r = Reply{
		Kind: j.Kind, TaskID: j.TaskID, Status: j.Status, Understanding: j.Understanding,
		Questions: j.Questions, Note: j.Note, EstimatedCheckpoints: j.EstimatedCheckpoints,
		ErrorCode: j.ErrorCode, ErrorMessage: j.ErrorMessage, RetryAfter: retry,
		AlternativeAgents: j.AlternativeAgents, Checkpoint: j.Checkpoint,
		CheckpointStatus: j.CheckpointStatus, Summary: j.Summary, NextCheckpoint: j.NextCheckpoint,
		Complete: j.Complete, Reason: j.Reason, FilesModified: j.FilesModified, Error: j.Error,
		Verification: j.Verification, Answer: j.Answer, Text: j.Text,
	}
	return nil
}
