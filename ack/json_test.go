package ack_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"wilco/ack"
)

func TestParseJSONIsStrict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ, data string
		want      string // in the error
		field     string // ParseError.Field
	}{
		{"", `not json`, "want a JSON object", ""},
		{"", `[1, 2]`, "want a JSON object", ""},
		{"", `null`, "want a JSON object", ""},
		{"", `{"task_id": "T-3"} trailing`, "want a JSON object", ""},
		{"", `{"task_id": "T-3", "status": "received"}`, `field "type": missing`, "type"},
		{"", `{"type": 7}`, `field "type": want a string, got JSON number`, "type"},
		{"", `{"type": "task-assignment", "task_id": "T-3"}`, `unknown type "task-assignment"`, "type"},
		{"status-report", `{"task_id": "T-3"}`, `unknown type "status-report"`, "type"},
		{"task-complete", `{"type": "task-acknowledgment", "task_id": "T-3", "status": "received"}`, `"task-acknowledgment" contradicts the type "task-complete"`, "type"},
		{"task-acknowledgment", `{"status": "received"}`, `task-acknowledgment: field "task_id": missing`, "task_id"},
		{"task-acknowledgment", `{"task_id": null, "status": "received"}`, `field "task_id": missing`, "task_id"},
		{"task-acknowledgment", `{"task_id": "", "status": "received"}`, `field "task_id": empty`, "task_id"},
		{"task-acknowledgment", `{"task_id": 42, "status": "received"}`, `field "task_id": want a string, got JSON number`, "task_id"},
		{"task-acknowledgment", `{"task_id": "T 3", "status": "received"}`, `field "task_id": task id "T 3" has the character ' '`, "task_id"},
		{"task-acknowledgment", `{"task_id": "T-3"}`, `field "status": missing`, "status"},
		{"task-acknowledgment", `{"task_id": "T-3", "status": "accepted"}`, `field "status": unknown status "accepted"`, "status"},
		{"task-acknowledgment", `{"task_id": "T-3", "status": "received", "questions": "why?"}`, `field "questions": want an array of strings, got JSON string`, "questions"},
		{"task-acknowledgment", `{"task_id": "T-3", "status": "received", "questions": ["a", 2]}`, `field "questions": element 1: want a string, got JSON number`, "questions"},
		{"task-acknowledgment", `{"task_id": "T-3", "status": "received", "understanding": ["a"]}`, `field "understanding": want a string, got JSON array`, "understanding"},
		{"task-acknowledgment-error", `{"task_id": "T-3"}`, `field "error_code": missing`, "error_code"},
		{"task-acknowledgment-error", `{"task_id": "T-3", "error_code": "OVERLOADED"}`, `field "error_code": unknown error code "OVERLOADED"`, "error_code"},
		{"task-acknowledgment-error", `{"task_id": "T-3", "error_code": "NETWORK_ERROR", "retry_after_minutes": -1}`, `field "retry_after_minutes": -1 is out of range`, "retry_after_minutes"},
		{"task-acknowledgment-error", `{"task_id": "T-3", "error_code": "NETWORK_ERROR", "retry_after_minutes": 1e300}`, `field "retry_after_minutes"`, "retry_after_minutes"},
		{"task-acknowledgment-error", `{"task_id": "T-3", "error_code": "NETWORK_ERROR", "retry_after_minutes": "15"}`, `field "retry_after_minutes": want a number, got JSON string`, "retry_after_minutes"},
		{"checkpoint-ack", `{"task_id": "T-3"}`, `field "checkpoint": missing`, "checkpoint"},
		{"checkpoint-ack", `{"task_id": "T-3", "checkpoint": 1.5}`, `field "checkpoint": want an integer, got 1.5`, "checkpoint"},
		{"checkpoint-ack", `{"task_id": "T-3", "checkpoint": -1}`, `field "checkpoint": -1 is negative`, "checkpoint"},
		{"checkpoint-ack", `{"task_id": "T-3", "checkpoint": 1, "next_checkpoint": true}`, `field "next_checkpoint": want an integer, got JSON boolean`, "next_checkpoint"},
		{"task-complete", `{"task_id": "T-3", "status": "in-progress"}`, `field "status": unknown status "in-progress"`, "status"},
		{"task-complete", `{"task_id": "T-3", "status": 1}`, `field "status": want a string, got JSON number`, "status"},
		{"task-complete", `{"task_id": "T 3"}`, `field "task_id": task id "T 3" has the character ' '`, "task_id"},
		{"task-complete", `{"task_id": "T-3", "reason": ["a"]}`, `field "reason": want a string, got JSON array`, "reason"},
		{"task-complete", `{"task_id": "T-3", "status": "success", "verification": "ok"}`, `field "verification": want an object`, "verification"},
		{"task-complete", `{"task_id": "T-3", "status": "success", "verification": {"exit_code": "1"}}`, `field "verification.exit_code": want an integer`, "verification.exit_code"},
		{"acknowledgment", `{}`, `field "message": missing`, "message"},
		{"acknowledgment", `{"message": 1}`, `field "message": want a string`, "message"},
		{"acknowledgment", `{"message": "ok", "ready": "yes"}`, `field "ready": want true or false`, "ready"},
		{"acknowledgment", `{"message": "ok", "ready": false}`, `field "ready": false contradicts the message "ok"`, "ready"},
		{"acknowledgment", `{"message": "wait", "ready": true}`, `field "ready": true contradicts the message "wait"`, "ready"},
		{"acknowledgment", `{"message": "ok", "task_id": "a b"}`, `field "task_id"`, "task_id"},
	}
	for _, tt := range tests {
		_, err := ack.ParseJSON(tt.typ, []byte(tt.data))
		if err == nil {
			t.Errorf("ParseJSON(%q, %s) = nil error, want %q", tt.typ, tt.data, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseJSON(%q, %s) error = %q, want it to say %q", tt.typ, tt.data, err, tt.want)
		}
		var pe *ack.ParseError
		if !errors.As(err, &pe) || pe.Field != tt.field {
			t.Errorf("ParseJSON(%q, %s) error = %#v, want a *ParseError on field %q", tt.typ, tt.data, err, tt.field)
		}
	}
}

