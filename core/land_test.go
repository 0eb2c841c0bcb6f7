package core

import (
	"slices"
	"strings"
	"testing"
)

// landBundle is a core whose tasks land as commits on main.
func landBundle(t *testing.T) *testBundle {
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Land = LandPolicy{To: "main", How: LandCommit}
	b.ok(b.c.Configure(b.now, p))
	return b
}

// landsAsked are the LandTask effects the core asked for so far.
func (b *testBundle) landsAsked() []LandTask {
	var out []LandTask
	for _, e := range b.effects {
		if l, ok := e.(LandTask); ok {
			out = append(out, l)
		}
	}
	return out
}

// toLanding runs a task's first attempt to a passed verification.
func toLanding(b *testBundle, id string) {
	b.t.Helper()
	ackTask(b, id)
	endTurn(b, id, 0)
	verify(b, id, true)
}

func TestAVerifiedTaskThatLandsAsACommitAsksForItOnceUntilItsEndIsRecorded(t *testing.T) {
	t.Parallel()
	b := landBundle(t)
	tk := submit(b, TaskSpec{Description: "Fix the login timeout\n\nIt is 6s; make it 60s."})
	if tk.Land != LandCommit {
		t.Fatalf("the task lands %q, want the configuration's commit", tk.Land)
	}
	toLanding(b, tk.ID)
	got := b.task(tk.ID)
	if got.State != Running || got.Phase != Landing || got.Milestone != MilestoneLanding || got.Summary != nil {
		t.Fatalf("after the verdict the task is %s/%s %q (summary %v): it waits for its commit", got.State, got.Phase, got.Milestone, got.Summary)
	}
	want := LandTask{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Attempt: 1, Agent: "claude", Branch: "main",
		Description: tk.Description, Why: "did it", Command: "go test ./..."}
	if asked := b.landsAsked(); len(asked) != 1 || asked[0] != want {
		t.Fatalf("LandTask asked: %#v\nwant once %#v", asked, want)
	}
	// The queue is held: the next task waits for the commit.
	next := submit(b, TaskSpec{Description: "next"})
	if b.task(next.ID).State != Queued {
		t.Fatalf("a task started while another's change was being committed")
	}

	// A restart before its end is recorded asks for it again.
	b.c.RecoverTasks(b.now)
	b.collect()
	if asked := b.landsAsked(); len(asked) != 2 || asked[1] != want {
		t.Fatalf("after a restart: %#v", asked)
	}

	const commit = "0123456789abcdef0123456789abcdef01234567"
	if _, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: want.RunID, Commit: commit, Branch: "main", Files: []string{"main.go"}}); err != nil {
		t.Fatal(err)
	}
	b.collect()
	got = b.task(tk.ID)
	if got.State != Success || got.LandedCommit != commit || got.Summary == nil ||
		!strings.Contains(got.Summary.Text, "Landed as 0123456 on main.") || !strings.Contains(got.Milestone, "landed as 0123456 on main") {
		t.Fatalf("after the commit: %s %q %+v %q", got.State, got.LandedCommit, got.Summary, got.Milestone)
	}
	if b.task(next.ID).State == Queued {
		t.Fatal("the next task did not start once the change landed")
	}
	if n := len(b.eventsOf(TypeTaskLanded)); n != 1 {
		t.Fatalf("%d task.landed events", n)
	}
	// Recorded: a restart asks for nothing more, and a second report (the
	// effect performed again) records nothing.
	b.c.RecoverTasks(b.now)
	b.collect()
	if asked := b.landsAsked(); len(asked) != 2 {
		t.Fatalf("asked again after its end was recorded: %#v", asked)
	}
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: want.RunID, Commit: commit})
	b.refused(err, Conflict)
	if s := b.c.RetrySummary("all", nil); s.Landed != 1 || !strings.Contains(s.Text, "| Landed as commits | 1 |") {
		t.Fatalf("the summary counts %d landed: %s", s.Landed, s.Text)
	}
}

