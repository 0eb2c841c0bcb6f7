package core

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// parallelBundle is a core that works n tasks at once, with the agents
// and their instances given (name → instances).
func parallelBundle(t *testing.T, n int, agents map[string]int) *testBundle {
	b := setup(t)
	p := DefaultPolicies()
	p.Parallel = n
	p.Land = LandPolicy{To: "main", How: DefaultLandHow(n), Order: DefaultLandOrder}
	b.ok(b.c.Configure(b.now, p))
	for name, inst := range agents {
		b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: name, Adapter: "exec", Capabilities: []string{"go"}, Instances: inst}))
	}
	return b
}

// prepares are the PrepareWorktree effects asked for so far.
func (b *testBundle) prepares() []PrepareWorktree {
	var out []PrepareWorktree
	for _, e := range b.effects {
		if p, ok := e.(PrepareWorktree); ok {
			out = append(out, p)
		}
	}
	return out
}

// removals are the RemoveWorktree effects asked for so far.
func (b *testBundle) removals() []RemoveWorktree {
	var out []RemoveWorktree
	for _, e := range b.effects {
		if r, ok := e.(RemoveWorktree); ok {
			out = append(out, r)
		}
	}
	return out
}

// prepared reports a task's worktree made from base.
func prepared(b *testBundle, id, base string) {
	b.t.Helper()
	t := b.task(id)
	_, err := b.c.Report(b.now, WorktreePrepared{TaskID: id, Branch: t.Branch, Base: base})
	b.ok(err)
}

func TestParallelOneKeepsTheStrictFIFOInTheCheckout(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 1, map[string]int{"claude": 3})
	first := submit(b, TaskSpec{Description: "one"})
	second := submit(b, TaskSpec{Description: "two"})
	if first.State != AwaitingAck || second.State != Queued || first.Worktree != "" || len(b.prepares()) != 0 {
		t.Fatalf("one at a time: %s %s worktree %q, prepares %v", first.State, second.State, first.Worktree, b.prepares())
	}
}

func TestEachParallelTaskGetsItsWorktreeAndBranchFromTheTarget(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 4, map[string]int{"claude": 4})
	tk := submit(b, TaskSpec{Description: "Fix the login timeout"})
	if tk.Land != LandMerge {
		t.Fatalf("a task worked in parallel lands %q, want merge", tk.Land)
	}
	got := b.task(tk.ID)
	if got.State != Running || got.Phase != Preparing || got.Worktree != ".wilco/worktrees/T-1" || got.Branch != "wilco/T-1" || got.Agent != "claude" {
		t.Fatalf("the task is %s/%s in %q on %q by %q", got.State, got.Phase, got.Worktree, got.Branch, got.Agent)
	}
	want := PrepareWorktree{TaskID: tk.ID, Branch: "wilco/T-1", Dir: ".wilco/worktrees/T-1", From: "main"}
	if ps := b.prepares(); len(ps) != 1 || ps[0] != want {
		t.Fatalf("prepares %#v, want %#v", ps, want)
	}
	if len(b.delivered("claude")) != 0 {
		t.Fatal("the agent was given the task before its worktree was made")
	}
	// A restart before its end is recorded asks again.
	b.c.RecoverTasks(b.now)
	b.collect()
	if ps := b.prepares(); len(ps) != 2 || ps[1] != want {
		t.Fatalf("after a restart: %#v", ps)
	}
	prepared(b, tk.ID, "abc123")
	for _, e := range b.effects {
		if _, ok := e.(RecordBaseline); ok {
			t.Fatal("the checkout's changes were noted for a task that works in its own worktree")
		}
	}
	got = b.task(tk.ID)
	if got.Base != "abc123" || got.State != AwaitingAck || len(b.delivered("claude")) != 1 {
		t.Fatalf("after its worktree: base %q, %s, %d delivered", got.Base, got.State, len(b.delivered("claude")))
	}
	// Recorded once: the effect performed again is refused.
	_, err := b.c.Report(b.now, WorktreePrepared{TaskID: tk.ID, Branch: got.Branch, Base: "abc123"})
	b.refused(err, Conflict)
}

func TestABranchNameIsMadeFromAnyTaskID(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"T-1", "03-01:task-3", "a..b", "x.lock", ".hidden", "v1.2."} {
		if err := CheckBranch(TaskBranch(id)); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if TaskBranch("03-01:task-3") == TaskBranch("03-01-task-3") {
		t.Fatal("two ids give one branch")
	}
}

func TestTheQueueHandsOutUpToParallelTasksOldestFirst(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 3})
	a := submit(b, TaskSpec{Description: "a"})
	c := submit(b, TaskSpec{Description: "c"})
	d := submit(b, TaskSpec{Description: "d"})
	if b.task(a.ID).Phase != Preparing || b.task(c.ID).Phase != Preparing || b.task(d.ID).State != Queued || b.c.Position(d.ID) != 1 {
		t.Fatalf("with parallel 2: %s %s %s", b.task(a.ID).State, b.task(c.ID).State, b.task(d.ID).State)
	}
	// The first to end frees its slot: the oldest queued task starts.
	b.ok(func() error { _, _, err := b.c.CancelTask(b.now, c.ID); return err }())
	if b.task(d.ID).Phase != Preparing {
		t.Fatalf("the queued task did not start when a slot freed: %s", b.task(d.ID).State)
	}
	rm := b.removals()
	if len(rm) != 1 || rm[0] != (RemoveWorktree{TaskID: c.ID, Dir: ".wilco/worktrees/T-2", Branch: "wilco/T-2"}) {
		t.Fatalf("the cancelled task's worktree: %#v", rm)
	}
}

