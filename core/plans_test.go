package core

import (
	"strings"
	"testing"
)

// A plan's task keeps its package as a task submitted alone does: its
// own, else the configuration's.
func TestAPlanTaskKeepsItsPackage(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Package = "svc/a"
	b.ok(b.c.Configure(b.now, p))
	_, err := b.c.SubmitPlan(b.now, "01-01", []PlanTaskSpec{
		{TaskSpec: TaskSpec{Description: "in b", Package: "./svc/b/"}},
		{TaskSpec: TaskSpec{Description: "in the default"}},
	})
	b.ok(err)
	if got := b.task("01-01:task-1").Package; got != "svc/b" {
		t.Errorf("the task that names svc/b keeps %q", got)
	}
	if got := b.task("01-01:task-2").Package; got != "svc/a" {
		t.Errorf("the task that names none keeps %q, want the configuration's svc/a", got)
	}
	b.checkReplay()
}

// A plan whose task names two packages is refused as a task submitted
// alone is, before any of its tasks exists.
func TestAPlanTaskInTwoPackagesIsRefused(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	_, alone := b.c.SubmitTask(b.now, TaskSpec{Description: "both", Package: "svc/a,svc/b"})
	_, err := b.c.SubmitPlan(b.now, "01-01", []PlanTaskSpec{
		{TaskSpec: TaskSpec{Description: "fine", Package: "svc/a"}},
		{TaskSpec: TaskSpec{Description: "both", Package: "svc/a,svc/b"}},
	})
	b.refused(err, Invalid)
	if alone == nil || err.Error() != "tasks[1]: "+alone.Error() || !strings.Contains(err.Error(), "split into tasks, one per package") {
		t.Fatalf("the plan: %v\nalone: %v", err, alone)
	}
	if _, ok := b.c.Plan("01-01"); ok {
		t.Fatal("the refused plan exists")
	}
	if _, ok := b.c.Task("01-01:task-1"); ok {
		t.Fatal("a task of the refused plan exists")
	}
}

// A plan whose task no agent can verify (its probe says it lacks a tool
// the verify steps run) is refused up front, naming the agent and the
// tool, as a task submitted alone is.
func TestAPlanIsRefusedForAToolTheAgentsSideLacks(t *testing.T) {
	t.Parallel()
	b := probeBundle(t)
	b.agent("claude", "exec", "go")
	reply(b, "claude", b.delivered("claude")[0].ID, "os: Linux\ntool go: missing\ntool git: 2.39")
	_, alone := b.c.SubmitTask(b.now, TaskSpec{Description: "x"})
	_, err := b.c.SubmitPlan(b.now, "01-01", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "x"}}})
	b.refused(err, Conflict)
	if alone == nil || err.Error() != "tasks[0]: "+alone.Error() || !strings.Contains(err.Error(), "claude lacks go") {
		t.Fatalf("the plan: %v\nalone: %v", err, alone)
	}
	_, err = b.c.SubmitPlan(b.now, "01-02", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "x", Agent: "claude"}}})
	b.refused(err, Conflict)
	if !strings.Contains(err.Error(), "agent claude lacks go") {
		t.Fatalf("the plan for claude: %v", err)
	}
	if _, ok := b.c.Plan("01-01"); ok {
		t.Fatal("the refused plan exists")
	}
}

// A plan's task whose turn comes when no agent can verify it (the probe
// answered after the plan was submitted) is escalated saying which agent
// lacks which tool, not that a dry run needs an exec agent.
func TestATaskNoAgentCanVerifyIsEscalatedNamingTheTool(t *testing.T) {
	t.Parallel()
	b := probeBundle(t)
	b.agent("claude", "exec", "go")
	probe := b.delivered("claude")[0].ID
	_, err := b.c.SubmitPlan(b.now, "01-01", []PlanTaskSpec{{TaskSpec: TaskSpec{Description: "one"}}, {TaskSpec: TaskSpec{Description: "two"}}})
	b.ok(err)
	reply(b, "claude", probe, "os: Linux\ntool go: missing\ntool git: 2.39")
	_, _, err = b.c.CancelTask(b.now, "01-01:task-1")
	b.ok(err)
	b.collect()
	got := b.task("01-01:task-2")
	if got.State != Escalated || got.Escalation == nil || !strings.Contains(got.Escalation.Reason, "claude lacks go") ||
		strings.Contains(got.Escalation.Reason, "dry run") {
		t.Fatalf("%s: %+v", got.State, got.Escalation)
	}
}

// A dry run with only a mailbox agent is escalated saying so.
func TestADryRunWithoutAnExecAgentIsEscalatedSayingWhy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.agent("m", "mailbox", "go")
	tk := submit(b, TaskSpec{Description: "x", DryRun: true})
	got := b.task(tk.ID)
	if got.State != Escalated || got.Escalation == nil || !strings.Contains(got.Escalation.Reason, "m is a mailbox agent, and a dry run needs an exec agent") {
		t.Fatalf("%s: %+v", got.State, got.Escalation)
	}
}

// A task resumed from a stuck one keeps its package, even when the
// configuration's is another.
func TestAResumedTaskKeepsItsPackage(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Loop.HardStop, p.Package = 1, "svc/a"
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "x", Package: "svc/b"})
	failAttempt(b, tk.ID)
	nt, err := b.c.ResumeTask(b.now, tk.ID)
	b.ok(err)
	if nt.Package != "svc/b" {
		t.Fatalf("the resumed task's package is %q", nt.Package)
	}
}

// A task resumed from a stuck dry run is a dry run too: resuming never
// turns a proposal into changes in the working tree.
func TestAResumedDryRunIsADryRun(t *testing.T) {
	t.Parallel()
	b := taskBundle(t)
	p := DefaultPolicies()
	p.Loop.HardStop = 1
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "x", DryRun: true})
	ackTask(b, tk.ID)
	endTurn(b, tk.ID, 1) // a dry run's turn that failed
	if got := b.task(tk.ID).State; got != Stuck {
		t.Fatalf("the dry run is %s, not stuck", got)
	}
	nt, err := b.c.ResumeTask(b.now, tk.ID)
	b.ok(err)
	if !nt.DryRun {
		t.Fatalf("the resumed task of a dry run is no dry run: %+v", nt)
	}
}
