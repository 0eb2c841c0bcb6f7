package ack_test

import (
	"reflect"
	"strings"
	"testing"

	"wilco/ack"
)

func TestClassifyTaskDelegationMarkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		message string
		reasons []string
		taskID  string
	}{
		{"task id heading (ACK protocol)", "## Task: GH-42-feature\nAdd the feature.", []string{ack.ReasonTaskID}, "GH-42-feature"},
		{"task id label", "**Task ID:** T-3\nFix the parser.", []string{ack.ReasonTaskID}, "T-3"},
		{"task_id label", "task_id: 03-01:task-3", []string{ack.ReasonTaskID}, "03-01:task-3"},
		{"task number", "# Task #T-7: speed up the build", []string{ack.ReasonTaskID}, "T-7"},
		{"task-assignment JSON (ACK protocol)", exampleJSONAssignment, []string{ack.ReasonTaskAssignment}, "GH-42"},
		{"acceptance criteria heading", "Please add retries.\n\n### Acceptance Criteria\n1. retries are logged", []string{ack.ReasonAcceptanceCriteria}, ""},
		{"acceptance criteria label", "Add retries.\nAcceptance criteria: retries are logged, tests pass.", []string{ack.ReasonAcceptanceCriteria}, ""},
		{"git workflow section", "Add retries.\n\n## Git Workflow\nBranch from main, open a PR.", []string{ack.ReasonGitWorkflow}, ""},
		{"branch section", "Add retries.\n\n**Branch:**\nfeature/retries", []string{ack.ReasonGitWorkflow}, ""},
		{"verification commands section", "Add retries.\n\n## Verification Commands\n```\ngo test ./...\n```", []string{ack.ReasonVerification}, ""},
		{"verify heading", "Add retries.\n\n## Verify\ngo test ./...", []string{ack.ReasonVerification}, ""},
		{"required output format section", "Summarise the logs.\n\n## Required Output Format\nA table.", []string{ack.ReasonOutputFormat}, ""},
		{"output format label", "Summarise the logs.\nOutput format: markdown table", []string{ack.ReasonOutputFormat}, ""},
		{"checklist", "Please do these:\n- [ ] rename the flag\n- [ ] update the docs", []string{ack.ReasonChecklist}, ""},
		{"template placeholders", "Reply with {summary} and fill in {{owner}}.", []string{ack.ReasonPlaceholders}, ""},
		{"ACK request block", ack.Teach("T-9"), []string{ack.ReasonAckRequest, ack.ReasonPlaceholders}, "T-9"},
		{"the ACK request template", "Do it.\n---\nACKNOWLEDGMENT REQUIRED: Reply with [ACK] {task_id} - RECEIVED\n---",
			[]string{ack.ReasonAckRequest, ack.ReasonPlaceholders}, ""},
		{"a full delegation", "## Task: GH-4-xls-implementation\n\nImplement xls.\n\n## Acceptance Criteria\n- [ ] --sort flag\n\n## Git Workflow\nBranch: feat/xls\n\n## Verification Commands\ncargo test\n" + ack.Teach("GH-4-xls-implementation"),
			[]string{ack.ReasonTaskID, ack.ReasonAckRequest, ack.ReasonAcceptanceCriteria, ack.ReasonGitWorkflow, ack.ReasonVerification, ack.ReasonChecklist, ack.ReasonPlaceholders}, "GH-4-xls-implementation"},
	}
	for _, tt := range tests {
		got := ack.Classify(tt.message)
		want := ack.Classification{Type: ack.Delegation, Reasons: tt.reasons, TaskID: tt.taskID}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Classify =\n%#v\nwant\n%#v", tt.name, got, want)
		}
	}
}

func TestConversationNeedsNoAck(t *testing.T) {
	t.Parallel()
	// How conversations are identified.
	for name, message := range map[string]string{
		"clarifying question":    "Should JWT tokens expire after 24h or 7 days?",
		"answers to questions":   exampleJSONClarification,
		"feedback on work":       "Nice work on T-3, the parser reads much better now. PR: looks good to me.",
		"discussion of approach": "I think a state machine would be cleaner than callbacks here. Thoughts?",
		"technical discussion":   "The race is in the cache: two goroutines call Put at once. Use a mutex, or `sync.Map`?",
		"status inquiry":         "How is T-3 going? What are the acceptance criteria you are still missing?",
		"coordination":           "I'll be offline for an hour; ping remote-1 if anything breaks.",
		"code with braces":       "Try this:\n```go\nfunc f() { m := map[string]int{} }\n```\nand `fmt.Printf(\"{x}\")`, or ${HOME}.",
		"done checklist":         "Status:\n- [x] tests\n- [x] docs",
		"braces in prose":        "If the map is empty, f returns early: if len(m) == 0 { return nil }.",
		// The pre-operation request wants an "ok", not an [ACK]: the
		// operation policy tracks it, not the ack policy.
		"pre-operation request": "[Operation] Pending - Acknowledgment Required\n\nI will install the security-audit skill. " +
			"Please finish your current work and reply with \"ok\" when ready. I will wait up to 2 minutes.",
		"mentions a task word": "Task: implement login — is anyone on it?",
		"our own ACK reply":    exampleAckReceived,
		"empty":                "",
	} {
		got := ack.Classify(message)
		if got.Type != ack.Conversation || len(got.Reasons) != 0 {
			t.Errorf("%s: Classify(%q) = %+v, want a conversation", name, message, got)
		}
	}
}

func TestClassifyAppendingTeachMakesADelegation(t *testing.T) {
	t.Parallel()
	// What wilco sends always carries the teaching block, so it always asks for an ACK.
	for _, m := range []string{"", "hello", "Fix the bug in login."} {
		c := ack.Classify(m + "\n\n" + ack.Teach("T-1"))
		if c.Type != ack.Delegation || c.TaskID != "T-1" {
			t.Errorf("Classify(%q + Teach) = %+v", m, c)
		}
	}
	if r := ack.Classify("Fix the bug.").Reasons; r != nil {
		t.Errorf("conversation reasons = %v, want none", r)
	}
	if c := ack.Classify(strings.Repeat("- [ ] x\n", 3)); !reflect.DeepEqual(c.Reasons, []string{ack.ReasonChecklist}) {
		t.Errorf("reasons are reported once: %v", c.Reasons)
	}
}