func TestAnAgentWorksAtMostItsInstancesAtOnce(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 4, map[string]int{"claude": 2})
	var ids []string
	for _, d := range []string{"a", "b", "c"} {
		ids = append(ids, submit(b, TaskSpec{Description: d}).ID)
	}
	if b.task(ids[0]).Agent != "claude" || b.task(ids[1]).Agent != "claude" || b.task(ids[2]).State != Queued {
		t.Fatalf("two instances: %s %s %s", b.task(ids[0]).State, b.task(ids[1]).State, b.task(ids[2]).State)
	}
	// A second agent takes the third at once.
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "codex", Adapter: "exec", Capabilities: []string{"go"}}))
	submit(b, TaskSpec{Description: "d"})
	if got := b.task(ids[2]); got.Agent != "codex" || got.Phase != Preparing {
		t.Fatalf("the third task: %s by %q", got.State, got.Agent)
	}
	if got := b.task("T-4"); got.State != Queued {
		t.Fatalf("a fourth task started with every instance held: %s", got.State)
	}
	for _, id := range ids {
		prepared(b, id, "base")
		ackTask(b, id)
	}
	if a, _ := b.c.Agent("claude"); a.Status != Busy {
		t.Fatalf("claude is %s with two tasks", a.Status)
	}
	b.ok(func() error { _, _, err := b.c.CancelTask(b.now, ids[0]); return err }())
	if a, _ := b.c.Agent("claude"); a.Status != Busy {
		t.Fatalf("claude is %s while it still works on %s", a.Status, ids[1])
	}
	if got := b.task("T-4"); got.Agent != "claude" || got.Phase != Preparing {
		t.Fatalf("the freed instance did not take the next task: %s by %q", got.State, got.Agent)
	}
}

func TestAPlanTaskStartsOnceWhatItDependsOnHasEnded(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 4, map[string]int{"claude": 4})
	_, err := b.c.SubmitPlan(b.now, "p1", []PlanTaskSpec{
		{TaskSpec: TaskSpec{Description: "base"}},
		{TaskSpec: TaskSpec{Description: "on base"}, DependsOn: []int{1}},
		{TaskSpec: TaskSpec{Description: "alone"}},
	})
	b.ok(err)
	if b.task("p1:task-1").Phase != Preparing || b.task("p1:task-2").State != Queued || b.task("p1:task-3").Phase != Preparing {
		t.Fatalf("plan: %s %s %s", b.task("p1:task-1").State, b.task("p1:task-2").State, b.task("p1:task-3").State)
	}
	b.ok(func() error { _, _, err := b.c.CancelTask(b.now, "p1:task-1"); return err }())
	got := b.task("p1:task-2")
	if got.Phase != Preparing || !slices.Equal(got.Warnings, []string{"depends on p1:task-1, which ended cancelled"}) {
		t.Fatalf("the dependent task: %s %q", got.State, got.Warnings)
	}
}

func TestAWorktreeThatCannotBeMadeEscalatesAndRetryMakesItAgain(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	tk := submit(b, TaskSpec{Description: "x"})
	_, err := b.c.Report(b.now, WorktreePrepared{TaskID: tk.ID, Branch: "wilco/T-1", Error: "fatal: a branch named 'wilco/T-1' already exists"})
	b.ok(err)
	got := b.task(tk.ID)
	if got.State != Escalated || !strings.Contains(got.Escalation.Reason, "could not be made: fatal: a branch named") {
		t.Fatalf("%s %+v", got.State, got.Escalation)
	}
	_, err = b.c.Respond(b.now, tk.ID, RespondRetry, "")
	b.ok(err)
	if got := b.task(tk.ID); got.Phase != Preparing || len(b.prepares()) != 2 {
		t.Fatalf("retry: %s/%s, %d prepares", got.State, got.Phase, len(b.prepares()))
	}
}

func TestAVerifiedParallelTaskLandsThroughTheQueueOneAtATime(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 3, map[string]int{"claude": 3})
	var ids []string
	for _, d := range []string{"a", "b"} {
		id := submit(b, TaskSpec{Description: d}).ID
		prepared(b, id, "base")
		ids = append(ids, id)
	}
	// The second is verified first: it lands first (land.order verified).
	toLanding(b, ids[1])
	toLanding(b, ids[0])
	asked := b.landsAsked()
	if len(asked) != 1 || asked[0].TaskID != ids[1] || asked[0].Worktree != ".wilco/worktrees/T-2" || asked[0].TaskBranch != "wilco/T-2" || asked[0].How != LandMerge || asked[0].Base != "base" || asked[0].Branch != "main" {
		t.Fatalf("landings asked: %#v", asked)
	}
	if b.c.LandPosition(ids[1]) != 1 || b.c.LandPosition(ids[0]) != 2 || b.task(ids[0]).Milestone != MilestoneLandQueued {
		t.Fatalf("landing queue: %d %d %q", b.c.LandPosition(ids[1]), b.c.LandPosition(ids[0]), b.task(ids[0]).Milestone)
	}
	const c1 = "1111111111111111111111111111111111111111"
	_, err := b.c.Report(b.now, Landed{TaskID: ids[1], RunID: RunID(ids[1], 1), Commit: c1, Branch: "main"})
	b.ok(err)
	if got := b.task(ids[1]); got.State != Success || got.LandedCommit != c1 {
		t.Fatalf("after its landing: %s %q", got.State, got.LandedCommit)
	}
	if rm := b.removals(); len(rm) != 1 || !rm[0].DeleteBranch {
		t.Fatalf("the landed task's worktree and branch: %#v", rm)
	}
	if asked := b.landsAsked(); len(asked) != 2 || asked[1].TaskID != ids[0] {
		t.Fatalf("the next landing did not start: %#v", asked)
	}
	// A restart asks again for the landing under way, not for a waiting one.
	b.c.RecoverTasks(b.now)
	b.collect()
	if asked := b.landsAsked(); len(asked) != 3 || asked[2].TaskID != ids[0] {
		t.Fatalf("after a restart: %#v", asked)
	}
}

