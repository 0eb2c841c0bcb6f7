package core

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// prBundle is a core that works tasks in parallel and lands them as pull
// requests, merged as merge says.
func prBundle(t *testing.T, merge string) *testBundle {
	b := setup(t)
	p := DefaultPolicies()
	p.Parallel = 2
	p.Land = LandPolicy{To: "main", How: LandPR, Order: DefaultLandOrder, Merge: merge, CITimeout: 30 * time.Minute, Forge: true}
	b.ok(b.c.Configure(b.now, p))
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "claude", Adapter: "exec", Capabilities: []string{"go"}, Instances: 2}))
	return b
}

const prHead1 = "1111111111111111111111111111111111111111"

// toPR takes a task to its pull request #7, opened at head.
func toPR(b *testBundle, id, head string) {
	b.t.Helper()
	toLanding(b, id)
	l := last[LandTask](b)
	if l.TaskID != id || l.How != LandPR || l.TaskBranch != TaskBranch(id) {
		b.t.Fatalf("the landing asked: %#v", l)
	}
	_, err := b.c.Report(b.now, Landed{TaskID: id, RunID: l.RunID, Commit: head, Branch: l.TaskBranch,
		PR: &PROpened{Number: 7, URL: "https://forge.example/o/r/pull/7"}})
	b.ok(err)
}

func observe(b *testBundle, o PRObserved) {
	b.t.Helper()
	if o.State == "" {
		o.State = PROpen
	}
	_, err := b.c.Report(b.now, o)
	b.ok(err)
}

func TestAPullRequestTaskNeedsAForge(t *testing.T) {
	t.Parallel()
	p := DefaultPolicies()
	p.Parallel = 2
	p.Land = LandPolicy{To: "main", How: LandPR}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "forge") {
		t.Fatalf("land.how pr without a forge: %v", err)
	}
	p.Land.Forge, p.Land.Merge = true, "sometimes"
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "land.merge") {
		t.Fatalf("land.merge sometimes: %v", err)
	}
}

func TestAVerifiedTaskOpensAPullRequestAndWaitsForCI(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout"})
	prepared(b, tk.ID, "base")
	toPR(b, tk.ID, prHead1)
	got := b.task(tk.ID)
	if got.State != Running || got.Phase != InPullRequest || got.PR == nil || got.PR.Number != 7 || got.PR.Head != prHead1 {
		t.Fatalf("after the push: %s/%s %+v", got.State, got.Phase, got.PR)
	}
	if want := b.now.Add(30 * time.Minute); !got.PR.CIDeadline.Equal(want) || !b.timers[ciTimerKey(tk.ID)].Equal(want) {
		t.Fatalf("CI deadline %v, timer %v, want %v", got.PR.CIDeadline, b.timers[ciTimerKey(tk.ID)], want)
	}
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: []PRCheck{
		{Name: "build", Status: "completed", Conclusion: "success"}, {Name: "test", Status: "in_progress"}, {Name: "lint", Status: "queued"}}})
	if got := b.task(tk.ID); got.Milestone != "Waiting for CI: 1 of 3 checks" || got.PR.ChecksDone != 1 || got.PR.Checks != 3 {
		t.Fatalf("while CI runs: %q %+v", got.Milestone, got.PR)
	}
	// The same again changes nothing.
	n := len(b.events)
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: []PRCheck{
		{Name: "build", Status: "completed", Conclusion: "success"}, {Name: "test", Status: "in_progress"}, {Name: "lint", Status: "queued"}}})
	if len(b.events) != n {
		t.Fatalf("the same observation again recorded %v", b.events[n:])
	}
}

