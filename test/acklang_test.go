package test

// Black-box tests of what wilco reads in an agent's words: the completion
// report and `blocked` in their JSON and plain-text forms (from mailbox
// replies and from exec agents' output), and the understanding check over
// a clarification round trip. Each test runs the real binary in a git
// repository of its own; mailbox agents are driven by the test over HTTP.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wilco/test/blackbox"
)

// mailboxRepo starts wilco in a fresh repository with one mailbox agent,
// "remote", and the check.sh verify step; it returns the server and the
// agent's token.
func mailboxRepo(t *testing.T) (*blackbox.Instance, string) {
	t.Helper()
	dir := blackbox.NewRepo(t, "agents:\n  - {name: remote, adapter: mailbox, capabilities: [go]}\n"+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	var out struct{ Token string }
	in.Must(200, in.Call("POST", "/v1/agents/remote/token", blackbox.AdminToken, nil), &out)
	if out.Token == "" {
		t.Fatal("no token for remote")
	}
	return in, out.Token
}

// A mailbox agent's completion report ends its turn in any of the forms an
// agent writes: the JSON task-complete without a status (a claim of
// completion: verification decides), and the plain-text forms sent as
// text alone. Verification then decides.
func TestCompletionReportInAnyFormEndsTheTurnAndVerificationDecides(t *testing.T) {
	t.Parallel()
	in, tok := mailboxRepo(t)
	cases := []struct {
		name string
		body func(id string) map[string]any
	}{
		{"task-complete without status", func(id string) map[string]any {
			return map[string]any{"type": "task-complete", "data": map[string]any{"task_id": id, "summary": "wrote the fix"}}
		}},
		{"task-complete without status or task id, in reply to the delegation", nil},
		{"Status: complete", func(id string) map[string]any {
			return map[string]any{"text": "I wrote the fix into file.txt.\n\nStatus: complete"}
		}},
		{"**Status:** Done, with markdown", func(id string) map[string]any {
			return map[string]any{"text": "## Result\n\n**Status:** Done — file.txt holds the fix.\n**Task:** `" + id + "`"}
		}},
		{"Status: success in an executor output", func(id string) map[string]any {
			return map[string]any{"text": "```yaml\nexecutor_output:\n  status: \"success\"\n  files_modified: [\"file.txt\"]\n```"}
		}},
		{"TASK COMPLETE", func(id string) map[string]any {
			return map[string]any{"text": "Everything is in place.\nTASK COMPLETE"}
		}},
		{"[COMPLETE] id", func(id string) map[string]any {
			return map[string]any{"text": "[COMPLETE] " + id + " - the fix is in file.txt"}
		}},
	}
	for i, c := range cases {
		id := "C-" + string(rune('1'+i))
		in.Submit(map[string]any{"id": id, "description": "Write the fix into file.txt"})
		m := in.AcceptTask(tok, id)
		in.Fix(id)
		body := map[string]any{"type": "task-complete", "data": map[string]any{"summary": "wrote the fix"}, "in_reply_to": m.ID}
		if c.body != nil {
			body = c.body(id)
		}
		got := in.ReplyAs(tok, body)
		if got["kind"] != "complete" || got["task_id"] != id {
			t.Fatalf("%s: interpreted as %v, want a completion of %s", c.name, got, id)
		}
		if done := in.WaitTask(id, 30*time.Second, "success"); done.Attempt != 1 {
			t.Fatalf("%s: success at attempt %d:\n%s", c.name, done.Attempt, done)
		}
	}

	// One reply with the ACK and, after the work, the report: both count.
	in.Submit(map[string]any{"id": "C-9", "description": "Write the fix into file.txt"})
	m := in.Delegation(tok, "C-9")
	in.Fix("C-9")
	got := in.ReplyAs(tok, map[string]any{"in_reply_to": m.ID, "text": "[ACK] C-9 - RECEIVED\nUnderstanding: Will write the fix into file.txt\n\n" +
		"Done: file.txt now holds the fix.\n\nStatus: complete"})
	if got["kind"] != "complete" || got["acknowledged"] == nil {
		t.Fatalf("the ACK and report in one reply were taken as %v", got)
	}
	in.WaitTask("C-9", 30*time.Second, "success")
}

// A completion report that names another task is never taken for this
// one: it is refused, the task keeps running, and the right report ends
// it.
func TestCompletionReportForAnotherTaskIsRefused(t *testing.T) {
	t.Parallel()
	in, tok := mailboxRepo(t)
	in.Submit(map[string]any{"id": "GH-7", "description": "Write the fix into file.txt"})
	in.AcceptTask(tok, "GH-7")
	in.Fix("GH-7")
	for _, text := range []string{
		"[COMPLETE] GH-8",
		"Task: GH-8\nStatus: complete",
		"TASK COMPLETE: GH-8",
	} {
		r := in.Call("POST", "/v1/inbox/replies", tok, map[string]any{"text": text})
		if r.Status < 400 || r.Status >= 500 {
			t.Fatalf("%q: %d %s, want a refusal", text, r.Status, r.Body)
		}
	}
	if got := in.Task("GH-7"); got.State != "running" || in.VerifyRuns("GH-7") != 0 {
		t.Fatalf("a report for GH-8 moved GH-7:\n%s", got)
	}
	in.ReplyAs(tok, map[string]any{"text": "TASK COMPLETE: GH-7"})
	in.WaitTask("GH-7", 30*time.Second, "success")
}

// `blocked` in its plain-text forms, sent by a mailbox agent as text
// alone, blocks the task with the agent's reason: in blocked_by and in the
// task.state event. Nothing is verified.
func TestBlockedReportInPlainTextBlocksTheTaskWithItsReason(t *testing.T) {
	t.Parallel()
	in, tok := mailboxRepo(t)
	cases := []struct{ text, reason string }{
		{"I could not finish.\n\nStatus: blocked\nReason: the staging database password is not set", "the staging database password is not set"},
		{"Looked into it.\nBLOCKED: no network access to the package registry", "no network access to the package registry"},
		{"**Status**: `BLOCKED`\n**Reason:** the API key in .env is expired", "the API key in .env is expired"},
		{"executor_output:\n  status: blocked\n  error: \"permission denied writing /etc/hosts\"", "permission denied writing /etc/hosts"},
	}
	for i, c := range cases {
		id := "B-" + string(rune('1'+i))
		in.Submit(map[string]any{"id": id, "description": "Write the fix into file.txt"})
		in.AcceptTask(tok, id)
		got := in.ReplyAs(tok, map[string]any{"text": c.text})
		if got["kind"] != "complete" || got["status"] != "blocked" {
			t.Fatalf("%q: interpreted as %v", c.text, got)
		}
		in.BlockedReason(id, c.reason)
		if n := in.VerifyRuns(id); n != 0 {
			t.Fatalf("%q: %d verification runs of a blocked task", c.text, n)
		}
		in.Must(200, in.Call("POST", "/v1/tasks/"+id+"/respond", blackbox.AdminToken, map[string]any{"action": "abort"}))
		in.WaitTask(id, 30*time.Second, "aborted")
	}
}

// "Status: impossible" escalates the task with the agent's reason, and
// "Status: failed" is a failed attempt that the debug loop retries.
func TestImpossibleAndFailedReportsInPlainText(t *testing.T) {
	t.Parallel()
	in, tok := mailboxRepo(t)
	in.Submit(map[string]any{"id": "I-1", "description": "Write the fix into file.txt"})
	in.AcceptTask(tok, "I-1")
	in.ReplyAs(tok, map[string]any{"text": "Status: impossible\nReason: file.txt is generated by a tool we do not have"})
	got := in.WaitTask("I-1", 30*time.Second, "escalated")
	if got.Escalation == nil || !strings.Contains(got.Escalation.Reason, "file.txt is generated by a tool we do not have") {
		t.Fatalf("escalation:\n%s", got)
	}
	in.Must(200, in.Call("POST", "/v1/tasks/I-1/respond", blackbox.AdminToken, map[string]any{"action": "abort"}))
	in.WaitTask("I-1", 30*time.Second, "aborted")

	in.Submit(map[string]any{"id": "F-1", "description": "Write the fix into file.txt"})
	in.AcceptTask(tok, "F-1")
	in.ReplyAs(tok, map[string]any{"text": "Status: failed\nError: cannot find module 'uuid'"})
	waitFor(t, "the failure of F-1's first attempt", 30*time.Second, func() bool { return len(in.Task("F-1").Failures) == 1 })
	f := in.Task("F-1").Failures[0]
	if f.FailureType != "execution_error" || !strings.Contains(f.ExecutorOutput.Error, "cannot find module 'uuid'") {
		t.Fatalf("failure %+v", f)
	}
	m := in.Delegation(tok, "F-1") // the retry
	if m.Attempt < 1 || !strings.Contains(m.Body, "cannot find module") {
		t.Fatalf("the retry does not carry the failure:\n%s", m.Body)
	}
}

// An exec agent that exits 0 but says it is blocked is blocked, with its
// reason; its work is not verified.
func TestExecAgentThatSaysBlockedIsBlockedNotVerified(t *testing.T) {
	t.Parallel()
	dir := blackbox.NewRepo(t, "agents:\n"+execAgent(t, "stuck", "ackl_blocked.sh", nil)+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"description": "Write the fix into file.txt"})
	in.BlockedReason("T-1", "the fixture server at localhost:9 refuses connections")
	if n := in.VerifyRuns("T-1"); n != 0 {
		t.Fatalf("%d verification runs of a blocked task", n)
	}
	blackbox.MustContain(t, "wilco status", in.Cli("status", "T-1"), "blocked")
}

