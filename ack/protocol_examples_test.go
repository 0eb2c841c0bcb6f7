package ack_test

import (
	"reflect"
	"testing"
	"time"

	"wilco/ack"
)

// The examples of the ACK protocol and of the operation acknowledgment
// protocol, verbatim. The fuzz corpus under
// testdata/fuzz holds them too.
const (
	exampleAckReceived = `[ACK] GH-4-xls-implementation - RECEIVED
Understanding: Will implement directory listing with fs::read_dir, serde_json formatting, and all CLI flags (--sort, --reverse, --format, --verbose, --human)`

	exampleAckClarification = `[ACK] GH-4-xls-implementation - CLARIFICATION_NEEDED
Understanding: Implement xls CLI directory browser
Questions:
1. Should --format support both JSON and table output?
2. Should --verbose show file permissions on all platforms?`

	exampleAckQueued = `[ACK] GH-4-xls-implementation - QUEUED
Understanding: Directory browser with full CLI flags
Note: Currently completing GH-3, will start this after current task completes`

	exampleJSONReceived = `{
  "type": "task-acknowledgment",
  "task_id": "GH-42",
  "status": "received",
  "received_at": "2025-12-31T03:00:00Z",
  "understanding": "Implementing JWT auth with login/logout endpoints",
  "questions": [],
  "estimated_checkpoints": [
    "Tests written - checkpoint 1",
    "Implementation complete - checkpoint 2",
    "PR ready - checkpoint 3"
  ]
}`

	exampleJSONNeedsClarification = `{
  "type": "task-acknowledgment",
  "task_id": "GH-42",
  "status": "needs-clarification",
  "questions": [
    "Should JWT tokens expire after 24h or 7 days?",
    "Should we support refresh tokens?"
  ]
}`

	exampleJSONConfirmed = `{
  "type": "task-acknowledgment",
  "task_id": "GH-42",
  "status": "confirmed",
  "understanding": "JWT with 24h expiry + refresh tokens"
}`

	exampleJSONError = `{
  "type": "task-acknowledgment-error",
  "task_id": "GH-42",
  "error_code": "RESOURCE_UNAVAILABLE",
  "error_message": "Cannot accept task: current load at 95%",
  "timestamp": "2025-12-31T03:00:00Z",
  "retry_after_minutes": 15,
  "alternative_agents": ["agent-backend-02", "agent-backend-03"]
}`

	exampleJSONCheckpoint = `{
  "type": "checkpoint-ack",
  "task_id": "GH-42",
  "checkpoint": 1,
  "status": "completed",
  "summary": "Tests written for auth endpoints",
  "next_checkpoint": 2
}`

	// The orchestrator.s own messages: not replies.
	exampleJSONAssignment = `{
  "type": "task-assignment",
  "task_id": "GH-42",
  "requires_ack": true,
  "ack_timeout_minutes": 5,
  "content": {
    "title": "Implement user authentication",
    "description": "...",
    "acceptance_criteria": ["..."]
  }
}`
	exampleJSONClarification = `{
  "type": "task-clarification",
  "task_id": "GH-42",
  "answers": [
    "24 hours with refresh token support",
    "Yes, implement refresh tokens"
  ]
}`

	// The operation response message, whole (an AI Maestro message) and its content.
	opResponse = `{
  "from": "agent-session-name",
  "to": "chief-of-staff",
  "subject": "RE: [Operation] Pending - Acknowledgment Required",
  "content": {
    "type": "acknowledgment",
    "message": "ok",
    "ready": true,
    "notes": "Finished saving current work, ready for operation"
  }
}`
	opContent = `{
    "type": "acknowledgment",
    "message": "ok",
    "ready": true,
    "notes": "Finished saving current work, ready for operation"
  }`
	opExample1 = `{"type": "acknowledgment", "message": "ok"}`
	opExample4 = `{"message": "wait", "notes": "Need 30 more seconds to save state"}`
)

