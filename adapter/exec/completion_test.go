package exec

import (
	"strings"
	"testing"

	"wilco/ack"
	"wilco/core"
)

func tail(lines ...string) *textTail {
	t := &textTail{max: maxText}
	for _, l := range strings.Split(strings.Join(lines, "\n"), "\n") {
		t.add(l)
	}
	return t
}

func TestCompletionIsReadFromTheFinalAnswerThenTheText(t *testing.T) {
	t.Parallel()
	ackBlock := "[ACK] T-1 - RECEIVED\nUnderstanding: fix it"
	for _, tc := range []struct {
		name   string
		res    procResult
		status ack.CompleteStatus
		reason string
		none   bool
	}{
		{"BLOCKED: in the text", procResult{text: tail(ackBlock, "", "Tried.", "BLOCKED: no key")}, ack.CompleteBlocked, "no key", false},
		{"Status: blocked with a Reason: line", procResult{text: tail(ackBlock, "", "Status: blocked", "Reason: the API is down")}, ack.CompleteBlocked, "the API is down", false},
		{"the final answer wins", procResult{text: tail(ackBlock, "Looked around."), result: "Looked around.\n\n**Status:** blocked\n**Reason:** need credentials"},
			ack.CompleteBlocked, "need credentials", false},
		{"the last report wins", procResult{text: tail("BLOCKED: no key", "", "Found the key after all.", "", "Status: complete")}, ack.CompleteSuccess, "", false},
		{"JSON on a line", procResult{text: tail(`{"type":"task-complete","task_id":"T-1","status":"impossible","reason":"gone"}`)}, ack.CompleteImpossible, "gone", false},
		{"a JSON object over several lines", procResult{text: tail("```json", `{"type": "task-complete",`, ` "task_id": "T-1", "status": "failure", "error": "e"}`, "```")}, ack.CompleteFailure, "", false},
		{"another task's report is never taken", procResult{text: tail("[COMPLETE] T-9")}, "", "", true},
		{"the retry context echoed", procResult{text: tail("<retry_context attempt=\"2\">", "  BLOCKED: old", "</retry_context>", "Fixed it.")}, "", "", true},
		{"no report", procResult{text: tail(ackBlock, "", "Wrote the fix.")}, "", "", true},
		{"a JSON line seen before the tail", procResult{text: tail("Wrote the fix."), complete: &ack.Reply{Kind: ack.KindComplete, TaskID: "T-1", Complete: ack.CompleteBlocked, Reason: "r"}},
			ack.CompleteBlocked, "r", false},
		{"another task's line seen before the tail", procResult{text: tail("Wrote the fix."), complete: &ack.Reply{Kind: ack.KindComplete, TaskID: "T-9", Complete: ack.CompleteBlocked}},
			"", "", true},
	} {
		c := completion(tc.res, "T-1")
		switch {
		case tc.none && c != nil:
			t.Errorf("%s: %+v, want none", tc.name, c)
		case !tc.none && (c == nil || c.Complete != tc.status || c.Reason != tc.reason):
			t.Errorf("%s: %+v, want %s %q", tc.name, c, tc.status, tc.reason)
		}
	}
}

func TestTurnResultOfABlockedAgentCarriesItsReason(t *testing.T) {
	t.Parallel()
	tr := &turn{agent: AgentConfig{Timeout: 30e9}, msg: core.InboxMessage{TaskID: "T-1"}}
	base := core.TurnResult{TaskID: "T-1", Attempt: 1}
	r := tr.result(base, procResult{exitCode: 0, text: tail("[ACK] T-1 - RECEIVED", "", "BLOCKED: the fixture server refuses connections")})
	if r.Status != ack.CompleteBlocked || r.Reason != "the fixture server refuses connections" {
		t.Fatalf("%+v", r)
	}
	r = tr.result(base, procResult{exitCode: 2, text: tail("Status: blocked", "Reason: no disk space")})
	if r.Status != ack.CompleteBlocked || r.Reason != "no disk space" {
		t.Fatalf("exit 2: %+v", r)
	}
	r = tr.result(base, procResult{exitCode: 1, text: tail("TASK COMPLETE")})
	if r.Status != "" {
		t.Fatalf("a success must not overrule exit 1: %+v", r)
	}
}