// Claude Code's final answer (the "result" of its stream-json output) is
// read for the completion report: a blocked report there blocks the task,
// even when the earlier assistant messages said nothing of it.
func TestClaudeCodeFinalResultSaysBlocked(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "claude")
	script, err := os.ReadFile(blackbox.ScriptPath(t, "ackl_claude.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, script, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := blackbox.NewRepo(t, "agents:\n  - {name: claude, adapter: exec, preset: claude-code, command: ["+blackbox.Quoted(bin)+"], prompt: stdin, handshake: inline, timeout: 2m}\n"+blackbox.CheckStep)
	in := blackbox.ServeRepo(t, dir)
	in.Submit(map[string]any{"description": "Write the fix into file.txt"})
	in.BlockedReason("T-1", "I need the production credentials")
	if n := in.VerifyRuns("T-1"); n != 0 {
		t.Fatalf("%d verification runs of a blocked task", n)
	}
}

// The ACK protocol's clarification flow, exactly: questions, the user's
// answers, then a confirmation whose understanding speaks only of the
// clarified points. The understanding check judges everything the agent
// said about the task — the first understanding and the confirmation — so
// work begins without a correction. An understanding that misses an item
// over the whole conversation still gets one.
func TestUnderstandingIsJudgedOverTheClarificationConversation(t *testing.T) {
	t.Parallel()
	in, tok := mailboxRepo(t)
	criteria := []string{"Login and logout endpoints", "JWT access tokens that expire", "Refresh tokens"}
	in.Submit(map[string]any{"id": "GH-42", "description": "Implement user authentication", "acceptance_criteria": criteria})
	m := in.Delegation(tok, "GH-42")
	got := in.ReplyAs(tok, map[string]any{"in_reply_to": m.ID, "text": "[ACK] GH-42 - CLARIFICATION_NEEDED\n" +
		"Understanding: Implementing JWT auth with login/logout endpoints\n" +
		"Questions:\n1. Should JWT tokens expire after 24h or 7 days?\n2. Should we support refresh tokens?"})
	if got["status"] != "clarification_needed" {
		t.Fatalf("the questions were taken as %v", got)
	}
	in.WaitTask("GH-42", 30*time.Second, "clarifying")
	in.Must(200, in.Call("POST", "/v1/tasks/GH-42/clarify", blackbox.AdminToken, map[string]any{"answers": []string{
		"24 hours with refresh token support", "Yes, implement refresh tokens"}}))
	answers := in.Delegation(tok, "GH-42")
	blackbox.MustContain(t, "the task-clarification", answers.Body, "task-clarification", "24 hours with refresh token support")
	got = in.ReplyAs(tok, map[string]any{"in_reply_to": answers.ID, "type": "task-acknowledgment", "data": map[string]any{
		"type": "task-acknowledgment", "task_id": "GH-42", "status": "confirmed", "understanding": "JWT with 24h expiry + refresh tokens"}})
	if got["action"] != "acknowledged: work may begin" {
		t.Fatalf("the confirmation after the answers was answered with: %v", got["action"])
	}
	in.WaitTask("GH-42", 30*time.Second, "running")
	for _, ev := range in.TaskEvents("GH-42", "delivery.retried") {
		if d := blackbox.EventData(t, ev); d["kind"] == "correction" {
			t.Fatalf("a correction was sent: %v", d)
		}
	}

	// Over the whole conversation, refresh tokens are never mentioned.
	in.Submit(map[string]any{"id": "GH-43", "description": "Implement user authentication", "acceptance_criteria": criteria})
	in.Fix("GH-42")
	in.ReplyAs(tok, map[string]any{"text": "Status: complete"})
	in.WaitTask("GH-42", 30*time.Second, "success")
	m = in.Delegation(tok, "GH-43")
	in.ReplyAs(tok, map[string]any{"in_reply_to": m.ID, "text": "[ACK] GH-43 - CLARIFICATION_NEEDED\n" +
		"Understanding: Implementing JWT auth with login/logout endpoints\nQuestions:\n1. How long should a JWT live?"})
	in.WaitTask("GH-43", 30*time.Second, "clarifying")
	in.Must(200, in.Call("POST", "/v1/tasks/GH-43/clarify", blackbox.AdminToken, map[string]any{"answers": []string{"24 hours"}}))
	answers = in.Delegation(tok, "GH-43")
	got = in.ReplyAs(tok, map[string]any{"in_reply_to": answers.ID, "text": "[ACK] GH-43 - CONFIRMED\nUnderstanding: JWT that expire after 24h"})
	if action, _ := got["action"].(string); !strings.Contains(action, "correction sent") || !strings.Contains(action, "Refresh tokens") {
		t.Fatalf("an understanding without refresh tokens was answered with: %v", got["action"])
	}
	corr := in.Delegation(tok, "GH-43")
	blackbox.MustContain(t, "the correction", corr.Body, "Refresh tokens", "login/logout endpoints", "24h")
}

// `wilco reply` takes a form's type with the reply's text alone (a
// task-complete whose text is the summary), and a form's JSON alone (its
// "type" field names the form): neither needs the other flag.
func TestReplyCommandTakesTypeWithTextOrDataAlone(t *testing.T) {
	t.Parallel()
	in, tok := mailboxRepo(t)

	in.Submit(map[string]any{"id": "R-1", "description": "Write the fix into file.txt"})
	in.AcceptTask(tok, "R-1")
	in.Fix("R-1")
	r := in.AgentCLI(tok, "reply", "--type", "task-complete", "Wrote the fix into file.txt; the check passes.")
	if r.Code != 0 || !strings.Contains(r.Stdout, "complete") {
		t.Fatalf("reply --type task-complete <text>: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	in.WaitTask("R-1", 60*time.Second, "success")

	in.Submit(map[string]any{"id": "R-2", "description": "Write the fix into file.txt"})
	in.AcceptTask(tok, "R-2")
	in.Fix("R-2")
	r = in.AgentCLI(tok, "reply", "--data", `{"type": "task-complete", "task_id": "R-2", "summary": "fixed"}`)
	if r.Code != 0 || !strings.Contains(r.Stdout, "complete") {
		t.Fatalf("reply --data <json>: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	in.WaitTask("R-2", 60*time.Second, "success")

	if r = in.AgentCLI(tok, "reply", "--type", "task-complete"); r.Code != 2 || !strings.Contains(r.Stderr, "text") {
		t.Fatalf("reply --type without text or data: exit %d, stderr %s", r.Code, r.Stderr)
	}
}

// A late ACK or completion of an earlier attempt never counts for the
// current one: the agent's answers to attempt 1's delegation, arriving
// after attempt 2 was delegated, neither acknowledge attempt 2 nor end its
// turn; attempt 2's own answers do.
func TestALateAckOrCompletionOfAnEarlierAttemptNeverCountsForTheCurrentOne(t *testing.T) {
	t.Parallel()
	in, tok := mailboxRepo(t)
	in.Submit(map[string]any{"id": "L-1", "description": "Write the fix into file.txt"})
	first := in.AcceptTask(tok, "L-1")
	// Attempt 1 claims completion without the fix: verification fails and
	// attempt 2 is delegated.
	in.ReplyAs(tok, map[string]any{"type": "task-complete", "data": map[string]any{"summary": "done"}, "in_reply_to": first.ID})
	second := in.Delegation(tok, "L-1")
	if second.ID == first.ID || second.Attempt < 1 {
		t.Fatalf("attempt 2's delegation: %+v", second)
	}
	if got := in.Task("L-1"); got.State != "awaiting_ack" || got.Attempt != 2 {
		t.Fatalf("after attempt 1 failed: %s attempt %d", got.State, got.Attempt)
	}
	// Attempt 1's answers, late: an ACK, then a completion, each in reply to
	// attempt 1's delegation.
	for _, body := range []map[string]any{
		{"in_reply_to": first.ID, "text": "[ACK] L-1 - RECEIVED\nUnderstanding: Will write the fix into file.txt"},
		{"in_reply_to": first.ID, "type": "task-complete", "data": map[string]any{"task_id": "L-1", "status": "success", "summary": "late"}},
	} {
		r := in.Call("POST", "/v1/inbox/replies", tok, body)
		if got := in.Task("L-1"); got.State != "awaiting_ack" || got.Attempt != 2 {
			t.Fatalf("a late answer of attempt 1 (%d %s) moved attempt 2: %s attempt %d", r.Status, r.Body, got.State, got.Attempt)
		}
	}
	if m := in.Message(second.ID); m.State == "acknowledged" {
		t.Fatalf("attempt 2's delegation was acknowledged by attempt 1's ACK: %+v", m)
	}
	if n := in.VerifyRuns("L-1"); n != 1 {
		t.Fatalf("%d verifications ran: a late completion started one:\n%s", n, blackbox.Milestones(t, in, "L-1"))
	}
	// Attempt 2's own answers count.
	got := in.ReplyAs(tok, map[string]any{"in_reply_to": second.ID, "text": "[ACK] L-1 - RECEIVED\nUnderstanding: Will write the fix into file.txt"})
	if got["action"] != "acknowledged: work may begin" {
		t.Fatalf("attempt 2's ACK was taken as %v", got)
	}
	in.Fix("L-1")
	in.ReplyAs(tok, map[string]any{"type": "task-complete", "data": map[string]any{"summary": "wrote the fix"}, "in_reply_to": second.ID})
	if done := in.WaitTask("L-1", 30*time.Second, "success"); done.Attempt != 2 {
		t.Fatalf("success at attempt %d", done.Attempt)
	}
}
