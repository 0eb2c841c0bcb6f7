package sim

import (
	"testing"
)

// TestParallelTasksLandOnceAndOnlyVerified runs seeds that work tasks in
// parallel: slots, instances, worktrees, landings (fast-forwards,
// combinations verified then landed, conflicts, integration failures,
// the target moving underneath) and crashes at any point, a landing's
// too; every rule of tasks worked in parallel is checked after every
// step.
func TestParallelTasksLandOnceAndOnlyVerified(t *testing.T) {
	t.Parallel()
	got := runSeeds(t, 1000, 6, Config{Parallel: 1, Steps: 400, RestartRate: 0.03, FaultRate: 0.03})
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
