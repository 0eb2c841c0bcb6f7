package ack_test

import (
	"strings"
	"testing"

	"wilco/ack"
)

func TestParseReadsPlainTextCompletionReports(t *testing.T) {
	t.Parallel()
	type want struct {
		status                    ack.CompleteStatus
		id, reason, summary, errs string
	}
	tests := []struct {
		text string
		want want
	}{
		{"Status: complete", want{status: ack.CompleteSuccess}},
		{"I wrote the fix.\n\nStatus: Done", want{status: ack.CompleteSuccess}},
		{"Status: success", want{status: ack.CompleteSuccess}},
		{"status: finished.", want{status: ack.CompleteSuccess}},
		{"**Status:** Done — file.txt holds the fix.\n**Task:** `C-4`", want{status: ack.CompleteSuccess, id: "C-4", summary: "file.txt holds the fix."}},
		{"**Status**: ✅ Complete", want{status: ack.CompleteSuccess}},
		{"Status: task complete", want{status: ack.CompleteSuccess}},
		{"```yaml\nexecutor_output:\n  status: \"success\"\n  files_modified: [\"file.txt\"]\n```", want{status: ack.CompleteSuccess}},
		{"Everything is in place.\nTASK COMPLETE", want{status: ack.CompleteSuccess}},
		{"Task completed successfully.", want{status: ack.CompleteSuccess, summary: "successfully."}},
		{"TASK COMPLETE: GH-8", want{status: ack.CompleteSuccess, id: "GH-8"}},
		{"Task done - T-3", want{status: ack.CompleteSuccess, id: "T-3"}},
		{"## TASK COMPLETE", want{status: ack.CompleteSuccess}},
		{"[COMPLETE] T-3 - the fix is in file.txt", want{status: ack.CompleteSuccess, id: "T-3", summary: "the fix is in file.txt"}},
		{"[COMPLETE] T-3", want{status: ack.CompleteSuccess, id: "T-3"}},
		{"**[DONE]** 03-01:task-2", want{status: ack.CompleteSuccess, id: "03-01:task-2"}},
		{"[TASK COMPLETE]", want{status: ack.CompleteSuccess}},
		{"[BLOCKED] missing API key", want{status: ack.CompleteBlocked, reason: "missing API key"}},
		{"[BLOCKED] T-3: missing API key", want{status: ack.CompleteBlocked, id: "T-3", reason: "missing API key"}},
		{"I could not finish.\n\nStatus: blocked\nReason: the staging password is not set", want{status: ack.CompleteBlocked, reason: "the staging password is not set"}},
		{"Reason: the staging password is not set\nStatus: BLOCKED", want{status: ack.CompleteBlocked, reason: "the staging password is not set"}},
		{"Status: blocked\n\nReason: the staging password is not set", want{status: ack.CompleteBlocked, reason: "the staging password is not set"}},
		{"Status: blocked\nReason:\n  the staging password\n  is not set", want{status: ack.CompleteBlocked, reason: "the staging password is not set"}},
		{"Looked into it.\nBLOCKED: no network access to the registry", want{status: ack.CompleteBlocked, reason: "no network access to the registry"}},
		{"> **Blocked:** waiting for the design review", want{status: ack.CompleteBlocked, reason: "waiting for the design review"}},
		{"**Status**: `BLOCKED`\n**Reason:** the API key is expired", want{status: ack.CompleteBlocked, reason: "the API key is expired"}},
		{"Status: blocked on the code review", want{status: ack.CompleteBlocked, reason: "the code review"}},
		{"Status: blocked (no credentials)", want{status: ack.CompleteBlocked, reason: "no credentials"}},
		{"Status: blocked\nBLOCKED: no credentials", want{status: ack.CompleteBlocked, reason: "no credentials"}},
		{"Status: blocked\nBlocked by: the schema migration", want{status: ack.CompleteBlocked, reason: "the schema migration"}},
		{"executor_output:\n  status: blocked\n  error: \"permission denied\"", want{status: ack.CompleteBlocked, errs: "permission denied"}},
		{"Status: impossible\nReason: the API was removed", want{status: ack.CompleteImpossible, reason: "the API was removed"}},
		{"IMPOSSIBLE: the API was removed", want{status: ack.CompleteImpossible, reason: "the API was removed"}},
		{"Status: failed\nError: cannot find module 'uuid'", want{status: ack.CompleteFailure, errs: "cannot find module 'uuid'"}},
		{"status: failure", want{status: ack.CompleteFailure}},
		{"Task: GH-8\nStatus: complete", want{status: ack.CompleteSuccess, id: "GH-8"}},
		{"Task ID: fix-login\nStatus: complete", want{status: ack.CompleteSuccess, id: "fix-login"}},
		{"task_id: T-3\nstatus: blocked\nreason: x", want{status: ack.CompleteBlocked, id: "T-3", reason: "x"}},
		{"## Task: T-3\n\nDid the work.\n\nStatus: complete", want{status: ack.CompleteSuccess, id: "T-3"}},
		{"Task: Refactor the parser\nStatus: complete", want{status: ack.CompleteSuccess}},
		{"Task: Refactor\nStatus: complete", want{status: ack.CompleteSuccess, id: "Refactor"}},
		{"Task: GH-8 login fix\nStatus: complete", want{status: ack.CompleteSuccess, id: "GH-8"}},
		{"[COMPLETE] T-4 all good", want{status: ack.CompleteSuccess, id: "T-4", summary: "all good"}},
		{"[DONE] Everything works", want{status: ack.CompleteSuccess, summary: "Everything works"}},
		{"[COMPLETE] refactor", want{status: ack.CompleteSuccess, id: "refactor"}},
		{"Summary: rewrote the parser\nStatus: done", want{status: ack.CompleteSuccess, summary: "rewrote the parser"}},
		{"Status: Complete\r\nSummary: fixed\r\n", want{status: ack.CompleteSuccess, summary: "fixed"}},
	}
	for _, tt := range tests {
		r, err := ack.Parse(tt.text)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.text, err)
			continue
		}
		got := want{status: r.Complete, id: r.TaskID, reason: r.Reason, summary: r.Summary, errs: r.Error}
		if r.Kind != ack.KindComplete || got != tt.want {
			t.Errorf("Parse(%q) = %s %+v, want complete %+v", tt.text, r.Kind, got, tt.want)
		}
	}
}

