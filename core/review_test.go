package core

import (
	"strings"
	"testing"
	"time"
)

// reviewBundle has an exec agent claude doing tasks and an exec agent
// reviewer reviewing them.
func reviewBundle(t *testing.T, done DonePolicy) *testBundle {
	b := taskBundle(t)
	b.agent("reviewer", "exec", "go")
	p := DefaultPolicies()
	p.Review = ReviewPolicy{Agent: "reviewer", Timeout: 5 * time.Minute}
	p.Done = done
	b.ok(b.c.Configure(b.now, p))
	return b
}

// passVerify ends the task's verification with a pass and an inspection.
func passVerify(b *testBundle, id string, ins *Inspection) {
	b.t.Helper()
	t := b.task(id)
	_, err := b.c.EndVerify(b.now, VerifyResult{TaskID: id, RunID: t.RunID,
		Steps: []StepRun{{Name: "unit", Command: "go test ./..."}}, Files: []string{"main.go"}, Inspection: ins})
	b.ok(err)
}

func TestAReviewerRejectionIsAFailureWhoseReasonsGoIntoTheNextRetryAndApprovalSucceeds(t *testing.T) {
	t.Parallel()
	b := reviewBundle(t, DonePolicy{})
	tk := submit(b, TaskSpec{Description: "Fix Add so that Add handles negatives", AcceptanceCriteria: []string{"Add handles negatives"}})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, &Inspection{Files: []FileState{{Path: "main.go", Status: "modified", LinesChanged: 3}}, Diff: "--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-x\n+y\n"})
	got := b.task(tk.ID)
	if got.State != Running || got.Phase != Reviewing || got.Review == nil || got.Milestone != MilestoneReviewing {
		t.Fatalf("after the verification passed: %s/%s %+v", got.State, got.Phase, got.Review)
	}
	asked := b.delivered("reviewer")
	if len(asked) != 1 || asked[0].Type != string(TypeReview) || !strings.Contains(asked[0].Body, "Add handles negatives") ||
		!strings.Contains(asked[0].Body, "+y") || !strings.Contains(asked[0].Body, "APPROVED") {
		t.Fatalf("the review request: %+v", asked)
	}
	in := reply(b, "reviewer", asked[0].ID, "REJECTED\n- negatives still return 0\n- no test for them")
	got = b.task(tk.ID)
	if in.Kind != "review" || got.State != AwaitingAck || got.Attempt != 2 || got.TotalVerifyLoops != 1 {
		t.Fatalf("after the rejection (%+v): %s attempt %d loops %d", in, got.State, got.Attempt, got.TotalVerifyLoops)
	}
	f := got.Failures[0]
	if f.FailureType != ArchitectRejected || !strings.Contains(f.ExecutorOutput.Error, "negatives still return 0") || !strings.Contains(f.Details, "no test for them") {
		t.Fatalf("the failure record: %+v", f)
	}
	next := b.delivered("claude")
	if p := next[len(next)-1].Body; !strings.Contains(p, `<retry_context attempt="2"`) || !strings.Contains(p, "architect_rejected") || !strings.Contains(p, "no test for them") {
		t.Fatalf("the retry's prompt does not carry the reviewer's reasons:\n%s", p)
	}
	// Attempt 2: approved.
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, &Inspection{Files: []FileState{{Path: "main.go", Status: "modified", LinesChanged: 5}}})
	asked = b.delivered("reviewer")
	reply(b, "reviewer", asked[len(asked)-1].ID, "**APPROVED** — negatives handled and tested.")
	got = b.task(tk.ID)
	if got.State != Success || got.Summary == nil || !strings.Contains(got.Summary.Text, got.Summary.RunID) || got.Review.Verdict != "APPROVED" {
		t.Fatalf("after the approval: %s %+v %+v", got.State, got.Summary, got.Review)
	}
}

func TestAReviewerThatDoesNotAnswerInTimeEscalatesTheTask(t *testing.T) {
	t.Parallel()
	b := reviewBundle(t, DonePolicy{})
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, nil)
	b.advance(5*time.Minute - time.Second)
	if got := b.task(tk.ID); got.Phase != Reviewing {
		t.Fatalf("before the timeout: %s/%s", got.State, got.Phase)
	}
	b.advance(time.Second)
	got := b.task(tk.ID)
	if got.State != Escalated || !strings.Contains(got.Escalation.Reason, "the reviewer reviewer did not answer within 5m0s") {
		t.Fatalf("after the timeout: %s %+v", got.State, got.Escalation)
	}
	// A late verdict changes nothing.
	asked := b.delivered("reviewer")
	if _, err := b.c.Reply(b.now, ReplyInput{Agent: "reviewer", InReplyTo: asked[0].ID, Text: "APPROVED"}); err == nil {
		if b.task(tk.ID).State != Escalated {
			t.Fatal("a late verdict ended the escalated task")
		}
	}
	b.collect()
}

