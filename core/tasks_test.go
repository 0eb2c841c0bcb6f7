package core

import (
	"strings"
	"testing"
	"time"

	"wilco/ack"
)

func submit(b *testBundle, spec TaskSpec) Task {
	b.t.Helper()
	t, err := b.c.SubmitTask(b.now, spec)
	b.ok(err)
	return t
}

func (b *testBundle) task(id string) Task {
	b.t.Helper()
	t, ok := b.c.Task(id)
	if !ok {
		b.t.Fatalf("no task %s", id)
	}
	return t
}

// ackTask makes the agent acknowledge the task's current delegation.
func ackTask(b *testBundle, id string) {
	b.t.Helper()
	t := b.task(id)
	reply(b, t.Agent, t.Delivery, "[ACK] "+id+" - RECEIVED\nUnderstanding: "+t.Description)
	if got := b.task(id); got.State != Running || got.Phase != Executing {
		b.t.Fatalf("after the ACK %s is %s/%s", id, got.State, got.Phase)
	}
}

func endTurn(b *testBundle, id string, exit int) {
	b.t.Helper()
	t := b.task(id)
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: id, Attempt: t.Attempt, ExitCode: exit, Summary: "did it"})
	b.ok(err)
}

// failingGoTest is the output of a go test run with one test passing and
// two failing.
const failingGoTest = "--- PASS: TestSub (0.00s)\n--- FAIL: TestAdd (0.00s)\n    add_test.go:9: got 3, want 4\n" +
	"--- FAIL: TestMul (0.00s)\n    add_test.go:19: got 3, want 9\nFAIL\nFAIL\texample.com/calc\t0.01s\n"

func verify(b *testBundle, id string, pass bool) {
	b.t.Helper()
	t := b.task(id)
	step := StepRun{Name: "unit", Command: "go test ./...", Output: "ok  \texample.com/calc\t0.01s\n"}
	if !pass {
		step.ExitCode, step.Output = 1, failingGoTest
	}
	_, err := b.c.EndVerify(b.now, VerifyResult{TaskID: id, RunID: t.RunID, Steps: []StepRun{step}, Files: []string{"main.go"}})
	b.ok(err)
}

// failAttempt runs one attempt to a failed verification.
func failAttempt(b *testBundle, id string) {
	b.t.Helper()
	ackTask(b, id)
	endTurn(b, id, 0)
	verify(b, id, false)
}

func lastDelivered(b *testBundle, agent string) InboxMessage {
	msgs := b.delivered(agent)
	return msgs[len(msgs)-1]
}

func taskBundle(t *testing.T) *testBundle {
	b := setup(t)
	b.agent("claude", "exec", "go")
	return b
}

func TestQueueIsStrictFIFOWithPositions(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	first := submit(b, TaskSpec{Description: "one"})
	second := submit(b, TaskSpec{Description: "two"})
	third := submit(b, TaskSpec{Description: "three"})
	if first.State != AwaitingAck || second.State != Queued {
		t.Fatalf("states %s %s", first.State, second.State)
	}
	if b.c.Position(second.ID) != 1 || b.c.Position(third.ID) != 2 || b.c.Position(first.ID) != 0 {
		t.Fatal("positions")
	}
	ackTask(b, first.ID)
	endTurn(b, first.ID, 0)
	verify(b, first.ID, true)
	if b.task(second.ID).State != AwaitingAck || b.c.Position(third.ID) != 1 {
		t.Fatal("the next task did not start in order")
	}
}

func TestCancelQueuedTaskLeavesNoTraceAndTheRestShiftUp(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	submit(b, TaskSpec{Description: "running"})
	q1 := submit(b, TaskSpec{Description: "q1"})
	q2 := submit(b, TaskSpec{Description: "q2"})
	_, removed, err := b.c.CancelTask(b.now, q1.ID)
	b.ok(err)
	if !removed {
		t.Fatal("a queued task was not removed")
	}
	if _, ok := b.c.Task(q1.ID); ok {
		t.Fatal("the cancelled queued task is still there")
	}
	if b.c.Position(q2.ID) != 1 {
		t.Fatal("the rest did not shift up")
	}
}