func TestACKProtocolGoodTextACKs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want ack.Reply
	}{
		{"RECEIVED", exampleAckReceived, ack.Reply{
			Kind: ack.KindAck, TaskID: "GH-4-xls-implementation", Status: ack.Received,
			Understanding: "Will implement directory listing with fs::read_dir, serde_json formatting, and all CLI flags (--sort, --reverse, --format, --verbose, --human)",
		}},
		{"CLARIFICATION_NEEDED", exampleAckClarification, ack.Reply{
			Kind: ack.KindAck, TaskID: "GH-4-xls-implementation", Status: ack.ClarificationNeeded,
			Understanding: "Implement xls CLI directory browser",
			Questions: []string{
				"Should --format support both JSON and table output?",
				"Should --verbose show file permissions on all platforms?",
			},
		}},
		{"QUEUED", exampleAckQueued, ack.Reply{
			Kind: ack.KindAck, TaskID: "GH-4-xls-implementation", Status: ack.Queued,
			Understanding: "Directory browser with full CLI flags",
			Note:          "Currently completing GH-3, will start this after current task completes",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ack.Parse(tt.text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.want.Text = tt.text
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse =\n%#v\nwant\n%#v", got, tt.want)
			}
			if err := got.For("GH-4-xls-implementation"); err != nil {
				t.Errorf("For: %v", err)
			}
			if err := got.For("GH-3"); err == nil {
				t.Error("For(GH-3) = nil, want an error: the ACK is for GH-4-xls-implementation")
			}
		})
	}
}

func TestACKProtocolJSONForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		typ  string
		data string
		want ack.Reply
	}{
		{"task-acknowledgment received", "task-acknowledgment", exampleJSONReceived, ack.Reply{
			Kind: ack.KindAck, TaskID: "GH-42", Status: ack.Received,
			Understanding: "Implementing JWT auth with login/logout endpoints",
			EstimatedCheckpoints: []string{
				"Tests written - checkpoint 1", "Implementation complete - checkpoint 2", "PR ready - checkpoint 3",
			},
		}},
		{"task-acknowledgment needs-clarification", "task-acknowledgment", exampleJSONNeedsClarification, ack.Reply{
			Kind: ack.KindAck, TaskID: "GH-42", Status: ack.ClarificationNeeded,
			Questions: []string{"Should JWT tokens expire after 24h or 7 days?", "Should we support refresh tokens?"},
		}},
		{"task-acknowledgment confirmed", "", exampleJSONConfirmed, ack.Reply{
			Kind: ack.KindAck, TaskID: "GH-42", Status: ack.Confirmed,
			Understanding: "JWT with 24h expiry + refresh tokens",
		}},
		{"task-acknowledgment-error", "task-acknowledgment-error", exampleJSONError, ack.Reply{
			Kind: ack.KindAckError, TaskID: "GH-42", ErrorCode: ack.ResourceUnavailable,
			ErrorMessage: "Cannot accept task: current load at 95%", RetryAfter: 15 * time.Minute,
			AlternativeAgents: []string{"agent-backend-02", "agent-backend-03"},
		}},
		{"checkpoint-ack", "checkpoint-ack", exampleJSONCheckpoint, ack.Reply{
			Kind: ack.KindCheckpoint, TaskID: "GH-42", Checkpoint: 1, CheckpointStatus: "completed",
			Summary: "Tests written for auth endpoints", NextCheckpoint: 2,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.want.Text = tt.data
			got, err := ack.ParseJSON(tt.typ, []byte(tt.data))
			if err != nil {
				t.Fatalf("ParseJSON: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseJSON =\n%#v\nwant\n%#v", got, tt.want)
			}
			// The same object in an agent's prose, in a ``` fence, is found by Parse.
			text := "Here is my acknowledgment:\n\n```json\n" + tt.data + "\n```\nThanks."
			got, err = ack.Parse(text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			tt.want.Text = text
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func TestACKProtocolErrorCodes(t *testing.T) {
	t.Parallel()
	for _, code := range []ack.ErrorCode{
		ack.ResourceUnavailable, ack.CapabilityMismatch, ack.NetworkError, ack.InvalidTaskFormat, ack.AgentShuttingDown,
	} {
		t.Run(string(code), func(t *testing.T) {
			t.Parallel()
			data := `{"type": "task-acknowledgment-error", "task_id": "GH-42", "error_code": "` + string(code) +
				`", "error_message": "cannot", "timestamp": "2025-12-31T03:00:00Z"}`
			got, err := ack.ParseJSON("", []byte(data))
			if err != nil {
				t.Fatalf("ParseJSON: %v", err)
			}
			if got.Kind != ack.KindAckError || got.ErrorCode != code || got.TaskID != "GH-42" || got.ErrorMessage != "cannot" || got.RetryAfter != 0 {
				t.Errorf("ParseJSON = %+v", got)
			}
			if !code.Valid() {
				t.Errorf("%s.Valid() = false", code)
			}
		})
	}
}

func TestOrchestratorMessagesAreNotReplies(t *testing.T) {
	t.Parallel()
	for _, data := range []string{exampleJSONAssignment, exampleJSONClarification} {
		got, err := ack.Parse(data)
		if err != nil || got.Kind != ack.KindMessage {
			t.Errorf("Parse(%.40q) = %v, %v; want a plain message", data, got.Kind, err)
		}
		if _, err := ack.ParseJSON("", []byte(data)); err == nil {
			t.Errorf("ParseJSON(%.40q) = nil error, want unknown type", data)
		}
	}
}

func TestOperationResponseTable(t *testing.T) {
	t.Parallel()
	// The valid agent responses to an operation request.
	for text, want := range map[string]ack.OperationAnswer{
		"ok":        ack.AnswerOK,
		"OK":        ack.AnswerOK,
		"ready":     ack.AnswerOK,
		"wait":      ack.AnswerWait,
		"not ready": ack.AnswerWait,
		"cancel":    ack.AnswerCancel,
		"abort":     ack.AnswerCancel,
		"Other":     ack.AnswerInfo,
		// The notes, sent as plain text.
		"Finished saving current work, ready for operation": ack.AnswerOK,
		"Need 30 more seconds to save state":                ack.AnswerWait,
	} {
		if got := ack.ParseOperationReply(text); got != want {
			t.Errorf("ParseOperationReply(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestOperationJSONAcknowledgment(t *testing.T) {
	t.Parallel()
	want := ack.Reply{Kind: ack.KindOperationReply, Answer: ack.AnswerOK, Note: "Finished saving current work, ready for operation"}

	got, err := ack.ParseJSON("acknowledgment", []byte(opContent))
	if err != nil {
		t.Fatalf("ParseJSON: %v", err)
	}
	want.Text = opContent
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseJSON =\n%#v\nwant\n%#v", got, want)
	}

	// The whole AI Maestro message: the acknowledgment is its content.
	got, err = ack.Parse(opResponse)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want.Text = opResponse
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse =\n%#v\nwant\n%#v", got, want)
	}
	if a := ack.ParseOperationReply(opResponse); a != ack.AnswerOK {
		t.Errorf("ParseOperationReply(response) = %q, want ok", a)
	}

	// Example 1: {"type": "acknowledgment", "message": "ok"}.
	got, err = ack.ParseJSON("", []byte(opExample1))
	if err != nil || got.Answer != ack.AnswerOK || got.Kind != ack.KindOperationReply {
		t.Errorf("ParseJSON(example 1) = %+v, %v", got, err)
	}
	// Example 4: {"message": "wait", "notes": …} sent with type acknowledgment.
	got, err = ack.ParseJSON("acknowledgment", []byte(opExample4))
	if err != nil || got.Answer != ack.AnswerWait || got.Note != "Need 30 more seconds to save state" {
		t.Errorf("ParseJSON(example 4) = %+v, %v", got, err)
	}
}
