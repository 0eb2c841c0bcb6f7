package ack_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"wilco/ack"
)

func TestFormatAckRoundTrips(t *testing.T) {
	t.Parallel()
	for _, r := range []ack.Reply{
		{Kind: ack.KindAck, TaskID: "T-3", Status: ack.Received},
		{Kind: ack.KindAck, TaskID: "GH-4-xls-implementation", Status: ack.Received,
			Understanding: "Will implement directory listing with fs::read_dir"},
		{Kind: ack.KindAck, TaskID: "03-01:task-3", Status: ack.ClarificationNeeded, Understanding: "x",
			Questions: []string{"1. a numbered question?", "- b?", "Note: not a note?", "[ACK] T-9 - RECEIVED"}},
		{Kind: ack.KindAck, TaskID: "T-3", Status: ack.Rejected, Note: "no toolchain"},
		{Kind: ack.KindAck, TaskID: "T-3", Status: ack.Queued, Understanding: "**bold** and `code`", Note: "after GH-3: then"},
		{Kind: ack.KindAck, TaskID: "T-3", Status: ack.Confirmed, Understanding: "Understanding: twice"},
	} {
		text := ack.FormatAck(r)
		got, err := ack.Parse(text)
		if err != nil {
			t.Errorf("Parse(FormatAck(%+v)): %v", r, err)
			continue
		}
		r.Text = text
		if !reflect.DeepEqual(got, r) {
			t.Errorf("Parse(%q) =\n%#v\nwant\n%#v", text, got, r)
		}
	}
	// Values are flattened to one line; empty ones are left out.
	text := ack.FormatAck(ack.Reply{TaskID: "T-3", Status: ack.ClarificationNeeded, Understanding: "a\nb", Questions: []string{"", "  q?\n "}})
	want := "[ACK] T-3 - CLARIFICATION_NEEDED\nUnderstanding: a b\nQuestions:\n1. q?"
	if text != want {
		t.Errorf("FormatAck =\n%s\nwant\n%s", text, want)
	}
}

func TestFormatJSONRoundTrips(t *testing.T) {
	t.Parallel()
	for _, r := range []ack.Reply{
		{Kind: ack.KindAck, TaskID: "GH-42", Status: ack.ClarificationNeeded, Questions: []string{"24h?"}, Note: "n",
			Understanding: "JWT", EstimatedCheckpoints: []string{"tests"}},
		{Kind: ack.KindAck, TaskID: "GH-42", Status: ack.Confirmed},
		{Kind: ack.KindAckError, TaskID: "GH-42", ErrorCode: ack.ResourceUnavailable, ErrorMessage: "load 95%",
			RetryAfter: 90 * time.Second, AlternativeAgents: []string{"a", "b"}},
		{Kind: ack.KindAckError, TaskID: "GH-42", ErrorCode: ack.AgentShuttingDown, RetryAfter: 1234567 * time.Millisecond},
		{Kind: ack.KindCheckpoint, TaskID: "GH-42", Checkpoint: 1, CheckpointStatus: "completed", Summary: "tests", NextCheckpoint: 2},
		{Kind: ack.KindComplete, TaskID: "GH-42", Complete: ack.CompleteSuccess, Summary: "done", FilesModified: []string{"a.go"},
			Verification: &ack.Verification{Command: "go test ./...", ExitCode: 0}},
		{Kind: ack.KindComplete, TaskID: "GH-42", Complete: ack.CompleteImpossible, Error: "conflicting requirements"},
		{Kind: ack.KindOperationReply, Answer: ack.AnswerOK, Note: "saved"},
		{Kind: ack.KindOperationReply, Answer: ack.AnswerWait},
		{Kind: ack.KindOperationReply, Answer: ack.AnswerCancel, TaskID: "T-1"},
		{Kind: ack.KindOperationReply, Answer: ack.AnswerInfo},
	} {
		data, err := ack.FormatJSON(r)
		if err != nil {
			t.Errorf("FormatJSON(%+v): %v", r, err)
			continue
		}
		got, err := ack.ParseJSON("", data)
		if err != nil {
			t.Errorf("ParseJSON(%s): %v", data, err)
			continue
		}
		r.Text = string(data)
		if !reflect.DeepEqual(got, r) {
			t.Errorf("ParseJSON(%s) =\n%#v\nwant\n%#v", data, got, r)
		}
		// And Parse finds it in prose.
		if got, err := ack.Parse("Reply: " + string(data)); err != nil || got.Kind != r.Kind {
			t.Errorf("Parse(prose + %s) = %v, %v", data, got.Kind, err)
		}
	}
	if data, _ := ack.FormatJSON(ack.Reply{Kind: ack.KindAck, TaskID: "T-1", Status: ack.Received}); !strings.HasPrefix(string(data), `{"type":"task-acknowledgment","task_id":"T-1","status":"received"`) {
		t.Errorf("FormatJSON writes the documented field order: %s", data)
	}
	if _, err := ack.FormatJSON(ack.Reply{Kind: ack.KindMessage, Text: "hi"}); err == nil {
		t.Error("FormatJSON(message) = nil error")
	}
}