func TestTaskWaitsForAckBeforeWork(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout", AcceptanceCriteria: []string{"login timeout is 60s"}})
	msg := lastDelivered(b, "claude")
	if msg.TaskID != tk.ID || msg.TaskAttempt != 1 || !strings.Contains(msg.Body, "ACKNOWLEDGMENT REQUIRED") || !strings.Contains(msg.Body, "- [ ] login timeout is 60s") {
		t.Fatalf("delegation: %+v", msg)
	}
	if b.task(tk.ID).Milestone != MilestoneWaitingAck {
		t.Fatal("milestone")
	}
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1})
	b.ok(err)
	if b.task(tk.ID).State != AwaitingAck {
		t.Fatal("a turn without ACK started verification")
	}
	reply(b, "claude", "", "[ACK] "+tk.ID+" - RECEIVED\nUnderstanding: fix the login timeout so it is 60s")
	if got := b.task(tk.ID); got.State != Running || got.Phase != Executing {
		t.Fatalf("%s %s", got.State, got.Phase)
	}
}

func TestVerificationPassEndsInSuccessWithSummary(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "Add a flag"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	got := b.task(tk.ID)
	if got.Phase != Verifying || got.RunID == "" {
		t.Fatalf("not verifying: %+v", got)
	}
	verify(b, tk.ID, true)
	got = b.task(tk.ID)
	if got.State != Success || got.Summary == nil || got.Summary.RunID != got.RunID || !strings.Contains(got.Summary.Text, "main.go") || !strings.Contains(got.Summary.Text, got.RunID) {
		t.Fatalf("summary: %+v", got.Summary)
	}
	if a, _ := b.c.Agent("claude"); a.Status != Available {
		t.Fatalf("agent left %s", a.Status)
	}
}

func TestFailureIsRecordedAndTheRetryPromptStartsWithRetryContext(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "Add a flag"})
	failAttempt(b, tk.ID)
	got := b.task(tk.ID)
	if len(got.Failures) != 1 || got.ConsecutiveFailures != 1 || got.TotalVerifyLoops != 1 || got.Attempt != 2 {
		t.Fatalf("%+v", got)
	}
	f := got.Failures[0]
	if f.FailureType != VerificationFailed || f.RunID == "" || f.ExecutorOutput.Verification.ExitCode != 1 {
		t.Fatalf("failure record %+v", f)
	}
	msg := lastDelivered(b, "claude")
	if !strings.HasPrefix(msg.Body, `<retry_context attempt="2" max_attempts="12">`) || !strings.Contains(msg.Body, "1 passed, 2 failed") || !strings.Contains(msg.Body, "## Task: "+tk.ID) {
		t.Fatalf("retry prompt:\n%s", msg.Body)
	}
	if strings.Index(msg.Body, "<retry_context") > strings.Index(msg.Body, "## Task:") {
		t.Fatal("the retry context is not before the task")
	}
	if got.Milestone != "Attempt 2/12..." {
		t.Fatalf("milestone %q", got.Milestone)
	}
}

func TestReplanAfterThreeConsecutiveFailures(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "Add a flag", Constraints: []string{"keep the API"}})
	for range 3 {
		failAttempt(b, tk.ID)
	}
	got := b.task(tk.ID)
	if got.Replans != 1 || got.ConsecutiveFailures != 0 || got.TotalVerifyLoops != 3 {
		t.Fatalf("replans %d consecutive %d total %d", got.Replans, got.ConsecutiveFailures, got.TotalVerifyLoops)
	}
	msg := lastDelivered(b, "claude")
	if !strings.Contains(msg.Body, "<replan") || strings.Count(msg.Body, "<failure attempt=") != 3 || !strings.Contains(msg.Body, "keep the API") {
		t.Fatalf("replan prompt:\n%s", msg.Body)
	}
	if len(b.eventsOf(TypeTaskReplan)) != 1 {
		t.Fatal("no task.replan event")
	}
}