func TestAFailedCheckIsCIFailedWithTheTailOfItsLogInTheNextPrompt(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout"})
	prepared(b, tk.ID, "base")
	toPR(b, tk.ID, prHead1)
	log := strings.Repeat("noise line\n", 2000) + "--- FAIL: TestLoginTimeout (0.01s)\n    login_test.go:12: timeout 6s, want 60s\n"
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: []PRCheck{
		{Name: "build", Status: "completed", Conclusion: "success"}, {Name: "test", Status: "completed", Conclusion: "failure", Log: log, URL: "https://ci.example/1"}}})
	got := b.task(tk.ID)
	f := got.Failures[len(got.Failures)-1]
	if f.FailureType != CIFailed || !strings.Contains(f.ExecutorOutput.Error, "test (failure)") || !strings.Contains(f.Details, "login_test.go:12: timeout 6s, want 60s") || len(f.Details) > 4000 {
		t.Fatalf("failure: %+v", f)
	}
	if got.Attempt != 2 || got.State != AwaitingAck || got.Worktree == "" {
		t.Fatalf("after the failed check: attempt %d %s worktree %q", got.Attempt, got.State, got.Worktree)
	}
	if !slices.ContainsFunc(b.eventsOf(TypeTaskState), func(e Event) bool {
		return e.Data.(TaskStateChanged).Milestone == MilestoneCIFailed
	}) {
		t.Fatal("the retry's milestone does not say CI failed")
	}
	if m := lastDelivered(b, "claude"); !strings.Contains(m.Body, "ci_failed") || !strings.Contains(m.Body, "login_test.go:12: timeout 6s, want 60s") {
		t.Fatalf("the retry's prompt does not hold the check's log:\n%s", m.Body)
	}
	// The fix is verified and pushed to the same pull request.
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, true)
	const head2 = "2222222222222222222222222222222222222222"
	l := last[LandTask](b)
	if l.TaskID != tk.ID || l.Attempt != 2 || l.How != LandPR || !strings.Contains(l.Body, "attempt 1: ci_failed (run `T-1-a1`): CI failed on pull request #7: test (failure)") {
		t.Fatalf("the second push asked: %#v", l)
	}
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: l.RunID, Commit: head2, Branch: l.TaskBranch, PR: &PROpened{Number: 7}})
	b.ok(err)
	// What the forge shows of the first head is stale.
	n := len(b.failures(tk.ID))
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: []PRCheck{{Name: "test", Status: "completed", Conclusion: "failure"}}})
	if len(b.failures(tk.ID)) != n || b.task(tk.ID).Phase != InPullRequest {
		t.Fatal("an observation of the earlier head was taken for the new one")
	}
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: head2, Checks: []PRCheck{{Name: "test", Status: "completed", Conclusion: "success"}}})
	if got := b.task(tk.ID); !strings.Contains(got.Milestone, "waiting for a review") || !got.PR.CIDeadline.IsZero() {
		t.Fatalf("green, no review: %q deadline %v", got.Milestone, got.PR.CIDeadline)
	}
}

func (b *testBundle) failures(id string) []FailureRecord { return b.task(id).Failures }

func TestAReviewCommentOnALineIsQuotedWithItsFileAndLineInTheNextPrompt(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout"})
	prepared(b, tk.ID, "base")
	toPR(b, tk.ID, prHead1)
	green := []PRCheck{{Name: "test", Status: "completed", Conclusion: "success"}}
	review := PRReview{ID: "41", Author: "alice", State: "COMMENTED", Comments: []PRComment{
		{ID: "901", Author: "alice", Path: "auth/login.go", Line: 12, Body: "Use a named constant, not 60."}}}
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: green, Reviews: []PRReview{review}})
	got := b.task(tk.ID)
	f := got.Failures[len(got.Failures)-1]
	if f.FailureType != ChangesRequested || !strings.Contains(f.Details, "auth/login.go:12 (alice):\n> Use a named constant, not 60.") {
		t.Fatalf("failure: %+v", f)
	}
	if m := lastDelivered(b, "claude"); !strings.Contains(m.Body, "auth/login.go:12") || !strings.Contains(m.Body, "Use a named constant") {
		t.Fatalf("the retry's prompt does not quote the comment:\n%s", m.Body)
	}
	// Pushed again: the review already acted on starts no new attempt.
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, true)
	const head2 = "2222222222222222222222222222222222222222"
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: last[LandTask](b).RunID, Commit: head2, PR: &PROpened{Number: 7}})
	b.ok(err)
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: head2, Checks: green, Reviews: []PRReview{review}})
	if got := b.task(tk.ID); got.Attempt != 2 || got.Phase != InPullRequest {
		t.Fatalf("a review acted on started another attempt: %d %s", got.Attempt, got.Phase)
	}
}

func TestGreenCIAndAnApprovalMergeWhenAutoAndTheMergeEndsTheTaskLanded(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeAuto)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout"})
	prepared(b, tk.ID, "base")
	toPR(b, tk.ID, prHead1)
	green := []PRCheck{{Name: "test", Status: "completed", Conclusion: "success"}, {Name: "lint", Status: "completed", Conclusion: "neutral"}}
	approval := PRReview{ID: "42", Author: "bob", State: "APPROVED"}
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: green, Reviews: []PRReview{approval}})
	m := last[MergePR](b)
	if m.TaskID != tk.ID || m.Number != 7 || m.Head != prHead1 {
		t.Fatalf("merge asked: %#v", m)
	}
	// Seen again while the merge is under way: asked once.
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: green, Reviews: []PRReview{approval}})
	merges := 0
	for _, e := range b.effects {
		if _, ok := e.(MergePR); ok {
			merges++
		}
	}
	if merges != 1 {
		t.Fatalf("merge asked %d times", merges)
	}
	const merged = "3333333333333333333333333333333333333333"
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, State: PRMerged, MergeCommit: merged})
	got := b.task(tk.ID)
	if got.State != Success || got.LandedCommit != merged || !strings.Contains(got.Milestone, "landed as 3333333 on main") {
		t.Fatalf("after the merge: %s %q %q", got.State, got.LandedCommit, got.Milestone)
	}
}

