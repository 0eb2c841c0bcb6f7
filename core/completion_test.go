package core

import (
	"strings"
	"testing"

	"wilco/ack"
)

// runningMailboxTask submits a task for mailbox agent m and acknowledges
// it; the task runs.
func runningMailboxTask(b *testBundle) Task {
	b.t.Helper()
	b.agent("m", "mailbox", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	msgs := cycle(b, "m")
	reply(b, "m", msgs[0].ID, "[ACK] "+tk.ID+" - RECEIVED")
	if got := b.task(tk.ID); got.State != Running || got.Phase != Executing {
		b.t.Fatalf("after the ACK: %s %s", got.State, got.Phase)
	}
	return b.task(tk.ID)
}

func TestTaskCompleteWithoutStatusIsAClaimThatVerificationDecides(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tk := runningMailboxTask(b)
	in, err := jsonReply(b, "m", "task-complete", `{"task_id":"`+tk.ID+`","summary":"wrote it"}`)
	b.ok(err)
	if in.Kind != string(ack.KindComplete) || b.task(tk.ID).Phase != Verifying {
		t.Fatalf("%+v; task %s %s", in, b.task(tk.ID).State, b.task(tk.ID).Phase)
	}
}

func TestTaskCompleteWithoutTaskIDIsForTheAgentsTask(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tk := runningMailboxTask(b)
	in, err := jsonReply(b, "m", "task-complete", `{"status":"done"}`)
	b.ok(err)
	if in.TaskID != tk.ID || b.task(tk.ID).Phase != Verifying {
		t.Fatalf("%+v; task %s %s", in, b.task(tk.ID).State, b.task(tk.ID).Phase)
	}
}

func TestTypedReplyWithTextOnlyIsReadFromItsText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tk := runningMailboxTask(b)
	in, err := b.c.Reply(b.now, ReplyInput{Agent: "m", Type: "task-complete", Text: "Status: blocked\nReason: no key"})
	b.ok(err)
	if in.Status != string(ack.CompleteBlocked) || b.task(tk.ID).BlockedBy != "no key" {
		t.Fatalf("%+v; blocked by %q", in, b.task(tk.ID).BlockedBy)
	}
}

func TestTypedTaskCompleteWithPlainTextIsAClaimWithThatSummary(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tk := runningMailboxTask(b)
	_, err := b.c.Reply(b.now, ReplyInput{Agent: "m", Type: "task-complete", Text: "I wrote the parser and its tests."})
	b.ok(err)
	var ended TaskTurnEnded
	for _, e := range b.eventsOf(TypeTaskTurnEnded) {
		ended = e.Data.(TaskTurnEnded)
	}
	if b.task(tk.ID).Phase != Verifying || !strings.Contains(ended.Summary, "parser and its tests") {
		t.Fatalf("task %s, turn %+v", b.task(tk.ID).Phase, ended)
	}
	if _, err := b.c.Reply(b.now, ReplyInput{Agent: "m", Type: "task-acknowledgment", Text: "hello"}); CodeOf(err) != Invalid {
		t.Fatalf("a typed reply with neither its data nor its form: %v", err)
	}
	b.collect()
}

func TestBlockedReportInTextBlocksWithItsReason(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tk := runningMailboxTask(b)
	in := reply(b, "m", "", "I tried.\n\nStatus: blocked\nReason: the staging password is not set")
	if in.Kind != string(ack.KindComplete) || in.TaskID != tk.ID {
		t.Fatalf("%+v", in)
	}
	got := b.task(tk.ID)
	if got.State != Blocked || got.BlockedBy != "the staging password is not set" {
		t.Fatalf("%s %q", got.State, got.BlockedBy)
	}
	var reason string
	for _, e := range b.eventsOf(TypeTaskState) {
		if sc := e.Data.(TaskStateChanged); sc.To == Blocked {
			reason = sc.Reason
		}
	}
	if reason != "the staging password is not set" {
		t.Fatalf("task.state reason %q", reason)
	}
}

func TestCompletionReportForAnotherTaskIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tk := runningMailboxTask(b)
	for _, text := range []string{"[COMPLETE] GH-8", "Task: GH-8\nStatus: blocked\nReason: x"} {
		_, err := b.c.Reply(b.now, ReplyInput{Agent: "m", Text: text})
		if err == nil {
			t.Fatalf("%q was accepted", text)
		}
		b.collect()
	}
	d := b.task(tk.ID).Delivery
	_, err := b.c.Reply(b.now, ReplyInput{Agent: "m", InReplyTo: d, Text: "TASK COMPLETE: GH-8"})
	if CodeOf(err) != Invalid {
		t.Fatalf("a report for GH-8 in reply to %s's delegation: %v", tk.ID, err)
	}
	b.collect()
	if got := b.task(tk.ID); got.State != Running || got.Phase != Executing {
		t.Fatalf("%s %s", got.State, got.Phase)
	}
}

func TestWordsLikeACompletionWithNoTaskAreAMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("m", "mailbox")
	d := instruct(b, "m", "Check the disk", nil, &Matcher{Contains: "disk ok"})
	cycle(b, "m")
	in := reply(b, "m", "", "Status: done\ndisk ok")
	if in.Kind != string(ack.KindMessage) || b.delivery(d.ID).State != Acknowledged {
		t.Fatalf("%+v; instruction %s", in, b.delivery(d.ID).State)
	}
}

func TestWordsLikeAReportOnAnUnknownTaskWithNoTaskAreAMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("m", "mailbox")
	d := instruct(b, "m", "Clean the cache", nil, nil)
	cycle(b, "m")
	if in := reply(b, "m", d.ID, "[DONE] cleanup"); in.Kind != string(ack.KindMessage) {
		t.Fatalf("in reply to an instruction: %+v", in)
	}
	if in := reply(b, "m", "", "[DONE] cleanup"); in.Kind != string(ack.KindMessage) {
		t.Fatalf("with no task: %+v", in)
	}
}

func TestACKAndCompletionInOneTextAreBoth(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("m", "mailbox", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	msgs := cycle(b, "m")
	in := reply(b, "m", msgs[0].ID, "[ACK] "+tk.ID+" - RECEIVED\nUnderstanding: x\n\nDid it.\n\nTASK COMPLETE")
	if in.Kind != string(ack.KindComplete) || len(in.Acknowledged) != 1 || b.task(tk.ID).Phase != Verifying {
		t.Fatalf("%+v; task %s %s", in, b.task(tk.ID).State, b.task(tk.ID).Phase)
	}
}

func TestFailedReportInTextIsAFailedAttempt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tk := runningMailboxTask(b)
	reply(b, "m", "", "Status: failed\nError: cannot find module 'uuid'")
	got := b.task(tk.ID)
	if len(got.Failures) != 1 || got.Failures[0].FailureType != ExecutionError || got.Failures[0].ExecutorOutput.Error != "cannot find module 'uuid'" {
		t.Fatalf("%+v", got.Failures)
	}
}

// The ACK protocol's clarification flow: the confirmation speaks only of
// the clarified points, and the check judges it with the understanding the
// agent gave with its questions.
func TestUnderstandingIsJudgedOverTheConversation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	d := delegate(b, "alice", "GH-42", "Login and logout endpoints", "JWT access tokens that expire", "Refresh tokens")
	reply(b, "alice", d.ID, "[ACK] GH-42 - CLARIFICATION_NEEDED\nUnderstanding: Implementing JWT auth with login/logout endpoints\n"+
		"Questions:\n1. Should JWT tokens expire after 24h or 7 days?\n2. Should we support refresh tokens?")
	_, err := b.c.Clarify(b.now, d.ID, []string{"24 hours with refresh token support", "Yes, implement refresh tokens"})
	b.ok(err)
	in, err := jsonReply(b, "alice", "task-acknowledgment", `{"type":"task-acknowledgment","task_id":"GH-42","status":"confirmed","understanding":"JWT with 24h expiry + refresh tokens"}`)
	b.ok(err)
	if got := b.delivery(d.ID); got.State != Acknowledged || got.Understanding() != "JWT with 24h expiry + refresh tokens" {
		t.Fatalf("%+v: %s %q", in, got.State, got.Understanding())
	}
	// The confirmation alone does not cover the task: the conversation does.
	task := ack.Task{ID: "GH-42", AcceptanceCriteria: []string{"Login and logout endpoints", "JWT access tokens that expire", "Refresh tokens"}}
	if v := (ack.TermCoverage{}).Check(task, ack.Reply{Kind: ack.KindAck, TaskID: "GH-42", Understanding: "JWT with 24h expiry + refresh tokens"}); v.OK {
		t.Fatal("the last message alone covers the task: this test proves nothing")
	}
}