func TestHardStopAtTwelveLoopsWinsOverReplan(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "Add a flag"})
	next := submit(b, TaskSpec{Description: "next one"})
	for range 12 {
		failAttempt(b, tk.ID)
	}
	got := b.task(tk.ID)
	if got.State != Stuck || got.TotalVerifyLoops != 12 || got.Replans != 3 {
		t.Fatalf("%s loops %d replans %d", got.State, got.TotalVerifyLoops, got.Replans)
	}
	r := got.StuckReport
	if r == nil || len(r.RunIDs) != 12 || len(r.Hypotheses) == 0 || r.Path != ".wilco/stuck/"+tk.ID+".md" || !strings.Contains(r.Markdown, r.RunIDs[11]) {
		t.Fatalf("stuck report %+v", r)
	}
	if b.task(next.ID).State != AwaitingAck {
		t.Fatal("the next task did not start after the hard stop")
	}
}

func TestEscalateAfterNFailedAttempts(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Loop.EscalateAfter = 2
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "Add a flag"})
	failAttempt(b, tk.ID)
	failAttempt(b, tk.ID)
	got := b.task(tk.ID)
	if got.State != Escalated || got.Escalation == nil || !strings.Contains(got.Escalation.Message, "## Task Escalation Required") || !strings.Contains(got.Escalation.Message, "`fix: <instruction>`") {
		t.Fatalf("%s %+v", got.State, got.Escalation)
	}
	if q := submit(b, TaskSpec{Description: "waits"}); q.State != Queued {
		t.Fatal("an escalated task does not hold the queue")
	}
}

func TestImmediateEscalationOnPermissionDenied(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "Add a flag"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	_, err := b.c.EndVerify(b.now, VerifyResult{TaskID: tk.ID, RunID: b.task(tk.ID).RunID,
		Steps: []StepRun{{Name: "unit", Command: "go test ./...", ExitCode: 1, Output: "open /etc/hosts: permission denied\n"}}})
	b.ok(err)
	if got := b.task(tk.ID); got.State != Escalated || got.Attempt != 1 {
		t.Fatalf("%s attempt %d", got.State, got.Attempt)
	}
}

func TestRespondRetryResetsCountersFixInjectsUserIntervention(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Loop.EscalateAfter = 1
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "Add a flag"})
	failAttempt(b, tk.ID)
	_, err := b.c.Respond(b.now, tk.ID, RespondRetry, "")
	b.ok(err)
	if got := b.task(tk.ID); got.State != AwaitingAck || got.ConsecutiveFailures != 0 {
		t.Fatalf("retry: %s consecutive %d", got.State, got.ConsecutiveFailures)
	}
	failAttempt(b, tk.ID)
	_, err = b.c.Respond(b.now, tk.ID, RespondFix, "Check for whitespace using .trim() before UUID validation")
	b.ok(err)
	msg := lastDelivered(b, "claude")
	if !strings.Contains(msg.Body, "<user_intervention>") || !strings.Contains(msg.Body, `<instruction priority="high">`) || !strings.Contains(msg.Body, "User provided fix: Check for whitespace") {
		t.Fatalf("fix prompt:\n%s", msg.Body)
	}
	_, err = b.c.Respond(b.now, tk.ID, RespondFix, "")
	b.refused(err, Conflict)
}

func TestRespondSkipWarnsDependantsAbortStopsThePlan(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Loop.EscalateAfter = 1
	b.ok(b.c.Configure(b.now, p))
	_, err := b.c.SubmitPlan(b.now, "03-01", []PlanTaskSpec{
		{TaskSpec: TaskSpec{Description: "first"}},
		{TaskSpec: TaskSpec{Description: "second"}, DependsOn: []int{1}},
		{TaskSpec: TaskSpec{Description: "third"}},
	})
	b.ok(err)
	failAttempt(b, "03-01:task-1")
	_, err = b.c.Respond(b.now, "03-01:task-1", RespondSkip, "")
	b.ok(err)
	if got := b.task("03-01:task-2"); len(got.Warnings) == 0 || !strings.Contains(got.Warnings[0], "03-01:task-1 was skipped") {
		t.Fatalf("dependant not warned: %+v", got.Warnings)
	}
	failAttempt(b, "03-01:task-2")
	_, err = b.c.Respond(b.now, "03-01:task-2", RespondAbort, "")
	b.ok(err)
	if b.task("03-01:task-2").State != Aborted || b.task("03-01:task-3").State != Aborted {
		t.Fatal("abort did not stop the plan")
	}
	pl, _ := b.c.Plan("03-01")
	if pl.State != PlanAborted || pl.Summary == nil || pl.Summary.Skipped != 1 || pl.Summary.Escalations != 2 || !strings.Contains(pl.Summary.Text, "## Retry Summary for Plan 03-01") {
		t.Fatalf("plan %+v", pl.Summary)
	}
}

