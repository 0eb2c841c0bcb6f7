package sim

import (
	"strings"
	"testing"

	"wilco/core"
)

// TestParallelTasksLandOnceAndOnlyVerified runs seeds that work tasks in
// parallel: slots, instances, worktrees, landings (fast-forwards,
// combinations verified then landed, conflicts, integration failures,
// the target moving underneath) and crashes at any point, a landing's
// too; every rule of tasks worked in parallel is checked after every
// step.
func TestParallelTasksLandOnceAndOnlyVerified(t *testing.T) {
	t.Parallel()
	got := runSeeds(t, 1003, 3, Config{Parallel: 1, Steps: 300, RestartRate: 0.03, FaultRate: 0.03})
	wantPaths(t, got, TaskPaths...)
}

// TaskPaths are the paths of tasks worked in parallel a run of them must
// reach.
var TaskPaths = []string{
	"tasks.submitted", "tasks.started", "tasks.worktree_made", "tasks.turn_done", "tasks.verify.task.true",
	"tasks.land.fast_forward", "tasks.land.combined", "tasks.verify.combination.true", "tasks.land.advance",
	"tasks.land.conflict", "tasks.failure.merge_conflict", "tasks.agent_merged_target", "tasks.failure.integration_failed",
	"tasks.land.target_moved", "tasks.land.moved", "tasks.landed", "tasks.user_commit", "tasks.worktree_removed",
}

// parallelCore is a core that works n tasks at once with the agents given
// (name → instances), and the tasks submitted, for the tests of the
// rules.
func parallelCore(t *testing.T, n int, agents map[string]int, tasks ...core.TaskSpec) *core.State {
	t.Helper()
	c := core.New()
	p := core.DefaultPolicies()
	p.Parallel = n
	p.Land = core.LandPolicy{To: "main", How: core.LandMerge, Order: core.DefaultLandOrder}
	must(t, c.Configure(Epoch, p))
	for name, inst := range agents {
		must(t, c.RegisterAgent(Epoch, core.AgentSpec{Name: name, Adapter: "exec", Instances: inst}))
	}
	for _, spec := range tasks {
		_, err := c.SubmitTask(Epoch, spec)
		must(t, err)
	}
	c.TakeReady()
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantBroken(t *testing.T, err error, rule string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), rule) {
		t.Fatalf("the rule %q did not catch the violation: %v", rule, err)
	}
}

func TestNoMoreThanParallelTasksHoldSlots(t *testing.T) {
	t.Parallel()
	c := parallelCore(t, 3, map[string]int{"a": 3}, core.TaskSpec{ID: "P-1", Description: "one"}, core.TaskSpec{ID: "P-2", Description: "two"}, core.TaskSpec{ID: "P-3", Description: "three"})
	must(t, checkSlots(c))
	// A state where three hold a slot with parallel 2.
	p := c.Policies()
	p.Parallel = 2
	must(t, c.Configure(Epoch, p))
	wantBroken(t, checkSlots(c), "no more than parallel tasks hold slots")
}

func TestAnAgentInstanceWorksOneTaskAtATime(t *testing.T) {
	t.Parallel()
	c := parallelCore(t, 3, map[string]int{"a": 2}, core.TaskSpec{ID: "P-1", Description: "one"}, core.TaskSpec{ID: "P-2", Description: "two"})
	must(t, checkInstances(c))
	// A state where the agent works two tasks with one instance.
	must(t, c.RegisterAgent(Epoch, core.AgentSpec{Name: "a", Adapter: "exec", Instances: 1}))
	wantBroken(t, checkInstances(c), "an agent instance works one task at a time")
}

func TestTheQueueHandsOutTasksOldestFirst(t *testing.T) {
	t.Parallel()
	c := parallelCore(t, 2, map[string]int{"a": 3},
		core.TaskSpec{ID: "P-1", Description: "one"}, core.TaskSpec{ID: "P-2", Description: "two"},
		core.TaskSpec{ID: "P-3", Description: "three"}, core.TaskSpec{ID: "P-4", Description: "four"})
	must(t, checkSlotsUsed(c))
	// A third slot, and nothing handed out yet: P-3 is first in line.
	p := c.Policies()
	p.Parallel = 3
	must(t, c.Configure(Epoch, p))
	must(t, checkQueueOrder(c, "P-3"))
	wantBroken(t, checkQueueOrder(c, "P-4"), "the queue hands out tasks oldest first")
	wantBroken(t, checkSlotsUsed(c), "the queue hands out tasks oldest first")
	// A task that waits for its own agent's instance lets a younger one
	// go past it.
	c = parallelCore(t, 3, map[string]int{"a": 1, "b": 1},
		core.TaskSpec{ID: "P-1", Description: "one", Agent: "a"}, core.TaskSpec{ID: "P-2", Description: "two", Agent: "a"})
	must(t, checkSlotsUsed(c))
}

func TestTheTargetOnlyHoldsVerifiedCommits(t *testing.T) {
	t.Parallel()
	g := newGitModel()
	tree := copyTree(g.tree(g.target))
	tree["api.go"] = "P-1"
	c := g.commit(tree, g.target)
	g.move(c, "P-1")
	wantBroken(t, checkTargetVerified(g), "the target only holds verified commits")
	g.verified[treeHash(tree)] = true
	must(t, checkTargetVerified(g))
	// A move that is no fast-forward.
	side := g.commit(tree, g.reflog[0].commit)
	g.move(side, "P-2")
	wantBroken(t, checkTargetVerified(g), "is no fast-forward")
}

func TestEveryVerifiedTaskLandsOnceOrEndsOtherwise(t *testing.T) {
	t.Parallel()
	c := parallelCore(t, 2, map[string]int{"a": 2}, core.TaskSpec{ID: "P-1", Description: "one"})
	g := newGitModel()
	tree := copyTree(g.tree(g.target))
	tree["api.go"] = "P-1"
	first := g.commit(tree, g.target)
	// P-1 is preparing its worktree, and it moved the target.
	g.move(first, "P-1")
	wantBroken(t, checkLandsOnce(c, g), "every verified task lands once or ends otherwise")
	tree["api.go"] = "P-1 again"
	g.move(g.commit(tree, first), "P-1")
	wantBroken(t, checkLandsOnce(c, g), "moved the target twice")
	// Nothing makes its worktree: it is lost.
	must(t, checkNoVerifiedTaskLost(c, func(task, kind string) bool { return kind == "prepare" }))
	wantBroken(t, checkNoVerifiedTaskLost(c, func(string, string) bool { return false }), "nothing makes it")
}

// TestTheRulesCatchABrokenWorld runs worlds that break the rules on
// purpose: a combination landed without its verification, landings
// whose end is lost.
func TestTheRulesCatchABrokenWorld(t *testing.T) {
	t.Parallel()
	for brk, rule := range map[string]string{
		"land_unverified": "the target only holds verified commits",
		"lose_landing":    "every verified task lands once or ends otherwise",
	} {
		caught := false
		for seed := uint64(1000); seed < 1010 && !caught; seed++ {
			_, err := Run(Config{Seed: seed, Steps: 300, Dir: t.TempDir(), Parallel: 1, breakWorld: brk})
			if err != nil {
				if !strings.Contains(err.Error(), rule) {
					t.Fatalf("%s: seed %d broke another rule: %v", brk, seed, err)
				}
				caught = true
			}
		}
		if !caught {
			t.Errorf("%s: no seed caught it: %q", brk, rule)
		}
	}
}