func TestALandingInConflictIsAMergeConflictTheAgentResolves(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	tk := submit(b, TaskSpec{Description: "x"})
	prepared(b, tk.ID, "base")
	toLanding(b, tk.ID)
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Branch: "main",
		Conflict: []string{"calc.go"}, Between: []TargetCommit{{Hash: "2222222", Subject: "T-9: make Add variadic"}}})
	b.ok(err)
	got := b.task(tk.ID)
	f := got.Failures[len(got.Failures)-1]
	if f.FailureType != MergeConflict || !strings.Contains(f.Details, "calc.go") || !strings.Contains(f.Details, "2222222 T-9: make Add variadic") {
		t.Fatalf("failure: %+v", f)
	}
	if got.Attempt != 2 || got.State != AwaitingAck || got.Worktree == "" {
		t.Fatalf("after the conflict: attempt %d %s", got.Attempt, got.State)
	}
	if !slices.ContainsFunc(b.eventsOf(TypeTaskState), func(e Event) bool {
		return e.Data.(TaskStateChanged).Milestone == MilestoneConflict
	}) {
		t.Fatal("the retry's milestone does not say the change conflicts")
	}
	if m := lastDelivered(b, "claude"); !strings.Contains(m.Body, "merge_conflict") || !strings.Contains(m.Body, "2222222 T-9") {
		t.Fatalf("the retry's prompt does not name the conflict:\n%s", m.Body)
	}
	if s := b.c.RetrySummary("all", nil); s.Conflicted != 1 || s.IntegrationFailed != 0 || !strings.Contains(s.Text, "| Merge conflicts (tasks) | 1 |") {
		t.Fatalf("the summary counts %d conflicted:\n%s", s.Conflicted, s.Text)
	}
}

func TestACombinationThatFailsIsIntegrationFailedAndTheTargetNeverMoves(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	tk := submit(b, TaskSpec{Description: "x"})
	prepared(b, tk.ID, "base")
	toLanding(b, tk.ID)
	const combined, onto = "cccccccccccccccccccccccccccccccccccccccc", "dddddddddddddddddddddddddddddddddddddddd"
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Branch: "main", Combined: combined, Onto: onto})
	b.ok(err)
	got := b.task(tk.ID)
	if got.State != Running || got.Phase != Landing || got.Integration == nil || got.Integration.RunID != "T-1-a1-land1" {
		t.Fatalf("after the combination: %s/%s %+v", got.State, got.Phase, got.Integration)
	}
	rv := last[RunVerify](b)
	if rv.RunID != "T-1-a1-land1" || rv.Worktree != got.Worktree {
		t.Fatalf("the combination's verification: %+v", rv)
	}
	// A restart asks for its verification again.
	b.c.RecoverTasks(b.now)
	b.collect()
	if again := last[RunVerify](b); again.RunID != rv.RunID {
		t.Fatalf("after a restart: %+v", again)
	}
	step := StepRun{Name: "unit", Command: "go test ./...", ExitCode: 1, Output: failingGoTest}
	v, err := b.c.EndVerify(b.now, VerifyResult{TaskID: tk.ID, RunID: rv.RunID, Steps: []StepRun{step}})
	b.ok(err)
	if v.Passed || v.Failure.FailureType != IntegrationFailed || !strings.Contains(v.Failure.ExecutorOutput.Error, "fails go test ./...") {
		t.Fatalf("verdict: %+v", v.Failure)
	}
	for _, l := range b.landsAsked() {
		if l.Advance != "" {
			t.Fatalf("the target was asked to move to a combination that failed: %+v", l)
		}
	}
	if got := b.task(tk.ID); got.Attempt != 2 || got.Integration != nil || got.State != AwaitingAck {
		t.Fatalf("after the failure: attempt %d %s", got.Attempt, got.State)
	}
	if s := b.c.RetrySummary("all", nil); s.IntegrationFailed != 1 || !strings.Contains(s.Text, "| Integration failures (tasks) | 1 |") {
		t.Fatalf("the summary counts %d integration failures:\n%s", s.IntegrationFailed, s.Text)
	}
}

func TestACombinationThatPassesMovesTheTargetFromWhereItWas(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	tk := submit(b, TaskSpec{Description: "x"})
	prepared(b, tk.ID, "base")
	toLanding(b, tk.ID)
	const combined, onto = "cccccccccccccccccccccccccccccccccccccccc", "dddddddddddddddddddddddddddddddddddddddd"
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Branch: "main", Combined: combined, Onto: onto})
	b.ok(err)
	rv := last[RunVerify](b)
	_, err = b.c.EndVerify(b.now, VerifyResult{TaskID: tk.ID, RunID: rv.RunID, Steps: []StepRun{{Name: "unit", Command: "go test ./...", Output: "ok\n"}}})
	b.ok(err)
	asked := b.landsAsked()
	if l := asked[len(asked)-1]; l.Advance != combined || l.Onto != onto {
		t.Fatalf("the landing asked: %+v", l)
	}
	// The target moved again meanwhile: combined again.
	_, err = b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Branch: "main", Moved: true})
	b.ok(err)
	asked = b.landsAsked()
	if l := asked[len(asked)-1]; l.Advance != "" || b.task(tk.ID).Integration != nil {
		t.Fatalf("after the target moved: %+v", l)
	}
	// Waiting for the user's uncommitted changes is the milestone.
	_, err = b.c.Report(b.now, LandWaiting{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Branch: "main", Files: []string{"calc.go"}})
	b.ok(err)
	if m := b.task(tk.ID).Milestone; !strings.Contains(m, "uncommitted changes in calc.go") {
		t.Fatalf("milestone %q", m)
	}
}

// last is the last effect of type T asked for so far.
func last[T Effect](b *testBundle) T {
	b.t.Helper()
	for i := len(b.effects) - 1; i >= 0; i-- {
		if e, ok := b.effects[i].(T); ok {
			return e
		}
	}
	var zero T
	b.t.Fatalf("no %T was asked for", zero)
	return zero
}