func TestRespondOnlyToEscalatedOrBlocked(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	_, err := b.c.Respond(b.now, tk.ID, RespondRetry, "")
	b.refused(err, Conflict)
	_, err = b.c.Respond(b.now, "T-404", RespondRetry, "")
	b.refused(err, NotFound)
}

func TestBlockedExecutorWaitsForTheUser(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("m", "mailbox", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	cycle(b, "m")
	reply(b, "m", "", "[ACK] "+tk.ID+" - RECEIVED")
	_, err := jsonReply(b, "m", "task-complete", `{"task_id":"`+tk.ID+`","status":"blocked","summary":"need database credentials"}`)
	b.ok(err)
	got := b.task(tk.ID)
	if got.State != Blocked || !strings.Contains(got.BlockedBy, "credentials") {
		t.Fatalf("%s %q", got.State, got.BlockedBy)
	}
	_, err = b.c.Respond(b.now, tk.ID, RespondFix, "use the test database")
	b.ok(err)
	if b.task(tk.ID).State != AwaitingAck {
		t.Fatal("fix did not restart")
	}
}

func TestMailboxAgentTaskCompleteEndsTheTurn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("m", "mailbox", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	msgs := cycle(b, "m")
	if len(msgs) != 1 || msgs[0].TaskID != tk.ID {
		t.Fatalf("%+v", msgs)
	}
	reply(b, "m", msgs[0].ID, "[ACK] "+tk.ID+" - RECEIVED")
	_, err := jsonReply(b, "m", "task-complete", `{"task_id":"`+tk.ID+`","status":"success","summary":"done"}`)
	b.ok(err)
	if got := b.task(tk.ID); got.Phase != Verifying {
		t.Fatalf("%s %s", got.State, got.Phase)
	}
}

func TestCancelRunningTaskStopsTheAgentAndStartsTheNext(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	next := submit(b, TaskSpec{Description: "y"})
	ackTask(b, tk.ID)
	_, _, err := b.c.CancelTask(b.now, tk.ID)
	b.ok(err)
	var stopped bool
	for _, e := range b.effects {
		if s, ok := e.(StopTurn); ok && s.TaskID == tk.ID {
			stopped = true
		}
	}
	if !stopped || b.task(tk.ID).State != TaskCancelled || b.task(next.ID).State != AwaitingAck {
		t.Fatal("cancel did not stop and move on")
	}
	_, _, err = b.c.CancelTask(b.now, tk.ID)
	b.refused(err, Conflict)
}

// A task that ended without a milestone of its end (cancelled, a dry run
// discarded, skipped, aborted) does not keep its last live one ("Waiting
// for acknowledgment...", "Escalated: waiting for you"): its milestone
// says how it ended.
func TestACancelledTaskShowsNoLiveMilestone(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Loop.EscalateAfter = 1
	b.ok(b.c.Configure(b.now, p))
	end := func(id string, state TaskState, milestone string) {
		t.Helper()
		if got := b.task(id); got.State != state || got.Milestone != milestone {
			t.Fatalf("%s ended %s with the milestone %q, want %s with %q", id, got.State, got.Milestone, state, milestone)
		}
	}

	waiting := submit(b, TaskSpec{Description: "waits for its ACK"})
	if got := b.task(waiting.ID).Milestone; got != MilestoneWaitingAck {
		t.Fatalf("the milestone before the cancel: %q", got)
	}
	_, _, err := b.c.CancelTask(b.now, waiting.ID)
	b.ok(err)
	end(waiting.ID, TaskCancelled, "Cancelled by the user")

	dry := submit(b, TaskSpec{Description: "a dry run", DryRun: true})
	ackTask(b, dry.ID)
	endTurn(b, dry.ID, 0)
	_, err = b.c.EndProposal(b.now, ProposalResult{TaskID: dry.ID, RunID: b.task(dry.ID).RunID, Files: []string{"new.go"}})
	b.ok(err)
	if got := b.task(dry.ID); got.State != Proposed {
		t.Fatalf("the dry run is %s", got.State)
	}
	_, _, err = b.c.CancelTask(b.now, dry.ID)
	b.ok(err)
	end(dry.ID, TaskCancelled, "The proposal was discarded")

	for _, answer := range []struct {
		action string
		state  TaskState
		want   string
	}{{RespondSkip, Skipped, "Skipped by the user"}, {RespondAbort, Aborted, "Aborted by the user; partial state kept"}} {
		tk := submit(b, TaskSpec{Description: "escalated, then " + answer.action})
		failAttempt(b, tk.ID)
		if got := b.task(tk.ID).Milestone; got != "Escalated: waiting for you" {
			t.Fatalf("the milestone of the escalated task: %q", got)
		}
		_, err := b.c.Respond(b.now, tk.ID, answer.action, "")
		b.ok(err)
		end(tk.ID, answer.state, answer.want)
	}

	// The ends that say themselves keep their own milestone.
	done := submit(b, TaskSpec{Description: "verified"})
	ackTask(b, done.ID)
	endTurn(b, done.ID, 0)
	verify(b, done.ID, true)
	end(done.ID, Success, "Done: verified in run "+b.task(done.ID).RunID)
}

func TestDryRunProposesThenApplyRunsTheFullLoop(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x", DryRun: true})
	if !lastDelivered(b, "claude").DryRun {
		t.Fatal("the agent's turn is not marked dry run")
	}
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	var mk *MakeProposal
	for _, e := range b.effects {
		if m, ok := e.(MakeProposal); ok {
			mk = &m
		}
	}
	if mk == nil {
		t.Fatal("no proposal asked for: verification is skipped in a dry run")
	}
	_, err := b.c.EndProposal(b.now, ProposalResult{TaskID: tk.ID, RunID: mk.RunID, Files: []string{"new.go"}})
	b.ok(err)
	if got := b.task(tk.ID); got.State != Proposed || got.Proposal.Files[0] != "new.go" {
		t.Fatalf("%+v", got)
	}
	_, err = b.c.ApplyTask(b.now, tk.ID)
	b.ok(err)
	if got := b.task(tk.ID); got.State != Running || !got.Applying {
		t.Fatalf("apply: %s applying=%v", got.State, got.Applying)
	}
	_, err = b.c.EndApply(b.now, ApplyResult{TaskID: tk.ID})
	b.ok(err)
	verify(b, tk.ID, true)
	if b.task(tk.ID).State != Success {
		t.Fatal("applied dry run did not succeed")
	}
}

func TestDryRunDiscard(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x", DryRun: true})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	_, err := b.c.EndProposal(b.now, ProposalResult{TaskID: tk.ID, RunID: "r", Files: nil})
	b.ok(err)
	_, err = b.c.DiscardTask(b.now, tk.ID)
	b.ok(err)
	if b.task(tk.ID).State != TaskCancelled {
		t.Fatal("discard")
	}
	_, err = b.c.ApplyTask(b.now, tk.ID)
	b.refused(err, Conflict)
}

func TestResumeFromStuckIsANewTaskSeededWithTheStuckReport(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Loop.HardStop = 2
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "Add a flag", Constraints: []string{"keep the API"}})
	failAttempt(b, tk.ID)
	failAttempt(b, tk.ID)
	nt, err := b.c.ResumeTask(b.now, tk.ID)
	b.ok(err)
	if nt.ID == tk.ID || nt.ResumedFrom != tk.ID || !strings.Contains(nt.Context, "# Stuck report: "+tk.ID) || nt.Attempt != 0 && nt.Attempt != 1 {
		t.Fatalf("%+v", nt)
	}
	body := lastDelivered(b, "claude").Body
	if !strings.Contains(body, "Stuck report") || strings.Contains(body, "<retry_context") {
		t.Fatalf("resumed prompt:\n%s", body)
	}
	_, err = b.c.ResumeTask(b.now, nt.ID)
	b.refused(err, Conflict)
}