func TestParseJSONIsLenientOnSpelling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ, data string
		check     func(ack.Reply) bool
	}{
		{"Task_Acknowledgment", `{"task_id": " T-3 ", "status": "NEEDS_CLARIFICATION"}`, func(r ack.Reply) bool {
			return r.Kind == ack.KindAck && r.TaskID == "T-3" && r.Status == ack.ClarificationNeeded
		}},
		{"", `{"type": "task-acknowledgment", "task_id": "T-3", "status": "Received", "extra": {"any": 1}}`, func(r ack.Reply) bool {
			return r.Status == ack.Received
		}},
		{"task-acknowledgment", `{"task_id": "T-3", "status": "rejected", "reason": "no GPU"}`, func(r ack.Reply) bool {
			return r.Status == ack.Rejected && r.Note == "no GPU"
		}},
		{"task-acknowledgment", `{"task_id": "T-3", "status": "queued", "notes": "after T-2", "questions": null}`, func(r ack.Reply) bool {
			return r.Status == ack.Queued && r.Note == "after T-2" && r.Questions == nil
		}},
		{"task-acknowledgment-error", `{"task_id": "T-3", "error_code": "capability-mismatch", "retry_after_minutes": 0.5}`, func(r ack.Reply) bool {
			return r.ErrorCode == ack.CapabilityMismatch && r.RetryAfter == 30*time.Second
		}},
		{"checkpoint-ack", `{"task_id": "T-3", "checkpoint": 2.0}`, func(r ack.Reply) bool {
			return r.Checkpoint == 2 && r.NextCheckpoint == 0
		}},
		{"task-complete", `{"task_id": "T-3", "status": "Blocked", "error": "permission denied"}`, func(r ack.Reply) bool {
			return r.Complete == ack.CompleteBlocked && r.Error == "permission denied" && r.Verification == nil
		}},
		{"acknowledgment", `{"ready": true}`, func(r ack.Reply) bool { return r.Answer == ack.AnswerOK }},
		{"acknowledgment", `{"ready": false}`, func(r ack.Reply) bool { return r.Answer == ack.AnswerWait }},
		{"acknowledgment", `{"message": "saving state", "ready": false}`, func(r ack.Reply) bool { return r.Answer == ack.AnswerWait }},
		{"acknowledgment", `{"message": "cancel, please", "ready": false}`, func(r ack.Reply) bool { return r.Answer == ack.AnswerCancel }},
		{"acknowledgment", `{"message": "I have a question"}`, func(r ack.Reply) bool { return r.Answer == ack.AnswerInfo }},
	}
	for _, tt := range tests {
		got, err := ack.ParseJSON(tt.typ, []byte(tt.data))
		if err != nil {
			t.Errorf("ParseJSON(%q, %s): %v", tt.typ, tt.data, err)
			continue
		}
		if !tt.check(got) {
			t.Errorf("ParseJSON(%q, %s) = %+v", tt.typ, tt.data, got)
		}
		if got.Text != tt.data {
			t.Errorf("ParseJSON Text = %q, want the data", got.Text)
		}
	}
}