func TestInSubmissionOrderAVerifiedTaskWaitsForTheTasksSubmittedBeforeIt(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 3, map[string]int{"claude": 3})
	p := b.c.Policies()
	p.Land.Order = "submission"
	b.ok(b.c.Configure(b.now, p))
	var ids []string
	for _, d := range []string{"a", "b"} {
		id := submit(b, TaskSpec{Description: d}).ID
		prepared(b, id, "base")
		ids = append(ids, id)
	}
	toLanding(b, ids[1])
	if asked := b.landsAsked(); len(asked) != 0 {
		t.Fatalf("%s landed before %s, submitted first, was verified: %#v", ids[1], ids[0], asked)
	}
	toLanding(b, ids[0])
	asked := b.landsAsked()
	if len(asked) != 1 || asked[0].TaskID != ids[0] || b.c.LandPosition(ids[0]) != 1 || b.c.LandPosition(ids[1]) != 2 {
		t.Fatalf("landings: %#v, positions %d %d", asked, b.c.LandPosition(ids[0]), b.c.LandPosition(ids[1]))
	}
	_, err := b.c.Report(b.now, Landed{TaskID: ids[0], RunID: RunID(ids[0], 1), Commit: "1111111111111111111111111111111111111111", Branch: "main"})
	b.ok(err)
	if asked := b.landsAsked(); len(asked) != 2 || asked[1].TaskID != ids[1] {
		t.Fatalf("the second did not land next: %#v", asked)
	}
}

func TestATaskWorkedInParallelNeedsATargetBranch(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 1})
	p := b.c.Policies()
	p.Land.To = ""
	b.ok(b.c.Configure(b.now, p))
	_, err := b.c.SubmitTask(b.now, TaskSpec{Description: "x"})
	b.refused(err, Conflict)
	if !strings.Contains(err.Error(), "land merge: there is no target branch") {
		t.Fatal(err)
	}
	if _, err := b.c.SubmitTask(b.now, TaskSpec{Description: "x", Land: LandNone}); err != nil {
		t.Fatalf("land none needs no target: %v", err)
	}
	b.collect()
}

func TestATaskThatAsksForItsWorktreeKeepsIt(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	tk := submit(b, TaskSpec{Description: "x", KeepWorktree: true})
	prepared(b, tk.ID, "base")
	_, _, err := b.c.CancelTask(b.now, tk.ID)
	b.ok(err)
	if rm := b.removals(); len(rm) != 1 || !rm[0].Keep || rm[0].DeleteBranch {
		t.Fatalf("a kept worktree was removed: %#v", rm)
	}
}

func TestATaskForABusyAgentWaitsWhileAYoungerOneForAnotherGoesPast(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 3, map[string]int{"claude": 1, "codex": 1})
	first := submit(b, TaskSpec{Description: "a", Agent: "claude"})
	waits := submit(b, TaskSpec{Description: "b", Agent: "claude"})
	past := submit(b, TaskSpec{Description: "c", Agent: "codex"})
	if b.task(first.ID).Phase != Preparing || b.task(waits.ID).State != Queued || b.task(past.ID).Phase != Preparing || b.task(past.ID).Agent != "codex" {
		t.Fatalf("%s %s %s", b.task(first.ID).State, b.task(waits.ID).State, b.task(past.ID).State)
	}
	if b.c.Position(waits.ID) != 1 {
		t.Fatalf("the waiting task is at %d", b.c.Position(waits.ID))
	}
	b.ok(func() error { _, _, err := b.c.CancelTask(b.now, first.ID); return err }())
	if got := b.task(waits.ID); got.Phase != Preparing || got.Agent != "claude" {
		t.Fatalf("once claude is free: %s by %q", got.State, got.Agent)
	}
}

func TestADependentTaskWaitingForAnInstanceIsWarnedOnceWhenItStarts(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 4, map[string]int{"claude": 1, "codex": 2})
	holder := submit(b, TaskSpec{Description: "holds claude", Agent: "claude"})
	_, err := b.c.SubmitPlan(b.now, "p1", []PlanTaskSpec{
		{TaskSpec: TaskSpec{Description: "base", Agent: "codex"}},
		{TaskSpec: TaskSpec{Description: "on base", Agent: "claude"}, DependsOn: []int{1}},
	})
	b.ok(err)
	cancel := func(id string) {
		b.t.Helper()
		_, _, err := b.c.CancelTask(b.now, id)
		b.ok(err)
	}
	// What it depends on ends while claude is busy: it waits, and the
	// queue is looked at again meanwhile.
	cancel("p1:task-1")
	submit(b, TaskSpec{Description: "another", Agent: "codex"})
	if got := b.task("p1:task-2"); got.State != Queued || len(got.Warnings) != 0 {
		t.Fatalf("while claude is busy: %s, warnings %q", got.State, got.Warnings)
	}
	cancel(holder.ID)
	if got := b.task("p1:task-2"); got.Phase != Preparing || !slices.Equal(got.Warnings, []string{"depends on p1:task-1, which ended cancelled"}) {
		t.Fatalf("once it starts: %s, warnings %q", got.State, got.Warnings)
	}
}

func TestAnAppliedDryRunWorksInTheCheckoutAloneWhileTasksAreWorkedInParallel(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 3, map[string]int{"claude": 3})
	dry := submit(b, TaskSpec{Description: "try", DryRun: true})
	if got := b.task(dry.ID); got.Worktree != "" || got.State != AwaitingAck {
		t.Fatalf("a dry run works in its throw-away worktree: %s in %q", got.State, got.Worktree)
	}
	ackTask(b, dry.ID)
	endTurn(b, dry.ID, 0)
	mk := last[MakeProposal](b)
	_, err := b.c.EndProposal(b.now, ProposalResult{TaskID: dry.ID, RunID: mk.RunID, Files: []string{"new.go"}})
	b.ok(err)
	other := submit(b, TaskSpec{Description: "in its worktree"})
	_, err = b.c.ApplyTask(b.now, dry.ID)
	b.ok(err)
	if got := b.task(dry.ID); got.State != Queued {
		t.Fatalf("the diff was applied into the checkout while %s works: %s", other.ID, got.State)
	}
	// Once the task in its worktree ends, the diff is applied; nothing
	// else starts while it is in the checkout.
	_, _, err = b.c.CancelTask(b.now, other.ID)
	b.ok(err)
	if got := b.task(dry.ID); got.State != Running || got.Phase != Verifying {
		t.Fatalf("the diff is not applied once the slots are free: %s/%s", got.State, got.Phase)
	}
	late := submit(b, TaskSpec{Description: "after"})
	if got := b.task(late.ID); got.State != Queued {
		t.Fatalf("a task started while a dry run's diff is in the checkout: %s", got.State)
	}
}