// A task's pull request merged after a failed check holds both attempts'
// changes: the task's summary names the files the pull request changed,
// not only the last attempt's.
func TestAMergedPullRequestsSummaryNamesEveryFileItChanged(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeAuto)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout"})
	prepared(b, tk.ID, "base")
	toLanding(b, tk.ID)
	l := last[LandTask](b)
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: l.RunID, Commit: prHead1, Branch: l.TaskBranch, Files: []string{"main.go"}, PR: &PROpened{Number: 7}})
	b.ok(err)
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: []PRCheck{{Name: "test", Status: "completed", Conclusion: "failure", Log: "main_test.go:9: no test of the timeout"}}})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	_, err = b.c.EndVerify(b.now, VerifyResult{TaskID: tk.ID, RunID: b.task(tk.ID).RunID,
		Steps: []StepRun{{Name: "unit", Command: "go test ./...", Output: "ok\n"}}, Files: []string{"main_test.go"}})
	b.ok(err)
	const head2 = "2222222222222222222222222222222222222222"
	l = last[LandTask](b)
	_, err = b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: l.RunID, Commit: head2, Branch: l.TaskBranch, Files: []string{"main.go", "main_test.go"}, PR: &PROpened{Number: 7}})
	b.ok(err)
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: head2, Checks: []PRCheck{{Name: "test", Status: "completed", Conclusion: "success"}},
		Reviews: []PRReview{{ID: "42", Author: "bob", State: "APPROVED"}}})
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: head2, State: PRMerged, MergeCommit: "3333333333333333333333333333333333333333"})
	got := b.task(tk.ID)
	if got.State != Success || got.Summary == nil || !slices.Equal(got.Summary.Files, []string{"main.go", "main_test.go"}) ||
		!strings.Contains(got.Summary.Text, "- main.go\n- main_test.go\n") {
		t.Fatalf("after the merge: %s, summary %+v", got.State, got.Summary)
	}
	landed := b.eventsOf(TypeTaskLanded)
	if len(landed) != 1 || !slices.Equal(landed[0].Data.(TaskLanded).Files, []string{"main.go", "main_test.go"}) {
		t.Fatalf("the landing recorded: %+v", landed)
	}
}

func TestGreenCIAndAnApprovalSayReadyWhenManual(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout"})
	prepared(b, tk.ID, "base")
	toPR(b, tk.ID, prHead1)
	green := []PRCheck{{Name: "test", Status: "completed", Conclusion: "success"}}
	// bob first asked for changes, then approved: his last word counts.
	reviews := []PRReview{{ID: "1", Author: "bob", State: "APPROVED"}}
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: green, Reviews: reviews})
	got := b.task(tk.ID)
	if !got.PR.Ready || !strings.HasPrefix(got.Milestone, "Ready to merge: pull request #7") {
		t.Fatalf("ready: %v %q", got.PR.Ready, got.Milestone)
	}
	for _, e := range b.effects {
		if _, ok := e.(MergePR); ok {
			t.Fatal("merged though land.merge is manual")
		}
	}
	if len(b.eventsOf(TypeTaskPRReady)) != 1 {
		t.Fatal("ready not recorded once")
	}
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: green, Reviews: reviews})
	if len(b.eventsOf(TypeTaskPRReady)) != 1 {
		t.Fatal("ready recorded again")
	}
}

func TestApprovedNeedsEveryReviewersLastWordNotChangesRequested(t *testing.T) {
	t.Parallel()
	cases := []struct {
		reviews []PRReview
		want    bool
	}{
		{nil, false},
		{[]PRReview{{Author: "a", State: "COMMENTED"}}, false},
		{[]PRReview{{Author: "a", State: "APPROVED"}}, true},
		{[]PRReview{{Author: "a", State: "CHANGES_REQUESTED"}, {Author: "a", State: "APPROVED"}}, true},
		{[]PRReview{{Author: "a", State: "APPROVED"}, {Author: "b", State: "CHANGES_REQUESTED"}}, false},
		{[]PRReview{{Author: "a", State: "APPROVED"}, {Author: "a", State: "COMMENTED"}}, true},
	}
	for i, c := range cases {
		if got := approved(c.reviews); got != c.want {
			t.Errorf("case %d: approved %v, want %v", i, got, c.want)
		}
	}
}