func TestParseJSONTaskComplete(t *testing.T) {
	t.Parallel()
	// An executor.s output, as a task-complete reply.
	data := `{"type": "task-complete", "task_id": "03-01:task-2", "status": "failure",
	  "files_modified": ["src/domain/PlannerId.ts"],
	  "verification": {"command": "npm test -- PlannerId", "exit_code": 1, "output_summary": "1 passed, 2 failed"},
	  "error": "Cannot find module 'uuid'"}`
	got, err := ack.ParseJSON("", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := ack.Reply{
		Kind: ack.KindComplete, TaskID: "03-01:task-2", Complete: ack.CompleteFailure,
		FilesModified: []string{"src/domain/PlannerId.ts"}, Error: "Cannot find module 'uuid'",
		Verification: &ack.Verification{Command: "npm test -- PlannerId", ExitCode: 1, OutputSummary: "1 passed, 2 failed"},
		Text:         data,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseJSON =\n%#v\nwant\n%#v", got, want)
	}
	for data, want := range map[string]ack.Reply{
		// No status: a claim of completion, which verification decides.
		`{"task_id": "T-1", "summary": "done"}`: {Kind: ack.KindComplete, TaskID: "T-1", Summary: "done"},
		`{"task_id": "T-1", "status": null}`:    {Kind: ack.KindComplete, TaskID: "T-1"},
		`{"task_id": "T-1", "status": " "}`:     {Kind: ack.KindComplete, TaskID: "T-1"},
		// No task id: the reply's context names the task.
		`{"status": "success"}`: {Kind: ack.KindComplete, Complete: ack.CompleteSuccess},
		// Synonyms, and the reason of a blocked report.
		`{"task_id": "T-1", "status": "Done"}`:                                      {Kind: ack.KindComplete, TaskID: "T-1", Complete: ack.CompleteSuccess},
		`{"task_id": "T-1", "status": "COMPLETED"}`:                                 {Kind: ack.KindComplete, TaskID: "T-1", Complete: ack.CompleteSuccess},
		`{"task_id": "T-1", "status": "failed"}`:                                    {Kind: ack.KindComplete, TaskID: "T-1", Complete: ack.CompleteFailure},
		`{"task_id": "T-1", "status": "blocked", "reason": "no key"}`:               {Kind: ack.KindComplete, TaskID: "T-1", Complete: ack.CompleteBlocked, Reason: "no key"},
		`{"task_id": "T-1", "status": "blocked", "blocked_by": "the review"}`:       {Kind: ack.KindComplete, TaskID: "T-1", Complete: ack.CompleteBlocked, Reason: "the review"},
		`{"task_id": "T-1", "status": "blocked", "reason": "a", "blocked_by": "b"}`: {Kind: ack.KindComplete, TaskID: "T-1", Complete: ack.CompleteBlocked, Reason: "a"},
	} {
		got, err := ack.ParseJSON("task-complete", []byte(data))
		want.Text = data
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseJSON(%s) =\n%#v, %v\nwant\n%#v", data, got, err, want)
		}
	}
	for _, s := range []ack.CompleteStatus{ack.CompleteSuccess, ack.CompleteFailure, ack.CompleteBlocked, ack.CompleteImpossible} {
		r, err := ack.ParseJSON("task-complete", []byte(`{"task_id": "T-1", "status": "`+string(s)+`"}`))
		if err != nil || r.Complete != s {
			t.Errorf("status %q: %+v, %v", s, r, err)
		}
	}
}

func TestReplyJSONIsSnakeCaseAndRoundTrips(t *testing.T) {
	t.Parallel()
	r := ack.Reply{
		Kind: ack.KindAckError, TaskID: "T-3", ErrorCode: ack.ResourceUnavailable, ErrorMessage: "busy",
		RetryAfter: 15 * time.Minute, AlternativeAgents: []string{"b"}, Text: "{…}",
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"ack_error","task_id":"T-3","error_code":"RESOURCE_UNAVAILABLE","error_message":"busy","retry_after":"15m0s","alternative_agents":["b"],"text":"{…}"}`
	if string(data) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", data, want)
	}
	var back ack.Reply
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip = %+v, want %+v", back, r)
	}
	if err := json.Unmarshal([]byte(`{"kind":"ack_error","retry_after":"soon"}`), &back); err == nil {
		t.Error("Unmarshal(bad retry_after) = nil error")
	}
}