func TestExecutionErrorAndTimeoutAreFailures(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 2)
	ackTask(b, tk.ID)
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 2, TimedOut: true, ExitCode: -1})
	b.ok(err)
	got := b.task(tk.ID)
	if len(got.Failures) != 2 || got.Failures[0].FailureType != ExecutionError || got.Failures[1].FailureType != Timeout {
		t.Fatalf("%+v", got.Failures)
	}
}

func TestRestartCountsALostTurnAsAnExecutionError(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	q := submit(b, TaskSpec{Description: "queued"})
	ackTask(b, tk.ID)
	b.c.RecoverTasks(b.now)
	b.collect()
	got := b.task(tk.ID)
	if len(got.Failures) != 1 || got.Failures[0].FailureType != ExecutionError || got.Attempt != 2 {
		t.Fatalf("%+v", got)
	}
	if b.c.Position(q.ID) != 1 {
		t.Fatal("the queue changed")
	}
}

func TestUnresponsiveAgentTaskIsReassigned(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	b.agent("codex", "exec", "go")
	tk := submit(b, TaskSpec{Description: "x"})
	if b.task(tk.ID).Agent != "claude" {
		t.Fatal("agent")
	}
	b.advance(10 * time.Minute)
	got := b.task(tk.ID)
	if got.Agent != "codex" || got.State != AwaitingAck {
		t.Fatalf("%s %s", got.Agent, got.State)
	}
	b.advance(10 * time.Minute)
	if got := b.task(tk.ID); got.State != Escalated {
		t.Fatalf("no agent left: %s", got.State)
	}
}