func TestParseDoesNotTakeOtherTextForACompletionReport(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"status: success | failure | blocked",
		"Status: success / failure",
		"Status: complete or blocked",
		"Status: complete?",
		"Status: in progress",
		"Status: not complete",
		"Status: incomplete",
		"Status: doneness",
		"Status: RECEIVED",
		"Status options: RECEIVED, CLARIFICATION_NEEDED, REJECTED, QUEUED",
		"Blocked: no",
		"Blocked: none.",
		"Blockers: none",
		"The task is complete.",
		"Is the task complete?",
		"Task completion requires a review.",
		"Tasks complete: 3 of 5",
		"    If you believe the task is impossible, report status: blocked.",
		"<retry_context attempt=\"2\" max_attempts=\"12\">\n  <error_details>\n    Status: blocked\n    BLOCKED: no key\n  </error_details>\n</retry_context>",
		"Checkpoint 1\nStatus: completed\nSummary: tests written",
		"**Checkpoint 2**: done\nStatus: complete",
		"[x] Status: done",
		"[COMPLETED TASKS] 3",
		`{"type": "checkpoint-ack", "task_id": "T-3", "checkpoint": 1,` + "\n" + `"status": "completed"}`,
	} {
		r, err := ack.Parse(text)
		if err != nil || r.Kind == ack.KindComplete {
			t.Errorf("Parse(%q) = %s %+v, %v; want no completion", text, r.Kind, r, err)
		}
	}
}

func TestCompletionReportForAnotherTaskIsNeverForThisOne(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"[COMPLETE] GH-8",
		"[BLOCKED] GH-8 - no key",
		"TASK COMPLETE: GH-8",
		"Task: GH-8\nStatus: complete",
		"task_id: GH-8\n\nStatus: blocked\nReason: x",
		"[ACK] GH-8 - RECEIVED\nUnderstanding: x\n\nStatus: complete",
		"## Task: GH-8\n\nStatus: complete",
	} {
		all, err := ack.ParseAll(text)
		if err != nil {
			t.Fatalf("ParseAll(%q): %v", text, err)
		}
		found := false
		for _, r := range all {
			if r.Kind != ack.KindComplete {
				continue
			}
			found = true
			if r.For("GH-7") == nil || r.For("GH-8") != nil {
				t.Errorf("the report %q is for %q", text, r.TaskID)
			}
		}
		if !found {
			t.Errorf("ParseAll(%q) found no completion", text)
		}
	}
}

func TestParseAllReadsTheACKThenTheCompletion(t *testing.T) {
	t.Parallel()
	text := "[ACK] T-3 - RECEIVED\nUnderstanding: fix the parser\n\nWorking on it.\n\nStatus: blocked\nReason: the tests need a database"
	all, err := ack.ParseAll(text)
	if err != nil || len(all) != 2 || all[0].Kind != ack.KindAck || all[1].Kind != ack.KindComplete ||
		all[1].Complete != ack.CompleteBlocked || all[1].TaskID != "T-3" || all[1].Reason != "the tests need a database" {
		t.Fatalf("ParseAll = %+v, %v", all, err)
	}
	if r, _ := ack.Parse(text); r.Kind != ack.KindAck {
		t.Fatalf("Parse takes the first form, got %s", r.Kind)
	}
}

func TestFormatCompleteRoundTrips(t *testing.T) {
	t.Parallel()
	for _, r := range []ack.Reply{
		{Kind: ack.KindComplete, TaskID: "T-3", Complete: ack.CompleteSuccess, Summary: "fixed the parser"},
		{Kind: ack.KindComplete, TaskID: "03-01:task-2", Complete: ack.CompleteBlocked, Reason: "no key", Summary: "half done"},
		{Kind: ack.KindComplete, Complete: ack.CompleteFailure, Error: "cannot find module 'uuid'"},
		{Kind: ack.KindComplete, TaskID: "T-3", Complete: ack.CompleteImpossible, Reason: "the API\nwas removed"},
	} {
		text := ack.FormatComplete(r)
		got, err := ack.Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q): %v", text, err)
		}
		want := r
		want.Reason = strings.Join(strings.Fields(r.Reason), " ")
		want.Text = text
		if got.Kind != want.Kind || got.TaskID != want.TaskID || got.Complete != want.Complete || got.Reason != want.Reason ||
			got.Summary != want.Summary || got.Error != want.Error {
			t.Errorf("Parse(FormatComplete(%+v)) = %+v", r, got)
		}
	}
	if got, _ := ack.Parse(ack.FormatComplete(ack.Reply{Kind: ack.KindComplete})); got.Complete != ack.CompleteSuccess {
		t.Errorf("a claim is written as a success: %+v", got)
	}
}