func TestATaskThatLandsAsNothingSucceedsAtItsVerdict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		policy string
		spec   string
	}{{"the default", "", ""}, {"land none in the configuration", LandNone, ""}, {"land none for the task", LandCommit, LandNone}} {
		b := taskBundle(t)
		p := DefaultPolicies()
		p.Land = LandPolicy{To: "main", How: c.policy}
		b.ok(b.c.Configure(b.now, p))
		tk := submit(b, TaskSpec{Description: "x", Land: c.spec})
		toLanding(b, tk.ID)
		got := b.task(tk.ID)
		if got.State != Success || got.Land != LandNone || len(b.landsAsked()) != 0 || strings.Contains(got.Summary.Text, "Landed") || got.LandedCommit != "" {
			t.Fatalf("%s: %s land %q, asked %v:\n%s", c.name, got.State, got.Land, b.landsAsked(), got.Summary.Text)
		}
	}
}

func TestAWayToLandThisVersionDoesNotRunIsRefused(t *testing.T) {
	t.Parallel()
	b := landBundle(t)
	for _, how := range []string{LandMerge, LandRebase, LandSquash, LandPR} {
		_, err := b.c.SubmitTask(b.now, TaskSpec{Description: "x", Land: how})
		b.refused(err, Invalid)
		if !strings.Contains(err.Error(), "land: "+how+" needs each task in a worktree of its own (parallel > 1)") {
			t.Fatalf("%s: %v", how, err)
		}
	}
	_, err := b.c.SubmitTask(b.now, TaskSpec{Description: "x", Land: "fast"})
	b.refused(err, Invalid)
	if !strings.Contains(err.Error(), `must be one of merge, rebase, squash, commit, none, pr, got "fast"`) {
		t.Fatal(err)
	}
	_, err = b.c.SubmitPlan(b.now, "p1", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "a"}}, {TaskSpec: TaskSpec{Description: "b", Land: LandSquash}}})
	b.refused(err, Invalid)
	if !strings.HasPrefix(err.Error(), "tasks[1]: land: squash needs") {
		t.Fatal(err)
	}
	p := DefaultPolicies()
	p.Land.How = LandMerge
	if err := p.Validate(); err == nil || !strings.HasPrefix(err.Error(), "land.how: merge needs each task in a worktree of its own") {
		t.Fatalf("policies landing by merge: %v", err)
	}
	p.Land = LandPolicy{Order: "fifo"}
	if err := p.Validate(); err == nil || !strings.HasPrefix(err.Error(), "land.order: must be one of verified, submission") {
		t.Fatalf("land.order fifo: %v", err)
	}
	p.Land = LandPolicy{To: "my branch"}
	if err := p.Validate(); err == nil || !strings.HasPrefix(err.Error(), `land.to: "my branch" is not a branch name`) {
		t.Fatalf("land.to with a blank: %v", err)
	}
}

func TestACommitTaskIsRefusedWhenTheCheckoutIsNotOnTheTargetBranch(t *testing.T) {
	t.Parallel()
	b := landBundle(t)
	on := func(s string) *string { return &s }
	_, err := b.c.SubmitTask(b.now, TaskSpec{Description: "x", Checkout: on("feature/x")})
	b.refused(err, Conflict)
	if !strings.Contains(err.Error(), "the checkout is on branch feature/x, not on main (land.to)") {
		t.Fatal(err)
	}
	_, err = b.c.SubmitTask(b.now, TaskSpec{Description: "x", Checkout: on("")})
	b.refused(err, Conflict)
	if !strings.Contains(err.Error(), "the checkout is on no branch (a detached HEAD), not on main") {
		t.Fatal(err)
	}
	_, err = b.c.SubmitPlan(b.now, "p1", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "a", Checkout: on("dev")}}})
	b.refused(err, Conflict)
	// On the branch, or landing as nothing, it is taken.
	submit(b, TaskSpec{Description: "x", Checkout: on("main")})
	submit(b, TaskSpec{Description: "y", Checkout: on("dev"), Land: LandNone})

	// No target branch at all (a detached HEAD at start, no land.to).
	b = taskBundle(t)
	p := DefaultPolicies()
	p.Land.How = LandCommit
	b.ok(b.c.Configure(b.now, p))
	_, err = b.c.SubmitTask(b.now, TaskSpec{Description: "x", Checkout: on("main")})
	b.refused(err, Conflict)
	if !strings.Contains(err.Error(), "there is no target branch") {
		t.Fatal(err)
	}
}