// FuzzTaskBranch: every id a task may have makes a branch name git takes
// and a worktree name that stays in its folder, and two ids never share
// them.
func FuzzTaskBranch(f *testing.F) {
	for _, id := range []string{"T-1", "03-01:task-3", "a..b", "x.lock", ".hidden", "v1.2.", "a%3Ab", "a:b"} {
		f.Add(id, "a-b")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, id := range []string{a, b} {
			if !ValidID(id) {
				return
			}
			if err := CheckBranch(TaskBranch(id)); err != nil {
				t.Fatalf("%q: %v", id, err)
			}
			if n := WorktreeName(id); strings.ContainsAny(n, "/\\\\") || n == "." || n == ".." || strings.HasPrefix(n, ".") {
				t.Fatalf("%q: worktree name %q", id, n)
			}
		}
		if a != b && (TaskBranch(a) == TaskBranch(b) || WorktreeName(a) == WorktreeName(b)) {
			t.Fatalf("%q and %q share %q", a, b, TaskBranch(a))
		}
	})
}

func TestAParallelTasksAgentAndItsScoutWorkInItsWorktree(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "scout-a", Adapter: "exec", Role: RoleScout}))
	tk := submit(b, TaskSpec{Description: "x"})
	prepared(b, tk.ID, "base")
	if m := lastDelivered(b, "claude"); m.Worktree != ".wilco/worktrees/T-1" {
		t.Fatalf("the agent's turn works in %q", m.Worktree)
	}
	ackTask(b, tk.ID)
	_, err := b.c.AskScout(b.now, "claude", "scout-a", "Where is Add defined?")
	b.ok(err)
	if q := lastDelivered(b, "scout-a"); q.Worktree != ".wilco/worktrees/T-1" {
		t.Fatalf("the scout reads %q", q.Worktree)
	}
}

func TestTheReviewerOfAParallelTaskReadsItsWorktree(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2, "reviewer": 1})
	p := b.c.Policies()
	p.Review = ReviewPolicy{Agent: "reviewer", Timeout: 5 * time.Minute}
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "x"})
	prepared(b, tk.ID, "base")
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 0)
	passVerify(b, tk.ID, &Inspection{Files: []FileState{{Path: "main.go", Status: "modified", LinesChanged: 1}}, Diff: "--- a/main.go\n+++ b/main.go\n"})
	if m := lastDelivered(b, "reviewer"); m.Type != string(TypeReview) || m.Worktree != ".wilco/worktrees/T-1" {
		t.Fatalf("the review: %s in %q", m.Type, m.Worktree)
	}
}

func TestATaskWorkedInParallelGoesToATmuxOrAMailboxAgentInItsWorktree(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 3, nil)
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "tui", Adapter: "tmux", Capabilities: []string{"go"}, Instances: 2}))
	b.agent("remote", "mailbox", "go")
	first := submit(b, TaskSpec{Description: "a", Agent: "tui"})
	second := submit(b, TaskSpec{Description: "b", Agent: "tui"})
	third := submit(b, TaskSpec{Description: "c", Agent: "remote"})
	if n := len(b.prepares()); n != 3 {
		t.Fatalf("%d worktrees asked for, want 3 (two instances of tui, one of remote)", n)
	}
	for _, id := range []string{first.ID, second.ID, third.ID} {
		prepared(b, id, "base")
	}
	got := map[string]string{}
	for _, m := range b.delivered("tui") {
		got[m.TaskID] = m.Worktree
	}
	if got[first.ID] != ".wilco/worktrees/"+first.ID || got[second.ID] != ".wilco/worktrees/"+second.ID {
		t.Fatalf("the tmux agent's turns work in %v", got)
	}
	msgs, err := b.c.Cycle(b.now, "remote")
	b.ok(err)
	if len(msgs) != 1 || msgs[0].TaskID != third.ID || msgs[0].Worktree != ".wilco/worktrees/"+third.ID {
		t.Fatalf("the mailbox agent's inbox: %+v", msgs)
	}
	// A dry run still needs an exec agent: its throw-away worktree is made
	// by the exec adapter.
	_, err = b.c.SubmitTask(b.now, TaskSpec{Description: "d", Agent: "tui", DryRun: true})
	b.refused(err, Invalid)
}

// A tmux agent asks a task worked in parallel's permission question in
// the task's own session: the milestone names the command that opens it.
func TestAPermissionQuestionOfATaskWorkedInParallelNamesItsSession(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, nil)
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "tui", Adapter: "tmux", Capabilities: []string{"go"}, Instances: 2}))
	tk := submit(b, TaskSpec{Description: "x"})
	prepared(b, tk.ID, "base")
	ackTask(b, tk.ID)
	b.ok(b.c.NotePermission(b.now, "tui", tk.ID, 1, "Write", "Do you want to create file.txt?", ""))
	if m := b.task(tk.ID).Milestone; !strings.Contains(m, "wilco attach tui --task "+tk.ID) {
		t.Fatalf("milestone %q", m)
	}
}