func TestClarificationRoundTripOnATask(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	reply(b, "claude", "", "[ACK] "+tk.ID+" - CLARIFICATION_NEEDED\nUnderstanding: x\nQuestions:\n1. Which file?")
	if got := b.task(tk.ID); got.State != TaskClarifying {
		t.Fatalf("%s", got.State)
	}
	_, err := b.c.ClarifyTask(b.now, tk.ID, []string{"main.go"})
	b.ok(err)
	if got := b.task(tk.ID); got.State != AwaitingAck {
		t.Fatalf("%s", got.State)
	}
	ackTask(b, tk.ID)
}

func TestHandshakeNoneStartsWorkAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "aider", Adapter: "exec", Handshake: HandshakeNone}))
	tk := submit(b, TaskSpec{Description: "x"})
	if got := b.task(tk.ID); got.State != Running || got.Phase != Executing {
		t.Fatalf("%s", got.State)
	}
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, true)
	_ = ack.Received
}

func TestSubmitBadInput(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	for _, spec := range []TaskSpec{{}, {Description: "  "}, {Description: "x", ID: "bad id"}, {Description: "x", Constraints: []string{""}}} {
		_, err := b.c.SubmitTask(b.now, spec)
		b.refused(err, Invalid)
	}
	_, err := b.c.SubmitTask(b.now, TaskSpec{Description: "x", Agent: "nobody"})
	b.refused(err, NotFound)
	submit(b, TaskSpec{Description: "x", ID: "T-9"})
	_, err = b.c.SubmitTask(b.now, TaskSpec{Description: "x", ID: "T-9"})
	b.refused(err, Conflict)
}

func TestMalformedTaskFailsWithoutRetry(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	_, err := b.c.SubmitPlan(b.now, "01-01", []PlanTaskSpec{
		{TaskSpec: TaskSpec{Description: ""}},
		{TaskSpec: TaskSpec{Description: "fine"}},
	})
	b.ok(err)
	bad := b.task("01-01:task-1")
	if bad.State != TaskFailed || bad.Attempt != 0 || len(b.delivered("claude")) != 1 {
		t.Fatalf("%s attempt %d", bad.State, bad.Attempt)
	}
	if b.task("01-01:task-2").State != AwaitingAck {
		t.Fatal("the next task did not start")
	}
}