func TestAGitHookRefusingTheCommitIsAFailureTheAgentRetriesWithTheHooksOutput(t *testing.T) {
	t.Parallel()
	b := landBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	toLanding(b, tk.ID)
	refusal := Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Refused: true, ExitCode: 1, Output: "pre-commit: CHANGELOG is missing\n"}
	if _, err := b.c.Report(b.now, refusal); err != nil {
		t.Fatal(err)
	}
	b.collect()
	got := b.task(tk.ID)
	if got.State != AwaitingAck || got.Attempt != 2 || len(got.Failures) != 1 || got.LandedCommit != "" {
		t.Fatalf("after the refusal: %s attempt %d, failures %+v", got.State, got.Attempt, got.Failures)
	}
	f := got.Failures[0]
	if f.FailureType != VerificationFailed || f.ExecutorOutput.Verification == nil || f.ExecutorOutput.Verification.Command != CommitCommand ||
		!strings.Contains(f.Details, "CHANGELOG is missing") {
		t.Fatalf("the failure: %+v", f)
	}
	if msg := lastDelivered(b, "claude"); msg.TaskAttempt != 2 || !strings.Contains(msg.Body, "CHANGELOG is missing") || !strings.Contains(msg.Body, "<retry_context") {
		t.Fatalf("the retry prompt does not carry the hook's output:\n%s", msg.Body)
	}
	// The second attempt verified, and refused the same way: the agent
	// cannot satisfy the hooks; the user decides.
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, true)
	refusal.RunID = RunID(tk.ID, 2)
	if _, err := b.c.Report(b.now, refusal); err != nil {
		t.Fatal(err)
	}
	b.collect()
	if got := b.task(tk.ID); got.State != Escalated || !strings.Contains(got.Escalation.Reason, "refused the commit of the verified change twice in a row the same way: pre-commit: CHANGELOG is missing") {
		t.Fatalf("after the same refusal again: %s %+v", got.State, got.Escalation)
	}
}

func TestACommitThatCannotBeMadeEscalatesWithNothingCommitted(t *testing.T) {
	t.Parallel()
	b := landBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	toLanding(b, tk.ID)
	if _, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Error: "the checkout is on branch dev, not on main"}); err != nil {
		t.Fatal(err)
	}
	b.collect()
	got := b.task(tk.ID)
	if got.State != Escalated || len(got.Failures) != 0 || !strings.Contains(got.Escalation.Reason, "could not be committed on main: the checkout is on branch dev, not on main. Nothing was committed") {
		t.Fatalf("%s %+v %+v", got.State, got.Escalation, got.Failures)
	}
	// Skipped, the change stays uncommitted and nothing more is asked.
	_, err := b.c.Respond(b.now, tk.ID, RespondSkip, "")
	b.ok(err)
	b.c.RecoverTasks(b.now)
	b.collect()
	if n := len(b.landsAsked()); n != 1 {
		t.Fatalf("LandTask asked %d times", n)
	}
}

func TestRetryingATaskWhoseCommitCouldNotBeMadeCommitsAgainWithNoNewAttempt(t *testing.T) {
	t.Parallel()
	b := landBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	toLanding(b, tk.ID)
	sends := len(b.delivered("claude"))
	if _, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Error: "Unable to create '.git/index.lock': File exists"}); err != nil {
		t.Fatal(err)
	}
	b.collect()
	_, err := b.c.Respond(b.now, tk.ID, RespondRetry, "")
	b.ok(err)
	got := b.task(tk.ID)
	if got.State != Running || got.Phase != Landing || got.Attempt != 1 || len(b.delivered("claude")) != sends {
		t.Fatalf("after retry: %s/%s attempt %d, %d sends (were %d)", got.State, got.Phase, got.Attempt, len(b.delivered("claude")), sends)
	}
	if asked := b.landsAsked(); len(asked) != 2 || asked[1] != asked[0] {
		t.Fatalf("LandTask asked: %#v", asked)
	}
	if _, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Commit: "abcdef0123", Branch: "main", Files: []string{"main.go"}}); err != nil {
		t.Fatal(err)
	}
	b.collect()
	if got := b.task(tk.ID); got.State != Success || got.LandedCommit != "abcdef0123" {
		t.Fatalf("%s %q", got.State, got.LandedCommit)
	}

	// Escalated after the hooks refused twice, a retry is the agent's.
	tk = submit(b, TaskSpec{Description: "y"})
	toLanding(b, tk.ID)
	refusal := Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Refused: true, ExitCode: 1, Output: "no"}
	if _, err := b.c.Report(b.now, refusal); err != nil {
		t.Fatal(err)
	}
	b.collect()
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, true)
	refusal.RunID = RunID(tk.ID, 2)
	if _, err := b.c.Report(b.now, refusal); err != nil {
		t.Fatal(err)
	}
	b.collect()
	_, err = b.c.Respond(b.now, tk.ID, RespondRetry, "")
	b.ok(err)
	if got := b.task(tk.ID); got.Attempt != 3 || got.Phase == Landing {
		t.Fatalf("a retry after the hooks' refusals: attempt %d, phase %s", got.Attempt, got.Phase)
	}
}