func TestATaskThatLandsAsNoneIsCountedAsLeftOnItsBranchNotLanded(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	none := submit(b, TaskSpec{Description: "kept on its branch", Land: LandNone})
	merged := submit(b, TaskSpec{Description: "merged"})
	for _, id := range []string{none.ID, merged.ID} {
		prepared(b, id, "base")
		toLanding(b, id)
		got := b.task(id)
		_, err := b.c.Report(b.now, Landed{TaskID: id, RunID: RunID(id, 1), Commit: "1111111111111111111111111111111111111111", Branch: got.Verified.Branch})
		b.ok(err)
		if got := b.task(id); got.State != Success {
			t.Fatalf("%s: %s", id, got.State)
		}
	}
	s := b.c.RetrySummary("all", nil)
	if s.Landed != 1 || s.LeftOnBranch != 1 || !strings.Contains(s.Text, "| Landed as commits | 1 |") || !strings.Contains(s.Text, "| Left on their branch (land none) | 1 |") {
		t.Fatalf("landed %d, left on their branch %d:\n%s", s.Landed, s.LeftOnBranch, s.Text)
	}
}

func TestAMergeConflictNamesTheCommitsThatLandedTheirTasksAndTheFilesInItsMessageAndRetry(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	tk := submit(b, TaskSpec{Description: "x"})
	prepared(b, tk.ID, "base")
	toLanding(b, tk.ID)
	between := []TargetCommit{
		{Hash: "3333333", Subject: "Merge branch 'wilco/T-8' into main"},
		{Hash: "2222222", Subject: "Make Add variadic", Task: "T-8"},
		{Hash: "1111111", Subject: "Rename Sum", Task: "T-7"},
	}
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Branch: "main", Conflict: []string{"calc.go", "sum.go"}, Between: between})
	b.ok(err)
	f := b.task(tk.ID).Failures[0]
	for _, want := range []string{"calc.go, sum.go", "2222222 (task T-8)", "1111111 (task T-7)", "3333333", "main", "wilco/T-1"} {
		if !strings.Contains(f.ExecutorOutput.Error, want) {
			t.Errorf("the failure's message lacks %q: %s", want, f.ExecutorOutput.Error)
		}
	}
	for _, want := range []string{"calc.go\n  sum.go", "3333333 Merge branch 'wilco/T-8' into main\n", "2222222 Make Add variadic (task T-8)\n  1111111 Rename Sum (task T-7)"} {
		if !strings.Contains(f.Details, want) {
			t.Errorf("the failure's details lack %q:\n%s", want, f.Details)
		}
	}
	m := lastDelivered(b, "claude")
	for _, want := range []string{"2222222 Make Add variadic (task T-8)", "1111111 Rename Sum (task T-7)", "2222222 (task T-8)", "calc.go", "sum.go"} {
		if !strings.Contains(m.Body, want) {
			t.Errorf("the retry's prompt lacks %q:\n%s", want, m.Body)
		}
	}
}

func TestAVerifiedTaskLetsGoOfItsSlotAndInstanceWhileItLands(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	var ids []string
	for _, d := range []string{"a", "b", "c"} {
		ids = append(ids, submit(b, TaskSpec{Description: d}).ID)
	}
	prepared(b, ids[0], "base")
	prepared(b, ids[1], "base")
	if n := len(b.prepares()); n != 2 {
		t.Fatalf("%d worktrees asked for with two slots", n)
	}
	toLanding(b, ids[0])
	if got := b.task(ids[0]); got.HoldsSlot() || !got.Released || got.Phase != Landing {
		t.Fatalf("the verified task: released %v, phase %s", got.Released, got.Phase)
	}
	if p := b.prepares(); len(p) != 3 || p[2].TaskID != ids[2] {
		t.Fatalf("the third task did not start while the first lands: %#v", p)
	}
	if h := b.c.Holding(); len(h) != 2 || h[0].ID != ids[1] || h[1].ID != ids[2] {
		t.Fatalf("holding: %v", h)
	}
}

func TestAVerifiedTaskToBeWorkedOnAgainWaitsForAFreeSlotAndGoesFirst(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	var ids []string
	for _, d := range []string{"a", "b", "c", "d"} {
		ids = append(ids, submit(b, TaskSpec{Description: d}).ID)
	}
	prepared(b, ids[0], "base")
	prepared(b, ids[1], "base")
	toLanding(b, ids[0])
	prepared(b, ids[2], "base")
	sent := len(b.delivered("claude"))
	_, err := b.c.Report(b.now, Landed{TaskID: ids[0], RunID: RunID(ids[0], 1), Branch: "main", Conflict: []string{"x.go"}})
	b.ok(err)
	got := b.task(ids[0])
	if got.State != Running || got.Phase != Retrying || got.Milestone != MilestoneWaitingForSlot || got.Resume != "retry" || got.Attempt != 1 {
		t.Fatalf("the conflicted task with no slot free: %s/%s %q resume %q attempt %d", got.State, got.Phase, got.Milestone, got.Resume, got.Attempt)
	}
	if len(b.delivered("claude")) != sent {
		t.Fatal("the conflicted task was sent to its agent with no instance free")
	}
	// The second lands; the conflicted one takes its slot before the
	// queued fourth.
	toLanding(b, ids[1])
	got = b.task(ids[0])
	if got.Attempt != 2 || got.Released || got.Resume != "" || got.State != AwaitingAck {
		t.Fatalf("the conflicted task once a slot is free: attempt %d released %v %s", got.Attempt, got.Released, got.State)
	}
	if m := lastDelivered(b, "claude"); !strings.Contains(m.Body, "merge_conflict") {
		t.Fatalf("its retry:\n%s", m.Body)
	}
	if q := b.task(ids[3]); q.State != Queued {
		t.Fatalf("the fourth went before it: %s", q.State)
	}
}