func TestAPullRequestClosedUnmergedCancelsTheTaskSayingWhoClosedIt(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout"})
	prepared(b, tk.ID, "base")
	toPR(b, tk.ID, prHead1)
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, State: PRClosed, ClosedBy: "carol"})
	got := b.task(tk.ID)
	if got.State != TaskCancelled || !strings.Contains(got.Milestone, "closed unmerged by carol") {
		t.Fatalf("after the close: %s %q", got.State, got.Milestone)
	}
	if rm := b.removals(); len(rm) != 1 || rm[0].TaskID != tk.ID {
		t.Fatalf("its worktree: %#v", rm)
	}
}

func TestCIThatDoesNotFinishInCITimeoutEscalates(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout"})
	prepared(b, tk.ID, "base")
	toPR(b, tk.ID, prHead1)
	observe(b, PRObserved{TaskID: tk.ID, Number: 7, Head: prHead1, Checks: []PRCheck{
		{Name: "build", Status: "completed", Conclusion: "success"}, {Name: "e2e", Status: "in_progress"}}})
	b.advance(29 * time.Minute)
	if got := b.task(tk.ID); got.State != Running {
		t.Fatalf("escalated before the deadline: %s", got.State)
	}
	b.advance(time.Minute)
	got := b.task(tk.ID)
	if got.State != Escalated || !strings.Contains(got.Escalation.Reason, "CI did not finish within 30m0s on pull request #7 (1 of 2 checks ended)") {
		t.Fatalf("after the deadline: %s %+v", got.State, got.Escalation)
	}
	// Timers of the state after a restart: none left armed.
	for _, tm := range b.c.Timers() {
		if tm.Key == ciTimerKey(tk.ID) {
			t.Fatal("the CI deadline is still armed after it escalated")
		}
	}
}

func TestTheCIDeadlineIsArmedAgainAfterARestart(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout"})
	prepared(b, tk.ID, "base")
	toPR(b, tk.ID, prHead1)
	found := false
	b.c.EachTimer(func(key string, at time.Time) {
		found = found || key == ciTimerKey(tk.ID) && at.Equal(b.task(tk.ID).PR.CIDeadline)
	})
	if !found {
		t.Fatal("the CI deadline is not among the timers a restart arms")
	}
}

func TestThePullRequestCarriesTheTaskItsVerificationAttemptsCostAndIssue(t *testing.T) {
	t.Parallel()
	b := prBundle(t, MergeManual)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout\n\nIt is 6s; make it 60s.", AcceptanceCriteria: []string{"login waits 60s"}, Issue: 12})
	prepared(b, tk.ID, "base")
	reply(b, "claude", b.task(tk.ID).Delivery, "[ACK] "+tk.ID+" - RECEIVED\nUnderstanding: make login wait 60s instead of 6s, so that login waits 60s")
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, true)
	l := last[LandTask](b)
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: l.RunID, Commit: prHead1, Branch: l.TaskBranch, PR: &PROpened{Number: 7}})
	b.ok(err)
	if l.Title != "Fix the login timeout" {
		t.Fatalf("title %q", l.Title)
	}
	for _, want := range []string{"## Task T-1", "It is 6s; make it 60s.", "- login waits 60s", "## How it was verified", "passed in run `T-1-a1`",
		"Verified at the first attempt.", "Fixes #12", "Wilco-Task: T-1", "Wilco-Run: T-1-a1"} {
		if !strings.Contains(l.Body, want) {
			t.Errorf("the body lacks %q:\n%s", want, l.Body)
		}
	}
}

func TestAPullRequestTaskIsNeverCombinedBehindAnotherLanding(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	p := b.c.Policies()
	p.Land.Forge = true
	b.ok(b.c.Configure(b.now, p))
	first := submit(b, TaskSpec{Description: "a"})
	second := submit(b, TaskSpec{Description: "b", Land: LandPR})
	prepared(b, first.ID, "base")
	prepared(b, second.ID, "base")
	toLanding(b, first.ID)
	_, err := b.c.Report(b.now, Landed{TaskID: first.ID, RunID: RunID(first.ID, 1), Combined: "c1", Onto: "t1"})
	b.ok(err)
	toLanding(b, second.ID)
	for _, e := range b.effects {
		if l, ok := e.(LandTask); ok && l.TaskID == second.ID {
			t.Fatalf("the pull request's landing was asked behind the first's: %#v", l)
		}
	}
	if got := b.task(second.ID); got.Milestone != MilestoneLandQueued {
		t.Fatalf("the pull request's task: %q", got.Milestone)
	}
}
