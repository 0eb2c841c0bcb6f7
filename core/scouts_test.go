package core

import (
	"strings"
	"testing"
)

func scoutBundle(t *testing.T) *testBundle {
	b := taskBundle(t) // claude: exec, takes tasks
	b.ok(b.c.RegisterAgent(b.now, AgentSpec{Name: "scout-a", Adapter: "exec", Capabilities: []string{"go"}, Role: RoleScout}))
	return b
}

func TestAScoutIsConsultedFromInsideATaskAndItsAnswerGoesBackToTheEditor(t *testing.T) {
	t.Parallel()
	b := scoutBundle(t)
	tk := submit(b, TaskSpec{Description: "Fix Add"})
	if got := b.task(tk.ID); got.Agent != "claude" {
		t.Fatalf("the task went to %s, not to the agent that takes tasks", got.Agent)
	}
	if p := b.delivered("claude")[0].Body; !strings.Contains(p, "## Scouts") || !strings.Contains(p, "scout-a") || !strings.Contains(p, "wilco ask") {
		t.Fatalf("the prompt does not name the scouts:\n%s", p)
	}
	ackTask(b, tk.ID)
	c, err := b.c.AskScout(b.now, "claude", "scout-a", "Where is Add defined?")
	b.ok(err)
	if c.State != ConsultPending || c.TaskID != tk.ID || b.task(tk.ID).Milestone != "Querying Scout scout-a..." {
		t.Fatalf("asked: %+v, milestone %q", c, b.task(tk.ID).Milestone)
	}
	q := b.delivered("scout-a")
	if len(q) != 1 || q[0].Type != string(TypeScoutQuery) || !strings.Contains(q[0].Body, "Where is Add defined?") || !strings.Contains(q[0].Body, "Do not change any file") {
		t.Fatalf("the question: %+v", q)
	}
	in := reply(b, "scout-a", q[0].ID, "In calc/calc.go, line 12.")
	got, _ := b.c.Consultation(c.ID)
	if in.Kind != "scout_answer" || got.State != ConsultAnswered || got.Answer != "In calc/calc.go, line 12." || b.task(tk.ID).Milestone != MilestoneImplementing {
		t.Fatalf("answered: %+v %+v, milestone %q", in, got, b.task(tk.ID).Milestone)
	}
	if cs := b.task(tk.ID).Consultations; len(cs) != 1 || cs[0].Question != "Where is Add defined?" {
		t.Fatalf("the task's detail: %+v", cs)
	}
}

func TestAScoutNeverTakesATaskAndOnlyAnEditorAtWorkAsks(t *testing.T) {
	t.Parallel()
	b := scoutBundle(t)
	if _, err := b.c.AskScout(b.now, "claude", "scout-a", "q"); CodeOf(err) != Conflict {
		t.Fatalf("asked with no task: %v", err)
	}
	b.collect()
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	if _, err := b.c.AskScout(b.now, "claude", "claude", "q"); CodeOf(err) != Invalid {
		t.Fatalf("asked an agent that is not a scout: %v", err)
	}
	b.collect()
	if _, err := b.c.AskScout(b.now, "scout-a", "scout-a", "q"); CodeOf(err) != Conflict {
		t.Fatalf("a scout asked: %v", err)
	}
	b.collect()
}

func TestAScoutThatChangesAFileOrDoesNotAnswerFailsTheQuestion(t *testing.T) {
	t.Parallel()
	b := scoutBundle(t)
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	c, err := b.c.AskScout(b.now, "claude", "scout-a", "q1")
	b.ok(err)
	b.ok(b.c.FailConsultation(b.now, c.ID, "the scout changed files: calc.go (a scout is read-only): its answer is refused"))
	got, _ := b.c.Consultation(c.ID)
	if got.State != ConsultFailed || !strings.Contains(got.Error, "read-only") {
		t.Fatalf("%+v", got)
	}
	c2, err := b.c.AskScout(b.now, "claude", "scout-a", "q2")
	b.ok(err)
	b.advance(DefaultScoutTimeout)
	got, _ = b.c.Consultation(c2.ID)
	if got.State != ConsultFailed || !strings.Contains(got.Error, "did not answer") || b.task(tk.ID).Milestone != MilestoneImplementing {
		t.Fatalf("%+v, milestone %q", got, b.task(tk.ID).Milestone)
	}
}

// A scout's answer is help for the editor, never evidence: the stuck
// report's hypotheses are made from the failures alone.
func TestScoutAnswersAreNeverConsultedForTheStuckReportsHypotheses(t *testing.T) {
	t.Parallel()
	b := scoutBundle(t)
	p := DefaultPolicies()
	p.Loop = LoopPolicy{ReplanAfter: 3, HardStop: 2, MaxReplans: 0}
	b.ok(b.c.Configure(b.now, p))
	tk := submit(b, TaskSpec{Description: "x"})
	ackTask(b, tk.ID)
	c, err := b.c.AskScout(b.now, "claude", "scout-a", "why does it fail?")
	b.ok(err)
	reply(b, "scout-a", c.ID, "SCOUT-THEORY: the cache is stale")
	endTurn(b, tk.ID, 0)
	verify(b, tk.ID, false)
	failAttempt(b, tk.ID)
	got := b.task(tk.ID)
	if got.State != Stuck || got.StuckReport == nil {
		t.Fatalf("%s", got.State)
	}
	for _, h := range got.StuckReport.Hypotheses {
		if strings.Contains(h, "SCOUT-THEORY") {
			t.Fatalf("a scout's answer is a hypothesis: %q", h)
		}
	}
	if strings.Contains(got.StuckReport.Markdown, "SCOUT-THEORY") {
		t.Fatalf("the stuck report quotes a scout:\n%s", got.StuckReport.Markdown)
	}
}