func TestADelegationOfATaskWorkedInParallelIsReassignedOnlyToAnAgentWithAnInstanceFree(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 3, map[string]int{"claude": 1, "codex": 1})
	one := submit(b, TaskSpec{Description: "one", Agent: "claude"})
	two := submit(b, TaskSpec{Description: "two", Agent: "codex"})
	prepared(b, one.ID, "base")
	prepared(b, two.ID, "base")
	// claude refuses it: codex works on another task with its one
	// instance.
	reply(b, "claude", b.task(one.ID).Delivery, "[ACK] "+one.ID+" - REJECTED\nNote: not my area")
	if got := b.task(one.ID); got.Agent == "codex" {
		t.Fatalf("the refused task went to codex (%s), which has no instance free", got.State)
	}
	if got := len(b.c.Tasks(func(t *Task) bool { return t.State.Holds() && t.Agent == "codex" })); got != 1 {
		t.Fatalf("codex holds %d tasks with one instance", got)
	}
	// An agent with an instance free takes the next refusal.
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "gemini", Adapter: "exec", Capabilities: []string{"go"}}))
	reply(b, "codex", b.task(two.ID).Delivery, "[ACK] "+two.ID+" - REJECTED\nNote: not my area")
	if got := b.task(two.ID); got.Agent != "gemini" || got.State != AwaitingAck {
		t.Fatalf("the second refused task is %s with %q, want awaiting gemini's ack", got.State, got.Agent)
	}
}

func TestAnInstanceFreedByAReassignmentTakesTheQueuedTaskThatAsksForItsAgent(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 3, map[string]int{"claude": 1, "codex": 1})
	one := submit(b, TaskSpec{Description: "one", Agent: "claude"})
	prepared(b, one.ID, "base")
	waiting := submit(b, TaskSpec{Description: "two", Agent: "claude"})
	if got := b.task(waiting.ID); got.State != Queued {
		t.Fatalf("the task for claude's one busy instance is %s", got.State)
	}
	// claude refuses the first: it goes to codex, and claude's instance
	// is free for the task waiting for it.
	reply(b, "claude", b.task(one.ID).Delivery, "[ACK] "+one.ID+" - REJECTED\nNote: not my area")
	if got := b.task(one.ID); got.Agent != "codex" {
		t.Fatalf("the refused task is %s with %q, want codex", got.State, got.Agent)
	}
	if got := b.task(waiting.ID); got.State != Running || got.Phase != Preparing || got.Agent != "claude" {
		t.Fatalf("with claude's instance free, the task waiting for it is %s/%s with %q", got.State, got.Phase, got.Agent)
	}
}

func TestTheNextVerifiedTaskLandsWhenTheLandingBeforeItFails(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"merge_conflict", "integration_failed", "error"} {
		b := parallelBundle(t, 3, map[string]int{"claude": 3})
		first := submit(b, TaskSpec{Description: "first"})
		second := submit(b, TaskSpec{Description: "second"})
		prepared(b, first.ID, "base")
		prepared(b, second.ID, "base")
		toLanding(b, first.ID)
		toLanding(b, second.ID)
		if asked := b.landsAsked(); len(asked) != 1 || asked[0].TaskID != first.ID {
			t.Fatalf("%s: landings asked %#v", how, asked)
		}
		run := RunID(first.ID, 1)
		switch how {
		case "merge_conflict":
			_, err := b.c.Report(b.now, Landed{TaskID: first.ID, RunID: run, Branch: "main", Conflict: []string{"calc.go"}})
			b.ok(err)
		case "integration_failed":
			_, err := b.c.Report(b.now, Landed{TaskID: first.ID, RunID: run, Branch: "main",
				Combined: "cccccccccccccccccccccccccccccccccccccccc", Onto: "dddddddddddddddddddddddddddddddddddddddd"})
			b.ok(err)
			rv := last[RunVerify](b)
			_, err = b.c.EndVerify(b.now, VerifyResult{TaskID: first.ID, RunID: rv.RunID, Steps: []StepRun{{Name: "unit", Command: "go test ./...", ExitCode: 1, Output: failingGoTest}}})
			b.ok(err)
		case "error":
			_, err := b.c.Report(b.now, Landed{TaskID: first.ID, RunID: run, Branch: "main", Error: "cannot lock ref 'refs/heads/main'"})
			b.ok(err)
		}
		if got := b.task(first.ID); got.Phase == Landing && got.State == Running {
			t.Fatalf("%s: the first task still lands: %s/%s", how, got.State, got.Phase)
		}
		asked := b.landsAsked()
		if got := b.task(second.ID); !got.LandStarted || len(asked) != 2 || asked[1].TaskID != second.ID {
			t.Fatalf("%s: the landing before it ended, yet the second waits (landing started %v): %#v", how, got.LandStarted, asked)
		}
	}
}

func TestALandingEscalatedThenRetriedTakesItsTurnToLandAgain(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	tk := submit(b, TaskSpec{Description: "x"})
	prepared(b, tk.ID, "base")
	toLanding(b, tk.ID)
	run := RunID(tk.ID, 1)
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: run, Branch: "main", Error: "cannot lock ref 'refs/heads/main'"})
	b.ok(err)
	if got := b.task(tk.ID); got.State != Escalated {
		t.Fatalf("after the error: %s", got.State)
	}
	_, err = b.c.Respond(b.now, tk.ID, RespondRetry, "")
	b.ok(err)
	got := b.task(tk.ID)
	if got.State != Running || got.Phase != Landing || !got.LandStarted {
		t.Fatalf("after retry: %s/%s, landing started %v", got.State, got.Phase, got.LandStarted)
	}
	asked := b.landsAsked()
	if l := asked[len(asked)-1]; len(asked) != 2 || l.TaskID != tk.ID || l.Worktree == "" {
		t.Fatalf("landings asked: %#v", asked)
	}
	// Its landing's end is taken, and it succeeds.
	const c1 = "1111111111111111111111111111111111111111"
	_, err = b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: run, Commit: c1, Branch: "main"})
	b.ok(err)
	if got := b.task(tk.ID); got.State != Success || got.LandedCommit != c1 {
		t.Fatalf("after its landing: %s %q", got.State, got.LandedCommit)
	}
}