// An ACK that got a correction counts too: the next one need only add what
// was missing.
func TestUnderstandingAfterACorrectionIsJudgedWithTheFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	d := delegate(b, "alice", "GH-4", "directory listing with fs::read_dir", "serde_json formatting", "CLI flags --sort --reverse --format")
	reply(b, "alice", d.ID, "[ACK] GH-4 - RECEIVED\nUnderstanding: Will implement directory listing with fs::read_dir and serde_json formatting")
	msgs := b.delivered("alice")
	if last := msgs[len(msgs)-1]; last.Type != string(SendCorrection) || !strings.Contains(last.Body, "CLI flags") {
		t.Fatalf("no correction: %+v", last)
	}
	reply(b, "alice", d.ID, "[ACK] GH-4 - RECEIVED\nUnderstanding: also the CLI flags --sort, --reverse and --format")
	if got := b.delivery(d.ID); got.State != Acknowledged || got.Corrections != 1 {
		t.Fatalf("%s after %d corrections", got.State, got.Corrections)
	}
	if r := b.delivery(d.ID).Reply; r == nil || len(r.Earlier) != 1 || !strings.Contains(r.Earlier[0], "serde_json") {
		t.Fatalf("earlier understandings %+v", r)
	}
}

// Over the whole conversation, an item nobody spoke of is still missing,
// and the correction quotes everything the agent said.
func TestUnderstandingMissingOverTheConversationGetsACorrection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("alice", "exec", "go")
	d := delegate(b, "alice", "GH-42", "Login and logout endpoints", "JWT access tokens that expire", "Refresh tokens")
	reply(b, "alice", d.ID, "[ACK] GH-42 - CLARIFICATION_NEEDED\nUnderstanding: JWT auth with login/logout endpoints\nQuestions:\n1. How long should a JWT live?")
	_, err := b.c.Clarify(b.now, d.ID, []string{"24 hours"})
	b.ok(err)
	reply(b, "alice", d.ID, "[ACK] GH-42 - CONFIRMED\nUnderstanding: JWT that expire after 24h")
	msgs := b.delivered("alice")
	last := msgs[len(msgs)-1]
	if b.delivery(d.ID).State == Acknowledged || last.Type != string(SendCorrection) {
		t.Fatalf("accepted without refresh tokens: %+v", last)
	}
	for _, want := range []string{"Refresh tokens", "login/logout endpoints", "expire after 24h"} {
		if !strings.Contains(last.Body, want) {
			t.Errorf("the correction does not say %q:\n%s", want, last.Body)
		}
	}
}

func TestTaskCompleteWithoutStatusTakesTheReportOfItsText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tk := runningMailboxTask(b)
	in, err := b.c.Reply(b.now, ReplyInput{Agent: "m", Type: "task-complete", Data: []byte(`{"type":"task-complete"}`),
		Text: "Stopped.\nStatus: blocked\nReason: the API key expired"})
	b.ok(err)
	if in.Status != string(ack.CompleteBlocked) || b.task(tk.ID).BlockedBy != "the API key expired" {
		t.Fatalf("%+v; %s blocked by %q", in, b.task(tk.ID).State, b.task(tk.ID).BlockedBy)
	}
}

// An exec agent's ACK block may run into its report; its turn ends with its
// process all the same.
func TestReportInAnExecAgentsACKDoesNotEndItsTurn(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	in := reply(b, "claude", b.task(tk.ID).Delivery, "[ACK] "+tk.ID+" - RECEIVED\nUnderstanding: x\nStatus: complete")
	if in.Kind != string(ack.KindAck) || b.task(tk.ID).Phase != Executing {
		t.Fatalf("%+v; task %s %s", in, b.task(tk.ID).State, b.task(tk.ID).Phase)
	}
}