func TestPlanBadInput(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	for _, tc := range []struct {
		id    string
		tasks []PlanTaskSpec
	}{
		{"", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "x"}}}},
		{"a:b", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "x"}}}},
		{"03-01", nil},
		{"03-01", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "x"}, DependsOn: []int{1}}}},
		{"03-01", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "x"}}, {TaskSpec: TaskSpec{Description: "y"}, DependsOn: []int{3}}}},
	} {
		_, err := b.c.SubmitPlan(b.now, tc.id, tc.tasks)
		b.refused(err, Invalid)
	}
}

func TestTurnThatCrashesBeforeItsAckIsAnExecutionErrorNotAWait(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	first := b.task(tk.ID).Delivery
	_, err := b.c.EndTurn(b.now, TurnResult{TaskID: tk.ID, Attempt: 1, ExitCode: 2, Error: "the agent exited with status 2", Output: "panic: boom"})
	b.ok(err)
	got := b.task(tk.ID)
	if len(got.Failures) != 1 || got.Failures[0].FailureType != ExecutionError || got.Attempt != 2 || got.State != AwaitingAck {
		t.Fatalf("%s attempt %d failures %+v", got.State, got.Attempt, got.Failures)
	}
	if d := b.delivery(first); d.State != Cancelled {
		t.Fatalf("the first delegation is %s", d.State)
	}
}

func TestTaskWithoutVerificationIsNeverSuccess(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	// The verify run passed with no step: nothing was checked.
	_, err := b.c.EndVerify(b.now, VerifyResult{TaskID: tk.ID, RunID: b.task(tk.ID).RunID, Files: []string{"main.go"}})
	b.ok(err)
	got := b.task(tk.ID)
	if got.State != Unverified || !got.State.Terminal() || got.Summary == nil || !strings.Contains(got.Summary.Text, "NOT VERIFIED") {
		t.Fatalf("%s %+v", got.State, got.Summary)
	}
	if len(b.eventsOf(TypeTaskSuccess)) != 0 || len(b.eventsOf(TypeTaskUnverified)) != 1 {
		t.Fatal("an unverified task was recorded as a success")
	}
	sum := b.c.RetrySummary("all", nil)
	if sum.FirstAttemptSuccess != 0 || sum.Unverified != 1 || !strings.Contains(sum.Text, "Unverified (no check ran) | 1") {
		t.Fatalf("summary %+v", sum)
	}
}

// A report on a delegation that no longer carries its task's turn — an
// earlier attempt's, or the task ended — is refused: it changes nothing
// (the agent was reporting on a turn that is over, with ids it kept).
func TestAReportOnATurnThatIsOverIsRefused(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "Add a flag"})
	first := b.task(tk.ID).Delivery
	failAttempt(b, tk.ID)
	ackTask(b, tk.ID)
	for _, form := range []ReplyInput{
		{Agent: "claude", InReplyTo: first, Type: "checkpoint-ack", Data: []byte(`{"task_id":"` + tk.ID + `","checkpoint":1,"summary":"half"}`)},
		{Agent: "claude", InReplyTo: first, Type: "task-complete", Data: []byte(`{"task_id":"` + tk.ID + `","status":"success"}`)},
	} {
		_, err := b.c.Reply(b.now, form)
		if CodeOf(err) != Conflict || !strings.Contains(err.Error(), "earlier attempt of task "+tk.ID) {
			t.Fatalf("%s on attempt 1's delegation: %v", form.Type, err)
		}
	}
	if got := b.task(tk.ID); got.State != Running || got.Phase != Executing {
		t.Fatalf("the report on attempt 1 moved the task to %s/%s", got.State, got.Phase)
	}
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, true)
	_, err := b.c.Reply(b.now, ReplyInput{Agent: "claude", Type: "checkpoint-ack", Data: []byte(`{"task_id":"` + tk.ID + `","checkpoint":2,"summary":"more"}`)})
	if CodeOf(err) != Conflict || !strings.Contains(err.Error(), "task "+tk.ID+" is already success") {
		t.Fatalf("a checkpoint of the task that ended: %v", err)
	}
}