func TestAnAnswerWithoutAVerdictIsARejectionWithTheAnswer(t *testing.T) {
	t.Parallel()
	b := reviewBundle(t, DonePolicy{})
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, nil)
	// No in_reply_to: the reviewer's only open review is the one answered.
	reply(b, "reviewer", "", "Looks mostly fine but the error message is vague.")
	got := b.task(tk.ID)
	if got.Attempt != 2 || got.Failures[0].FailureType != ArchitectRejected || !strings.Contains(got.Failures[0].Details, "error message is vague") {
		t.Fatalf("%s attempt %d %+v", got.State, got.Attempt, got.Failures)
	}
}

func TestChangedSourceWithoutTestsIsAWarningOrAFailurePerTheDefinitionOfDone(t *testing.T) {
	t.Parallel()
	untested := &Inspection{Files: []FileState{{Path: "calc/calc.go", Status: "modified", LinesChanged: 4}},
		Untested: []string{"calc/calc.go (Go: no _test.go changed in calc)"}}
	// warn (the default): success, the warning in the summary.
	b := taskBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, untested)
	got := b.task(tk.ID)
	if got.State != Success || !strings.Contains(got.Summary.Text, "Warning: new or changed behaviour without tests: calc/calc.go") || len(got.Warnings) != 1 {
		t.Fatalf("warn: %s %+v %v", got.State, got.Summary, got.Warnings)
	}
	// block: a failure that enters the debug loop, naming the file.
	b = taskBundle(t)
	p := DefaultPolicies()
	p.Done.Tests = CheckBlock
	b.ok(b.c.Configure(b.now, p))
	tk = submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, untested)
	got = b.task(tk.ID)
	if got.State != AwaitingAck || got.Attempt != 2 || got.Failures[0].FailureType != ArchitectRejected ||
		!strings.Contains(got.Failures[0].ExecutorOutput.Error, "done criteria unmet") || !strings.Contains(got.Failures[0].SuggestedFix, "calc/calc.go") {
		t.Fatalf("block: %s attempt %d %+v", got.State, got.Attempt, got.Failures)
	}
	// off: nothing.
	b = taskBundle(t)
	p.Done.Tests = CheckOff
	b.ok(b.c.Configure(b.now, p))
	tk = submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, untested)
	if got := b.task(tk.ID); got.State != Success || len(got.Warnings) != 0 {
		t.Fatalf("off: %s %v", got.State, got.Warnings)
	}
}

func TestAChangeLargerThanTheDefinitionOfDoneAllowsAsksTheUserOrTheReviewer(t *testing.T) {
	t.Parallel()
	big := &Inspection{Files: []FileState{{Path: "a.go", LinesChanged: 300}, {Path: "b.go", LinesChanged: 300}}}
	// block without a reviewer: the user is asked.
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Done = DonePolicy{MaxLines: 500, Size: CheckBlock, Tests: CheckOff}
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, big)
	got := b.task(tk.ID)
	if got.State != Escalated || !strings.Contains(got.Escalation.Reason, "2 files and 600 lines changed (done.max_files 0, done.max_lines 500)") {
		t.Fatalf("block, no reviewer: %s %+v", got.State, got.Escalation)
	}
	// block with a reviewer: the reviewer is asked, told of the size.
	b = reviewBundle(t, DonePolicy{MaxFiles: 1, Size: CheckBlock, Tests: CheckOff})
	tk = submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, big)
	asked := b.delivered("reviewer")
	if got := b.task(tk.ID); got.Phase != Reviewing || len(asked) != 1 || !strings.Contains(asked[0].Body, "larger than the definition of done allows") {
		t.Fatalf("block, reviewer: %s/%s %+v", got.State, got.Phase, asked)
	}
	// warn: success with the warning.
	b = taskBundle(t)
	p.Done.Size = CheckWarn
	b.ok(b.c.Configure(b.now, p))
	tk = submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, big)
	if got := b.task(tk.ID); got.State != Success || !strings.Contains(got.Summary.Text, "Warning: the change is larger") {
		t.Fatalf("warn: %s %+v", got.State, got.Summary)
	}
}

func TestCancellingATaskUnderReviewCancelsTheReview(t *testing.T) {
	t.Parallel()
	b := reviewBundle(t, DonePolicy{})
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, nil)
	asked := b.delivered("reviewer")
	_, _, err := b.c.CancelTask(b.now, tk.ID)
	b.ok(err)
	if d := b.delivery(asked[0].ID); d.State != Cancelled {
		t.Fatalf("the review: %s", d.State)
	}
}