func TestAQueuedTaskStartsAsSoonAsANewAgentOrInstanceIsThere(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 4, map[string]int{"claude": 1})
	one := submit(b, TaskSpec{Description: "one"})
	two := submit(b, TaskSpec{Description: "two"})
	three := submit(b, TaskSpec{Description: "three"})
	if b.task(one.ID).Phase != Preparing || b.task(two.ID).State != Queued {
		t.Fatalf("one instance: %s %s", b.task(one.ID).State, b.task(two.ID).State)
	}
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "codex", Adapter: "exec", Capabilities: []string{"go"}}))
	if got := b.task(two.ID); got.Phase != Preparing || got.Agent != "codex" {
		t.Fatalf("a new agent with an instance free: the oldest queued task is %s with %q", got.State, got.Agent)
	}
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "claude", Adapter: "exec", Capabilities: []string{"go"}, Instances: 2}))
	if got := b.task(three.ID); got.Phase != Preparing || got.Agent != "claude" {
		t.Fatalf("a second instance of claude: the queued task is %s with %q", got.State, got.Agent)
	}
}

func TestLandOrderSubmissionWaitsOnlyForTheTasksSubmittedBefore(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 3, map[string]int{"claude": 3})
	p := b.c.Policies()
	p.Land.Order = "submission"
	b.ok(b.c.Configure(b.now, p))
	// A plan, then a task at the same instant, whose id sorts first.
	_, err := b.c.SubmitPlan(b.now, "P-plan1", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "the plan's step"}}})
	b.ok(err)
	later := submit(b, TaskSpec{ID: "P-2", Description: "submitted after the plan"})
	step := "P-plan1:task-1"
	prepared(b, step, "base")
	prepared(b, later.ID, "base")
	toLanding(b, step)
	if asked := b.landsAsked(); len(asked) != 1 || asked[0].TaskID != step {
		t.Fatalf("the plan's step, submitted first, waits for %s submitted after it: landings asked %#v", later.ID, asked)
	}
}

func TestAPlanTaskWhoseDependencyIsCancelledWhileQueuedStarts(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 4, map[string]int{"claude": 4})
	_, err := b.c.SubmitPlan(b.now, "p1", []PlanTaskSpec{
		{TaskSpec: TaskSpec{Description: "base"}},
		{TaskSpec: TaskSpec{Description: "on base"}, DependsOn: []int{1}},
		{TaskSpec: TaskSpec{Description: "on the second"}, DependsOn: []int{2}},
	})
	b.ok(err)
	if b.task("p1:task-2").State != Queued || b.task("p1:task-3").State != Queued {
		t.Fatalf("plan: %s %s", b.task("p1:task-2").State, b.task("p1:task-3").State)
	}
	// The second is cancelled while queued: nothing is left for the
	// third to wait for.
	_, removed, err := b.c.CancelTask(b.now, "p1:task-2")
	b.ok(err)
	if !removed {
		t.Fatal("the queued task was not removed")
	}
	if got := b.task("p1:task-3"); got.State != Running || got.Phase != Preparing {
		t.Fatalf("the task that depended on the removed one is %s", got.State)
	}
}

func TestAnInstanceFreedWhenARetryGoesToAnotherAgentTakesTheQueuedTaskWaitingForIt(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 3, map[string]int{"claude": 1, "codex": 1})
	one := submit(b, TaskSpec{Description: "one"})
	prepared(b, one.ID, "base")
	if b.task(one.ID).Agent != "claude" {
		t.Fatalf("the first task went to %s", b.task(one.ID).Agent)
	}
	waiting := submit(b, TaskSpec{Description: "two", Agent: "claude"})
	ackTask(b, one.ID)
	// claude stops answering; its attempt fails, and the retry goes to
	// codex: claude's instance is free for the task that asks for it.
	b.ok(b.c.SetAgentStatus(b.now, "claude", Unresponsive, "operator"))
	endTurn(b, one.ID, 1)
	if got := b.task(one.ID); got.Agent != "codex" {
		t.Fatalf("the retry went to %q", got.Agent)
	}
	if got := b.task(waiting.ID); got.State != Running || got.Phase != Preparing {
		t.Fatalf("with claude's instance free, the task waiting for it is %s", got.State)
	}
}

func TestATaskEscalatedAfterItsCombinationFailedIsRetriedNotLanded(t *testing.T) {
	t.Parallel()
	b := parallelBundle(t, 2, map[string]int{"claude": 2})
	tk := submit(b, TaskSpec{Description: "x"})
	prepared(b, tk.ID, "base")
	toLanding(b, tk.ID)
	_, err := b.c.Report(b.now, Landed{TaskID: tk.ID, RunID: RunID(tk.ID, 1), Branch: "main",
		Combined: "cccccccccccccccccccccccccccccccccccccccc", Onto: "dddddddddddddddddddddddddddddddddddddddd"})
	b.ok(err)
	rv := last[RunVerify](b)
	_, err = b.c.EndVerify(b.now, VerifyResult{TaskID: tk.ID, RunID: rv.RunID, Steps: []StepRun{{Name: "unit", Command: "go test ./...", ExitCode: 1, Output: failingGoTest}}})
	b.ok(err)
	// The retry's delegation is refused, and no other agent can take it.
	reply(b, "claude", b.task(tk.ID).Delivery, "[ACK] "+tk.ID+" - REJECTED\nNote: not now")
	if got := b.task(tk.ID); got.State != Escalated || got.Attempt != 2 {
		t.Fatalf("after the refusal: %s, attempt %d", got.State, got.Attempt)
	}
	lands := len(b.landsAsked())
	_, err = b.c.Respond(b.now, tk.ID, RespondRetry, "")
	b.ok(err)
	if got := b.task(tk.ID); len(b.landsAsked()) != lands || got.Phase == Landing || got.Attempt != 3 {
		t.Fatalf("the combination that failed was landed on retry: %s/%s, attempt %d, %d landings asked", got.State, got.Phase, got.Attempt, len(b.landsAsked())-lands)
	}
}