func TestFilesChangedBeforeTheTaskBeganAreLeftUncommittedWithAWarning(t *testing.T) {
	t.Parallel()
	b := landBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	toLanding(b, tk.ID)
	if _, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Commit: "feedface00", Branch: "main", Files: []string{"main.go"}, Left: []string{"notes.md"}}); err != nil {
		t.Fatal(err)
	}
	b.collect()
	got := b.task(tk.ID)
	if got.State != Success || !strings.Contains(got.Summary.Text, "Left uncommitted: notes.md") ||
		!slices.ContainsFunc(got.Warnings, func(w string) bool { return strings.HasPrefix(w, "left uncommitted: notes.md (") }) {
		t.Fatalf("%s %q %q", got.State, got.Summary.Text, got.Warnings)
	}
	// Nothing at all to commit: a success that names no commit.
	tk = submit(b, TaskSpec{Description: "y"})
	toLanding(b, tk.ID)
	if _, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Branch: "main", Left: []string{"main.go"}}); err != nil {
		t.Fatal(err)
	}
	b.collect()
	if got := b.task(tk.ID); got.State != Success || got.LandedCommit != "" || !strings.Contains(got.Summary.Text, "Nothing was committed on main") {
		t.Fatalf("%s %q %q", got.State, got.LandedCommit, got.Summary.Text)
	}
}

func TestAResumedTaskLandsAsTheStuckOneDid(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Loop.HardStop, p.Loop.ReplanAfter = 1, 1
	p.Land = LandPolicy{To: "main", How: LandCommit}
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "x", Land: LandNone})
	failAttempt(b, tk.ID)
	if got := b.task(tk.ID); got.State != Stuck {
		t.Fatalf("%s", got.State)
	}
	r, err := b.c.ResumeTask(b.now, tk.ID)
	b.ok(err)
	if r.Land != LandNone {
		t.Fatalf("the resumed task lands %q", r.Land)
	}
}

func TestCheckBranchTakesWhatGitTakes(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"main", "release/1.2", "feature-x", "wilco/T-3", "v1.0"} {
		if err := CheckBranch(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "@", "-x", "a..b", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", `a\b`, "/a", "a/", "a//b", "a.", "a.lock", ".a", "a/.b", "a@{1}", "a\tb"} {
		if err := CheckBranch(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

func TestACommitMadeForATaskCancelledMeanwhileIsRecordedOnIt(t *testing.T) {
	t.Parallel()
	b := landBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	toLanding(b, tk.ID)
	_, _, err := b.c.CancelTask(b.now, tk.ID)
	b.ok(err)
	if _, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Commit: "c0ffee1234", Branch: "main", Files: []string{"main.go"}}); err != nil {
		t.Fatal(err)
	}
	b.collect()
	got := b.task(tk.ID)
	if got.State != TaskCancelled || got.LandedCommit != "c0ffee1234" ||
		!slices.Contains(got.Warnings, "the verified change was committed as c0ffee1 on main before the cancel took effect") {
		t.Fatalf("%s %q %q", got.State, got.LandedCommit, got.Warnings)
	}
	// Reported again (after a restart), nothing more is recorded; a
	// cancelled task whose commit was not made records nothing.
	_, err = b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Commit: "c0ffee1234"})
	b.refused(err, Conflict)
	other := submit(b, TaskSpec{Description: "y"})
	toLanding(b, other.ID)
	_, _, err = b.c.CancelTask(b.now, other.ID)
	b.ok(err)
	_, err = b.c.Report(b.now, Landed{TaskID: other.ID, RunID: RunID(other.ID, 1), Error: "interrupted"})
	b.refused(err, Conflict)
}
